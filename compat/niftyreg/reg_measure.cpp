// reg_measure, NiftyReg 2.0's command line over EvoKernels: the floating image resampled into the
// reference through the headers (identity in world space; NiftyReg's cubic interpolation and NaN
// padding by default), then NMI (NiftyReg's 68-bin Parzen histogram), NCC and/or SSD, each printed
// as NiftyReg prints it ("NMI: 1.11793" on stdout, or "%g" lines in the -out file).
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "core/field/niftyreg_resample.hpp"
#include "io/nifti_io.hpp"
#include "nr_cli.hpp"
#include "core/register/similarity.hpp"

namespace rd = evk::reg_deform;
namespace nr = evk::niftyreg_compat;

namespace {

nr::Command command() {
  nr::Command c{"reg_measure", "similarity of two images, the floating one resampled into the reference space",
                "-ref <filename> -flo <filename> [OPTIONS]", {}};
  c.options = {
      {{"-ref", "-target", "--ref"}, 1, "Filename of the reference image (mandatory)", ""},
      {{"-flo", "-source", "--flo"}, 1, "Filename of the floating image (mandatory)", ""},
      {{"-rmask", "--rmask"}, 1, "Reference mask: only voxels > 0 are measured [none]", ""},
      {{"-fmask", "--fmask"}, 1, "Floating mask (read and ignored by NiftyReg 2.0's reg_measure too)", ""},
      {{"-inter", "--inter"}, 1, "Interpolation order (0, 1, 3, 4) [3]", ""},
      {{"-pad", "--pad"}, 1, "Padding value [NaN: voxels outside the floating image are not measured]", ""},
      {{"-ncc", "--ncc"}, 0, "Returns the NCC value", ""},
      {{"-lncc", "--lncc"}, 0, "Returns the LNCC value", "LNCC is not implemented"},
      {{"-nmi", "--nmi"}, 0, "Returns the NMI value (64 bins are used)", ""},
      {{"-ssd", "--sdd"}, 0, "Returns the SSD value", ""},
      {{"-mind", "--mind"}, 0, "Returns the MIND-SSC value", "MIND is not implemented"},
      {{"-out", "--out"}, 1, "Text file output where to store the value(s) [stdout]", ""},
  };
  for (auto& o : nr::common_options()) c.options.push_back(o);
  return c;
}

void body(const nr::Parsed& p) {
  if (!p.has("-ref") || !p.has("-flo")) evk::input_error("-ref/-flo", "the reference and the floating image have both to be defined");
  const nr::Platform pl = nr::platform_of(p);
  // Values as NiftyReg measures them: stored values converted to float with their scaling.
  const rd::Volume ref = rd::read_volume(p.str("-ref"));
  const rd::Volume flo = rd::read_volume(p.str("-flo"));
  std::vector<std::uint8_t> mask;
  if (p.has("-rmask")) {
    const rd::Volume m = rd::read_volume(p.str("-rmask"));
    if (m.geo.nx != ref.geo.nx || m.geo.ny != ref.geo.ny || m.geo.nz != ref.geo.nz)
      evk::input_error(p.str("-rmask"), "dims differ from the reference's");
    mask.resize(m.data.size());
    for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = m.data[i] > 0;
  }
  if (p.has("-fmask")) (void)rd::read_volume(p.str("-fmask"));  // must be readable; not used (as NiftyReg)
  int inter = p.integer("-inter", 3);
  if (inter != 0 && inter != 1 && inter != 4) inter = 3;
  const float pad = static_cast<float>(p.real("-pad", std::numeric_limits<double>::quiet_NaN()));
  std::FILE* out = nullptr;
  std::unique_ptr<evk::AtomicOutput> file;
  if (p.has("-out")) {
    file = std::make_unique<evk::AtomicOutput>(p.str("-out"));
    out = std::fopen(file->temp_path().c_str(), "w");
    if (!out) evk::input_error(p.str("-out"), "cannot open for writing");
  }
  const rd::Field identity = rd::affine_field(ref.geo, rd::Mat44::identity());
  const std::vector<float> warped = rd::resample_niftyreg(flo, identity, inter, pad, mask, pl.threads);
  auto emit = [&](const char* name, double v) {
    if (out) std::fprintf(out, "%g\n", v);
    else std::printf("%s: %g\n", name, v);
  };
  try {
    // NiftyReg's order: NCC, NMI, SSD. Its NMI rescales both images to [2, 65] in place, so an SSD
    // requested together with -nmi is measured on the rescaled intensities: the same here.
    if (p.has("-ncc")) emit("NCC", rd::ncc_niftyreg(ref.data, warped, mask));
    if (p.has("-nmi")) emit("NMI", rd::nmi_niftyreg(ref.data, warped, mask));
    if (p.has("-ssd")) {
      const rd::NmiOptions nmi;
      const float hi = static_cast<float>(nmi.bins) - 3.f;
      emit("SSD", p.has("-nmi") ? rd::ssd_niftyreg(rd::rescale_niftyreg(ref.data, 2.f, hi),
                                                   rd::rescale_niftyreg(warped, 2.f, hi), mask)
                                : rd::ssd_niftyreg(ref.data, warped, mask));
    }
  } catch (const std::invalid_argument& e) {
    if (out) std::fclose(out);
    evk::input_error(p.str("-flo"), e.what());
  }
  if (out) {
    const bool ok = std::fclose(out) == 0;
    if (!ok) evk::input_error(p.str("-out"), "write failed");
    file->commit();
  }
}

}  // namespace

int main(int argc, char** argv) { return nr::run(command(), argc, argv, body); }
