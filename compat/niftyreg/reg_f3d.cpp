// reg_f3d, NiftyReg 2.0's command line over EvoKernels: reg_f3d's cubic B-spline registration
// (`reg_deform register`'s method and defaults, on the GPU when one is usable, with the dispatched
// field kernel), its outputs as NiftyReg writes them: the control-point grid (-cpp, default
// outputCPP.nii) and the floating image warped through it with NiftyReg's cubic interpolation
// (-res, default outputResult.nii, in the floating image's datatype). As reg_f3d, no -aff means the
// identity (`reg_deform register` would align the centres of mass). The measure is NMI (64 bins by
// default, --rbn/--fbn equal) or SSD (--ssd); options whose NiftyReg behaviour this build does not
// reproduce fail naming the option.
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

#include "io/affine_text.hpp"
#include "core/compute.hpp"
#include "evk/atomic_file.hpp"
#include "core/field/niftyreg_resample.hpp"
#include "io/nifti_io.hpp"
#include "core/register/reg_jacobian_cpu.hpp"
#include "evk/error.hpp"
#include "nr_cli.hpp"

namespace nr = evk::niftyreg_compat;
namespace rd = evk::reg_deform;

namespace {

nr::Command command() {
  nr::Command c{"reg_f3d", "fast free-form deformation (cubic B-spline) registration",
                "-ref <filename> -flo <filename> [OPTIONS]", {}};
  c.options = {
      {{"-ref", "-target", "--ref"}, 1, "Filename of the reference image (mandatory)", ""},
      {{"-flo", "-source", "--flo"}, 1, "Filename of the floating image (mandatory)", ""},
      {{"-aff", "--aff"}, 1, "Filename which contains an affine transformation (Affine*Reference=Floating)", ""},
      {{"-incpp", "--incpp"}, 1, "Filename of control point grid input", "an input control-point grid (-incpp) is not implemented"},
      {{"-rmask", "-tmask", "--rmask"}, 1, "Filename of a mask image in the reference space", ""},
      {{"-fmask", "-smask", "--fmask", "--smask"}, 1, "Filename of a mask image in the floating space", ""},
      {{"-res", "-result", "--res"}, 1, "Filename of the resampled image [outputResult.nii]", ""},
      {{"-cpp", "--cpp"}, 1, "Filename of control point grid [outputCPP.nii]", ""},
      {{"-sx", "--sx"}, 1, "Final grid spacing along the x axis in mm (in voxel if negative value) [5 voxels]", ""},
      {{"-sy", "--sy"}, 1, "Final grid spacing along the y axis in mm (in voxel if negative value) [sx value] (only the sx value in this build)", ""},
      {{"-sz", "--sz"}, 1, "Final grid spacing along the z axis in mm (in voxel if negative value) [sx value] (only the sx value in this build)", ""},
      {{"-be", "--be"}, 1, "Weight of the bending energy (second derivative of the transformation) penalty term [0.001]", ""},
      {{"-le", "--le"}, 1, "Weight of first order penalty term (symmetric and anti-symmetric part of the Jacobian) [0.01]", ""},
      {{"-jl", "--jl"}, 1, "Weight of log of the Jacobian determinant penalty term [0.0]", ""},
      {{"-noAppJL", "--noAppJL"}, 0, "Do not approximate the log of the Jacobian penalty at control points only", "the exact Jacobian log penalty (-noAppJL) is not implemented"},
      {{"-land", "--land"}, 2, "Use of a set of landmarks which distance should be minimised (weight, file)", "landmarks are not implemented"},
      {{"--nmi"}, 0, "NMI. Used NMI even when one or several other measures are specified", ""},
      {{"--rbn"}, 1, "Number of bin to use for the joint histogram, identical for all time points [64]", ""},
      {{"-rbn", "-tbn"}, 2, "Number of bin to use for the joint histogram, for time point <tp> [64]", ""},
      {{"--fbn"}, 1, "Number of bin to use for the joint histogram, identical for all time points [64]", ""},
      {{"-fbn", "-sbn"}, 2, "Number of bin to use for the joint histogram, for time point <tp> [64]", ""},
      {{"--lncc"}, 1, "Standard deviation of the Gaussian kernel for LNCC, all time points", "LNCC is not implemented"},
      {{"-lncc"}, 2, "Standard deviation of the Gaussian kernel for LNCC, for time point <tp>", "LNCC is not implemented"},
      {{"--ssd"}, 0, "SSD, all time points", ""},
      {{"-ssd"}, 1, "SSD for time point <tp>", ""},
      {{"--ssdn"}, 0, "Normalised SSD, all time points", "normalised SSD is not implemented"},
      {{"-kld", "--kld"}, 0, "KL divergence", "KL divergence is not implemented"},
      {{"--mind"}, 1, "MIND with offset", "MIND is not implemented"},
      {{"--mindssc"}, 1, "MIND-SSC with offset", "MIND-SSC is not implemented"},
      {{"-rr", "--rr"}, 0, "Intensities are thresholded between the 2 and 98% iles", "robust intensity range (-rr) is not implemented"},
      {{"-nmiw"}, 2, "NMI weight for time point <tp>", "per-time-point measure weights are not implemented"},
      {{"-lnccw"}, 2, "LNCC weight for time point <tp>", "LNCC is not implemented"},
      {{"-ssdw"}, 2, "SSD weight for time point <tp>", "per-time-point measure weights are not implemented"},
      {{"-kldw"}, 2, "KLD weight for time point <tp>", "KL divergence is not implemented"},
      {{"-wSim", "--wSim"}, 1, "Weight to apply to the measure of similarity at each voxel position", "voxel-wise similarity weights are not implemented"},
      {{"-rLwTh", "-tLwTh"}, 2, "Lower threshold to apply to the reference image intensities [none], for time point <tp>", "intensity thresholds are not implemented"},
      {{"-rUpTh", "-tUpTh"}, 2, "Upper threshold to apply to the reference image intensities [none], for time point <tp>", "intensity thresholds are not implemented"},
      {{"-fLwTh", "-sLwTh"}, 2, "Lower threshold to apply to the floating image intensities [none], for time point <tp>", "intensity thresholds are not implemented"},
      {{"-fUpTh", "-sUpTh"}, 2, "Upper threshold to apply to the floating image intensities [none], for time point <tp>", "intensity thresholds are not implemented"},
      {{"--rLwTh"}, 1, "Lower threshold to apply to the reference image intensities [none]", "intensity thresholds are not implemented"},
      {{"--rUpTh"}, 1, "Upper threshold to apply to the reference image intensities [none]", "intensity thresholds are not implemented"},
      {{"--fLwTh"}, 1, "Lower threshold to apply to the floating image intensities [none]", "intensity thresholds are not implemented"},
      {{"--fUpTh"}, 1, "Upper threshold to apply to the floating image intensities [none]", "intensity thresholds are not implemented"},
      {{"-smooR", "-smooT", "--smooR"}, 1, "Standard deviation in mm of the Gaussian kernel smoothing the reference [0]", ""},
      {{"-smooF", "-smooS", "--smooF"}, 1, "Standard deviation in mm of the Gaussian kernel smoothing the floating [0]", ""},
      {{"-smoothGrad", "--smoothGrad"}, 1, "Standard deviation in mm of the Gaussian kernel smoothing the gradient [0]", "gradient smoothing is not implemented"},
      {{"-pad", "--pad"}, 1, "Padding value [nan] (only nan in this build: numbers change the measure in NiftyReg)", ""},
      {{"-maxit", "--maxit"}, 1, "Maximal number of iteration at the final level [150]", ""},
      {{"-ln", "--ln"}, 1, "Number of level to perform [3]", ""},
      {{"-lp", "--lp"}, 1, "Only perform the first levels [ln]", ""},
      {{"-nopy", "--nopy"}, 0, "Do not use a pyramidal approach", "registration without a pyramid (-nopy) is not implemented"},
      {{"-noConj", "--noConj"}, 0, "To not use the conjuage gradient optimisation but a simple gradient ascent", "plain gradient ascent (-noConj) is not implemented"},
      {{"-pert", "--pert"}, 1, "To add perturbation step(s) after each optimisation scheme", "perturbation steps are not implemented"},
      {{"-vel", "--vel"}, 0, "Use a velocity field integration to generate the deformation", "velocity-field (diffeomorphic) registration is not implemented"},
      {{"-nogce", "--nogce"}, 0, "Do not use the gradient accumulation through exponentiation", "velocity-field (diffeomorphic) registration is not implemented"},
      {{"-bch", "--bch"}, 1, "Number of BCH update term", "velocity-field (diffeomorphic) registration is not implemented"},
      {{"-ic", "--ic"}, 1, "Weight of the inverse consistency penalty term [0.01]", "inverse consistency (symmetric registration) is not implemented"},
      {{"-nox"}, 0, "Don't optimise in x direction", "per-axis optimisation is not implemented"},
      {{"-noy"}, 0, "Don't optimise in y direction", "per-axis optimisation is not implemented"},
      {{"-noz"}, 0, "Don't optimise in z direction", "per-axis optimisation is not implemented"},
      {{"-nogr"}, 0, "Do not refine the grid between levels", "registration without grid refinement (-nogr) is not implemented"},
      {{"-approxGrad", "--approxGrad"}, 0, "Approximate the gradient using finite differences", "the finite-difference gradient is not implemented"},
      {{"-interp", "--interp"}, 1, "Interpolation order to use internally to warp the floating image [1] (only 1 in this build)", ""},
  };
  for (auto& o : nr::common_options()) c.options.push_back(o);
  return c;
}

// The value of a per-time-point option "<tp> <value>": only time point 0 exists (3-D scalar images).
double time_point_value(const nr::Parsed& p, const char* name) {
  const auto& v = p.values.at(name);
  if (std::atoi(v[0].c_str()) != 0) evk::input_error(std::string(name) + " " + v[0], "time point must be 0 (3-D scalar images)");
  return std::atof(v[1].c_str());
}

void body(const nr::Parsed& p) {
  if (!p.has("-ref") || !p.has("-flo"))
    evk::input_error("-ref/-flo", "the reference and the floating image have both to be defined");
  const nr::Platform pl = nr::platform_of(p);
  rd::RegisterOptions o;
  o.spacing = p.real("-sx", -5);
  for (const char* axis : {"-sy", "-sz"})
    if (p.has(axis) && p.real(axis, o.spacing) != o.spacing)
      evk::input_error(std::string(axis) + " " + p.str(axis), "not implemented by this drop-in (only the -sx value)");
  o.bending = p.real("-be", 0.001);
  o.linear = p.real("-le", 0.01);
  o.jacobian_log = p.real("-jl", 0);
  o.unfold = false;  // as reg_f3d: the grid as optimised (`reg_deform register` removes folds by default)
  o.max_iterations = p.integer("-maxit", 150);
  o.levels = p.integer("-ln", 3);
  o.levels_used = p.has("-lp") ? std::min(p.integer("-lp", o.levels), o.levels) : 0;
  if (p.has("-lp") && o.levels_used < 1) evk::input_error("-lp " + p.str("-lp"), "must be at least 1");
  o.smooth_ref = p.real("-smooR", 0);
  o.smooth_flo = p.real("-smooF", 0);
  o.threads = pl.threads;
  // The measure: NMI unless --ssd/-ssd 0 (NiftyReg: --nmi wins over the others).
  if ((p.has("--ssd") || p.has("-ssd")) && !p.has("--nmi")) {
    if (p.has("-ssd") && p.integer("-ssd", 0) != 0) evk::input_error("-ssd " + p.str("-ssd"), "time point must be 0");
    o.similarity = rd::Similarity::ssd;
  }
  int rbn = 64, fbn = 64;
  if (p.has("--rbn")) rbn = p.integer("--rbn", 64);
  if (p.has("-rbn")) rbn = static_cast<int>(time_point_value(p, "-rbn"));
  if (p.has("--fbn")) fbn = p.integer("--fbn", 64);
  if (p.has("-fbn")) fbn = static_cast<int>(time_point_value(p, "-fbn"));
  if (rbn != fbn) evk::input_error("--rbn/--fbn", "not implemented by this drop-in: different bin numbers for the two images");
  o.bins = rbn;
  if (p.has("-interp") && p.integer("-interp", 1) != 1)
    evk::input_error("-interp " + p.str("-interp"), "not implemented by this drop-in (only 1, linear)");
  const double pad = p.real("-pad", std::numeric_limits<double>::quiet_NaN());
  if (pad == pad) evk::input_error("-pad " + p.str("-pad"), "not implemented by this drop-in (only nan, the default)");

  const std::string cpp_out = p.has("-cpp") ? p.str("-cpp") : "outputCPP.nii";
  const std::string res_out = p.has("-res") ? p.str("-res") : "outputResult.nii";
  const rd::Volume ref = rd::read_volume(p.str("-ref"));
  const rd::StoredVolume flo_stored = rd::read_stored_volume(p.str("-flo"));
  const rd::Volume flo = rd::read_volume(p.str("-flo"));
  const rd::Mask rmask = p.has("-rmask") ? rd::read_mask(p.str("-rmask"), ref.geo) : rd::Mask{};
  const rd::Mask fmask = p.has("-fmask") ? rd::read_mask(p.str("-fmask"), flo.geo) : rd::Mask{};
  o.has_affine = true;  // reg_f3d: the identity unless -aff
  o.affine = p.has("-aff") ? rd::read_affine(p.str("-aff")) : rd::Mat44::identity();
  const rd::InputNames names{p.str("-ref"), p.str("-flo"), p.has("-rmask") ? p.str("-rmask") : "-rmask",
                             p.has("-fmask") ? p.str("-fmask") : "-fmask"};
  rd::check_register_inputs(ref, flo, rmask, fmask, o, names);
  { evk::AtomicOutput probe(cpp_out); }  // unwritable outputs: fail before computing
  { evk::AtomicOutput probe(res_out); }

  rd::RunOptions run;
  run.backend = pl.backend;
  run.device = pl.device;
  run.threads = pl.threads;
  const rd::Plan plan = rd::plan_run(run, rd::register_request(ref.geo, o.spacing));
  const rd::RunInfo& info = plan.info;
  const rd::RegisterResult r = rd::register_nonrigid(
      {.ref = ref, .flo = flo, .rmask = rmask, .fmask = fmask, .options = o, .names = names}, plan);
  rd::write_grid(cpp_out, r.grid);
  const rd::Field field = rd::compute_field({.ref = ref.geo, .grid = r.grid}, plan).field;
  rd::Volume warped;
  warped.geo = ref.geo;
  warped.data = rd::resample_niftyreg(flo_stored.vol, field, 3, static_cast<float>(pad), {}, pl.threads);
  rd::StoredInfo oi = flo_stored.info;
  oi.nifti_version = 1;
  rd::write_stored_volume(res_out, warped, oi, "Warped image using NiftyReg (reg_f3d)");
  if (pl.verbose) {
    const rd::JacobianStats js = rd::voxel_jacobian_stats(ref.geo, r.grid, rmask, pl.threads);
    std::string line = "[EvoKernels reg_f3d] registration on " + info.backend;
    if (!info.device.empty()) line += " (" + info.device + ", field kernel " + info.kernel + ")";
    char buf[160];
    const double m = r.levels.empty() ? 0 : r.levels.back().final_terms.measure;
    std::snprintf(buf, sizeof buf, " in %.2f s, final %s %.6g, min Jacobian determinant %.4f: ", r.seconds,
                  o.similarity == rd::Similarity::nmi ? "NMI" : "SSD", o.similarity == rd::Similarity::nmi ? m : -m, js.min);
    std::printf("%s%s%s, %s\n", line.c_str(), buf, cpp_out.c_str(), res_out.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) { return nr::run(command(), argc, argv, body); }
