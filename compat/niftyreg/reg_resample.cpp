// reg_resample, NiftyReg 2.0's command line over EvoKernels: the floating image resampled into the
// reference through an affine text matrix (reg_aladin), a cubic B-spline grid (reg_f3d -cpp; its
// deformation field computed by reg_deform's kernel, on the GPU when one is usable) or a
// deformation/displacement field. NiftyReg's behaviour where it differs from `reg_deform resample`:
// interpolation -inter 3 (default) is cubic convolution, padding enters per kernel tap, the output
// keeps the floating image's datatype (truncated) and scaling, and no -trans means identity.
#include <cstdio>
#include <string>
#include <utility>

#include "core/compute.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "core/field/niftyreg_resample.hpp"
#include "io/affine_text.hpp"
#include "io/nifti_io.hpp"
#include "nr_cli.hpp"

namespace rd = evk::reg_deform;
namespace nr = evk::niftyreg_compat;

namespace {

nr::Command command() {
  nr::Command c{"reg_resample", "resample a floating image into a reference space through a transformation",
                "-ref <filename> -flo <filename> [OPTIONS]", {}};
  c.options = {
      {{"-ref", "-target", "--ref"}, 1, "Filename of the reference image (mandatory)", ""},
      {{"-flo", "-source", "--flo"}, 1, "Filename of the floating image (mandatory)", ""},
      {{"-trans", "--trans", "-aff", "-def", "-cpp"}, 1,
       "Transformation: affine text matrix (reg_aladin), cubic B-spline grid (reg_f3d) or deformation/displacement "
       "field [identity]", ""},
      {{"-res", "-result", "--res"}, 1, "Filename of the resampled image [none]", ""},
      {{"-blank", "--blank"}, 1, "Filename of the resampled blank grid [none]", ""},
      {{"-blankXY", "--blankXY"}, 1, "Resampled blank grid, lines in x and y only", ""},
      {{"-blankYZ", "--blankYZ"}, 1, "Resampled blank grid, lines in y and z only", ""},
      {{"-blankXZ", "--blankXZ"}, 1, "Resampled blank grid, lines in x and z only", ""},
      {{"-inter", "--inter"}, 1, "Interpolation order (0, 1, 3, 4) [3] (0=NN, 1=LIN; 3=CUB, 4=SINC)", ""},
      {{"-NN"}, 0, "Nearest-neighbour interpolation (-inter 0)", ""},
      {{"-LIN", "-TRI"}, 0, "Linear interpolation (-inter 1)", ""},
      {{"-CUB", "-SPL"}, 0, "Cubic interpolation (-inter 3)", ""},
      {{"-SINC"}, 0, "Windowed sinc interpolation (-inter 4)", ""},
      {{"-pad", "--pad"}, 1, "Interpolation padding value [0]", ""},
      {{"-tensor", "--tensor"}, 0, "Tensor (DTI) resampling", "tensor resampling is not implemented"},
      {{"-psf", "--psf"}, 0, "Two-step resampling to a lower resolution",
       "point-spread-function resampling is not implemented"},
      {{"-psf_alg", "--psf_alg"}, 1, "PSF algorithm", "point-spread-function resampling is not implemented"},
  };
  for (auto& o : nr::common_options()) c.options.push_back(o);
  return c;
}

int interpolation(const nr::Parsed& p) {
  // The last of -inter N, -NN, -LIN/-TRI, -CUB/-SPL, -SINC on the command line wins, as in NiftyReg.
  int inter = 3, at = -1;
  const std::pair<const char*, int> flags[] = {{"-inter", -1}, {"-NN", 0}, {"-LIN", 1}, {"-CUB", 3}, {"-SINC", 4}};
  for (const auto& [name, value] : flags) {
    if (!p.has(name) || p.position.at(name) < at) continue;
    at = p.position.at(name);
    inter = value >= 0 ? value : p.integer("-inter", 3);
  }
  if (inter != 0 && inter != 1 && inter != 4) inter = 3;  // NiftyReg: anything else is cubic
  return inter;
}

bool is_image_name(const std::string& n) {
  for (const char* e : {".nii", ".hdr", ".img", ".nrrd", ".png"})
    if (n.find(e) != std::string::npos) return true;
  return false;
}

void body(const nr::Parsed& p) {
  if (!p.has("-ref") || !p.has("-flo")) evk::input_error("-ref/-flo", "the reference and the floating image have both to be defined");
  const nr::Platform pl = nr::platform_of(p);
  const rd::StoredVolume ref = rd::read_stored_volume(p.str("-ref"));
  rd::StoredVolume flo = rd::read_stored_volume(p.str("-flo"));
  const float pad = static_cast<float>(p.real("-pad", 0.0));
  const int inter = interpolation(p);
  std::string blank_out, blank_kind;
  for (const char* b : {"-blank", "-blankXY", "-blankYZ", "-blankXZ"})
    if (p.has(b)) blank_out = p.str(b), blank_kind = b;

  rd::RunOptions run;
  run.backend = pl.backend;
  run.device = pl.device;
  run.threads = pl.threads;
  rd::Field field;
  std::string trans_text = "identity";
  if (!p.has("-trans")) {
    field = rd::affine_field(ref.vol.geo, rd::Mat44::identity());
  } else if (!is_image_name(p.str("-trans"))) {
    field = rd::affine_field(ref.vol.geo, rd::read_affine(p.str("-trans")));
    trans_text = "affine " + p.str("-trans");
  } else {
    rd::Transformation t = rd::read_transformation(p.str("-trans"), ref.vol.geo);
    if (t.kind == rd::TransKind::grid) {
      const rd::Plan plan = rd::plan_run(run, rd::field_request(ref.vol.geo, t.grid));
      const rd::RunInfo& info = plan.info;
      field = rd::compute_field({.ref = ref.vol.geo, .grid = t.grid}, plan).field;
      trans_text = "cubic B-spline grid " + p.str("-trans") + " (field on " + info.backend +
                   (info.device.empty() ? "" : ", " + info.device) + ")";
    } else {
      field = std::move(t.field);
      trans_text = std::string(t.kind == rd::TransKind::displacement ? "displacement" : "deformation") + " field " +
                   p.str("-trans");
    }
  }
  // NaN padding cannot be stored in integer types: NiftyReg then writes float32.
  if (pad != pad) flo.info.datatype = 16;
  if (p.has("-res")) {
    { evk::AtomicOutput probe(p.str("-res")); }
    rd::Volume out;
    out.geo = ref.vol.geo;
    out.data = rd::resample_niftyreg(flo.vol, field, inter, pad, {}, pl.threads);
    rd::StoredInfo oi = flo.info;
    oi.nifti_version = ref.info.nifti_version;
    rd::write_stored_volume(p.str("-res"), out, oi, "Warped image using NiftyReg (reg_resample)");
    if (pl.verbose)
      std::printf("[EvoKernels reg_resample] %s resampled through %s, -inter %d: %s\n", p.str("-flo").c_str(),
                  trans_text.c_str(), inter, p.str("-res").c_str());
  }
  if (!blank_out.empty()) {
    { evk::AtomicOutput probe(blank_out); }
    rd::Volume grid;
    grid.geo = flo.vol.geo;
    grid.data.assign(grid.geo.voxels(), 0.f);
    const bool is3d = ref.vol.geo.nz > 1;
    for (int z = 0; z < grid.geo.nz; ++z)
      for (int y = 0; y < grid.geo.ny; ++y)
        for (int x = 0; x < grid.geo.nx; ++x) {
          const bool lx = x % 10 == 0, ly = y % 10 == 0, lz = z % 10 == 0;
          bool on;
          if (!is3d) on = lx || x == ref.vol.geo.nx - 1 || ly || y == ref.vol.geo.ny - 1;
          else if (blank_kind == "-blankXY") on = lx || ly;
          else if (blank_kind == "-blankYZ") on = ly || lz;
          else if (blank_kind == "-blankXZ") on = lx || lz;
          else on = lx || ly || lz;
          if (on) grid.data[grid.geo.index(x, y, z)] = 255.f;
        }
    rd::Volume out;
    out.geo = ref.vol.geo;
    out.data = rd::resample_niftyreg(grid, field, 1, 0.f, {}, pl.threads);
    rd::StoredInfo gi;
    gi.datatype = 2;  // uint8
    gi.scl_slope = 1;
    gi.cal_max = 255;
    gi.nifti_version = ref.info.nifti_version;
    rd::write_stored_volume(blank_out, out, gi, "Warped regular grid using NiftyReg (reg_resample)");
    if (pl.verbose) std::printf("[EvoKernels reg_resample] resampled grid: %s\n", blank_out.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) { return nr::run(command(), argc, argv, body); }
