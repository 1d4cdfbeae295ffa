// reg_aladin, NiftyReg 2.0's command line over EvoKernels: reg_aladin's block-matching global
// registration (`reg_deform affine`'s method and defaults, on the GPU when one is usable), its
// outputs as NiftyReg writes them: the affine text (-aff, default outputAffine.txt) and the floating
// image resampled through it with NiftyReg's cubic interpolation and padding (-res, default
// outputResult.nii.gz, in the floating image's datatype). Initialisation as reg_aladin: image centres
// (default), header origins (-nac), the masks' centroids (-comm/-cog) or the images' centres of mass
// (-comi), or -inaff. Options whose NiftyReg behaviour this build does not reproduce (thresholds,
// smoothing, -iso, -speeeeed, -interp other than 1) fail naming the option.
#include <cstdio>
#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <string>

#include "core/affine/affine_init.hpp"
#include "io/affine_text.hpp"
#include "core/compute.hpp"
#include "evk/atomic_file.hpp"
#include "core/field/niftyreg_resample.hpp"
#include "io/nifti_io.hpp"
#include "evk/error.hpp"
#include "nr_cli.hpp"

namespace nr = evk::niftyreg_compat;
namespace rd = evk::reg_deform;

namespace {

nr::Command command() {
  nr::Command c{"reg_aladin", "block-matching global (rigid/affine) registration",
                "-ref <filename> -flo <filename> [OPTIONS]", {}};
  c.options = {
      {{"-ref", "-target", "--ref"}, 1, "Reference image filename (mandatory)", ""},
      {{"-flo", "-source", "--flo"}, 1, "Floating image filename (mandatory)", ""},
      {{"-noSym", "--noSym"}, 0, "The symmetric version of the algorithm is used by default", ""},
      {{"-aff", "--aff"}, 1, "Filename which contains the output affine transformation [outputAffine.txt]", ""},
      {{"-inaff", "--inaff"}, 1, "Filename which contains an input affine transformation [none]", ""},
      {{"-rmask", "-tmask", "--rmask"}, 1, "Filename of a mask image in the reference space", ""},
      {{"-fmask", "-smask", "--fmask"}, 1, "Filename of a mask image in the floating space", ""},
      {{"-res", "-result", "--res"}, 1, "Filename of the resampled image [outputResult.nii.gz]", ""},
      {{"-maxit", "--maxit"}, 1, "Maximal number of iterations of the trimmed least square approach [5]", ""},
      {{"-ln", "--ln"}, 1, "Number of levels to use to generate the pyramids [3]", ""},
      {{"-lp", "--lp"}, 1, "Number of levels to perform [3]", ""},
      {{"-smooR", "-smooT", "--smooR"}, 1, "Standard deviation in mm of the Gaussian kernel smoothing the reference [0] (only 0 in this build)", ""},
      {{"-smooF", "-smooS", "--smooF"}, 1, "Standard deviation in mm of the Gaussian kernel smoothing the floating [0] (only 0 in this build)", ""},
      {{"-refLowThr", "--refLowThr"}, 1, "Lower threshold value applied to the reference image [0]", "intensity thresholds are not implemented"},
      {{"-refUpThr", "--refUpThr"}, 1, "Upper threshold value applied to the reference image [0]", "intensity thresholds are not implemented"},
      {{"-floLowThr", "--floLowThr"}, 1, "Lower threshold value applied to the floating image [0]", "intensity thresholds are not implemented"},
      {{"-floUpThr", "--floUpThr"}, 1, "Upper threshold value applied to the floating image [0]", "intensity thresholds are not implemented"},
      {{"-pad", "--pad"}, 1, "Padding value [nan] (only nan in this build: numbers change the block matching in NiftyReg)", ""},
      {{"-nac", "--nac"}, 0, "Use the nifti header origin to initialise the transformation (image centres by default)", ""},
      {{"-comm", "-cog", "--comm", "--cog"}, 0, "Use the input masks centre of mass to initialise the transformation", ""},
      {{"-comi", "--comi"}, 0, "Use the input images centre of mass to initialise the transformation", ""},
      {{"-rigOnly", "--rigOnly"}, 0, "To perform a rigid registration only (rigid+affine by default)", ""},
      {{"-affDirect", "--affDirect"}, 0, "Directly optimise 12 DoF affine (default: rigid initially then affine)", ""},
      {{"-pv", "-%v", "--pv"}, 1, "Percentage of blocks to use in the optimisation scheme [50]", ""},
      {{"-pi", "-%i", "--pi"}, 1, "Percentage of blocks to consider as inlier in the optimisation scheme [50]", ""},
      {{"-speeeeed", "--speeed"}, 0, "Go faster (every other block)", "block subsampling (-speeeeed) is not implemented"},
      {{"-interp", "--interp"}, 1, "Interpolation order to use to warp the floating image during the registration [1] (only 1 in this build)", ""},
      {{"-iso", "--iso"}, 0, "Make floating and reference images isotropic if required", "isotropic resampling of the inputs (-iso) is not implemented"},
  };
  for (auto& o : nr::common_options()) c.options.push_back(o);
  return c;
}

// The last of the flags in `names` given on the command line (NiftyReg: the last one wins), or "".
std::string last_of(const nr::Parsed& p, std::initializer_list<const char*> names) {
  std::string best;
  int at = -1;
  for (const char* n : names)
    if (p.has(n) && p.position.at(n) > at) at = p.position.at(n), best = n;
  return best;
}

// The world position of a binary mask's centroid (reg_aladin -comm: nonzero voxels, unweighted).
std::array<double, 3> mask_centroid(const rd::Mask& m, const rd::Geometry& g, const std::string& name) {
  rd::Volume v;
  v.geo = g;
  v.data.assign(m.begin(), m.end());
  return rd::centre_of_mass(v, {}, name + ": mask is empty (no nonzero voxel)");
}

void body(const nr::Parsed& p) {
  if (!p.has("-ref") || !p.has("-flo"))
    evk::input_error("-ref/-flo", "the reference and the floating image have both to be defined");
  const nr::Platform pl = nr::platform_of(p);
  // Options accepted with NiftyReg's default only: anything else would change the result.
  if (p.real("-smooR", 0) != 0) evk::input_error("-smooR", "not implemented by this drop-in (only 0)");
  if (p.real("-smooF", 0) != 0) evk::input_error("-smooF", "not implemented by this drop-in (only 0)");
  if (p.has("-interp") && p.integer("-interp", 1) != 1)
    evk::input_error("-interp " + p.str("-interp"), "not implemented by this drop-in (only 1, linear)");
  const double pad = p.real("-pad", std::numeric_limits<double>::quiet_NaN());
  if (pad == pad) evk::input_error("-pad " + p.str("-pad"), "not implemented by this drop-in (only nan, the default)");

  rd::AffineOptions o;
  o.maxit = p.integer("-maxit", 5);
  o.levels = p.integer("-ln", 3);
  o.levels_used = std::min(p.integer("-lp", o.levels), o.levels);  // reg_aladin clamps -lp to -ln
  o.block_percent = p.integer("-pv", 50);
  o.inlier_percent = p.integer("-pi", 50);
  if (o.block_percent < 1 || o.block_percent > 100) evk::input_error("-pv", "expected an integer between 1 and 100");
  if (o.inlier_percent < 1 || o.inlier_percent > 100) evk::input_error("-pi", "expected an integer between 1 and 100");
  const std::string mode = last_of(p, {"-rigOnly", "-affDirect"});
  o.rigid_only = mode == "-rigOnly";
  o.affine_direct = mode == "-affDirect";
  o.symmetric = !p.has("-noSym");
  o.subvoxel = false;  // as reg_aladin: whole-voxel block matches (`reg_deform affine` refines them)
  o.threads = pl.threads;
  rd::check_affine_options(o);

  const std::string aff_out = p.has("-aff") ? p.str("-aff") : "outputAffine.txt";
  const std::string res_out = p.has("-res") ? p.str("-res") : "outputResult.nii.gz";
  const rd::Volume ref = rd::read_volume(p.str("-ref"));
  const rd::StoredVolume flo_stored = rd::read_stored_volume(p.str("-flo"));
  const rd::Volume flo = rd::read_volume(p.str("-flo"));
  const rd::Mask rmask = p.has("-rmask") ? rd::read_mask(p.str("-rmask"), ref.geo) : rd::Mask{};
  // reg_aladin uses the floating mask in its symmetric version only.
  const rd::Mask fmask = p.has("-fmask") && o.symmetric ? rd::read_mask(p.str("-fmask"), flo.geo) : rd::Mask{};
  for (const auto* m : {&rmask, &fmask}) {
    if (m->empty()) continue;
    bool any = false;
    for (auto v : *m) any = any || v;
    if (!any) evk::input_error(m == &rmask ? p.str("-rmask") : p.str("-fmask"), "mask is empty (no nonzero voxel)");
  }

  // Initialisation: -inaff wins; else the last of -nac/-comm/-comi; else the image centres.
  rd::Mat44 init = rd::init_centres(ref.geo, flo.geo);
  std::string init_text = "image centres";
  const std::string how = last_of(p, {"-nac", "-comm", "-comi"});
  if (p.has("-inaff")) {
    init = rd::read_affine(p.str("-inaff"));
    init_text = "-inaff " + p.str("-inaff");
  } else if (how == "-nac") {
    init = rd::Mat44::identity();
    init_text = "header origins";
  } else if (how == "-comm") {
    if (!p.has("-rmask") || !p.has("-fmask"))
      evk::input_error("-comm", "the masks' centre of mass needs both -rmask and -fmask");
    const rd::Mask fm = rd::read_mask(p.str("-fmask"), flo.geo);
    const auto r = mask_centroid(rmask, ref.geo, p.str("-rmask")), f = mask_centroid(fm, flo.geo, p.str("-fmask"));
    init = rd::Mat44::identity();
    for (int k = 0; k < 3; ++k) init.m[k][3] = f[k] - r[k];
    init_text = "masks' centroids";
  } else if (how == "-comi") {
    init = rd::init_centres_of_mass(ref, {}, flo, {});
    init_text = "images' centres of mass";
  }
  { evk::AtomicOutput probe(aff_out); }  // unwritable outputs: fail before computing
  { evk::AtomicOutput probe(res_out); }

  rd::RunOptions run;
  run.backend = pl.backend;
  run.device = pl.device;
  run.threads = pl.threads;
  const rd::Plan plan = rd::plan_backend(run);
  const rd::RunInfo& info = plan.info;
  const rd::AffineResult r = rd::register_affine(
      {.ref = ref, .flo = flo, .rmask = rmask, .fmask = fmask, .init = init, .options = o}, plan);
  rd::write_affine(aff_out, r.affine);
  rd::Volume warped;
  warped.geo = ref.geo;
  warped.data = rd::resample_niftyreg(flo_stored.vol, rd::affine_field(ref.geo, r.affine), 3, static_cast<float>(pad), {},
                                      pl.threads);
  rd::StoredInfo oi = flo_stored.info;
  oi.nifti_version = 1;
  rd::write_stored_volume(res_out, warped, oi, "Warped image using NiftyReg (reg_aladin)");
  if (pl.verbose) {
    const std::string on = info.backend + (info.device.empty() ? "" : " (" + info.device + ")");
    std::printf("[EvoKernels reg_aladin] %s registration on %s, initialised from the %s: %s, %s\n",
                o.rigid_only ? "rigid" : "affine", on.c_str(), init_text.c_str(), aff_out.c_str(), res_out.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) { return nr::run(command(), argc, argv, body); }
