// reg_f3d, NiftyReg 2.0's command line: the option table (names, values, NiftyReg's defaults) is
// complete so that a pipeline's command line is checked now; the registration itself runs
// `reg_deform register` (reg_f3d's cubic B-spline registration on the GPU), which is not in this
// build yet, so every run that is not -h/--version fails with a message saying so. Enabling it:
// map the parsed options onto reg_deform register's options in body() (defaults are reg_f3d's).
#include "evk/error.hpp"
#include "nr_cli.hpp"

namespace nr = evk::niftyreg_compat;

namespace {

nr::Command command() {
  nr::Command c{"reg_f3d", "fast free-form deformation (cubic B-spline) registration",
                "-ref <filename> -flo <filename> [OPTIONS]", {}};
  c.options = {
      {{"-ref", "-target", "--ref"}, 1, "Filename of the reference image (mandatory)", ""},
      {{"-flo", "-source", "--flo"}, 1, "Filename of the floating image (mandatory)", ""},
      {{"-aff", "--aff"}, 1, "Filename which contains an affine transformation (Affine*Reference=Floating)", ""},
      {{"-incpp", "--incpp"}, 1, "Filename of control point grid input", ""},
      {{"-rmask", "-tmask", "--rmask"}, 1, "Filename of a mask image in the reference space", ""},
      {{"-fmask", "-smask", "--fmask", "--smask"}, 1, "Filename of a mask image in the floating space", ""},
      {{"-res", "-result", "--res"}, 1, "Filename of the resampled image [outputResult.nii.gz]", ""},
      {{"-cpp", "--cpp"}, 1, "Filename of control point grid [outputCPP.nii.gz]", ""},
      {{"-sx", "--sx"}, 1, "Final grid spacing along the x axis in mm (in voxel if negative value) [5 voxels]", ""},
      {{"-sy", "--sy"}, 1, "Final grid spacing along the y axis in mm (in voxel if negative value) [sx value]", ""},
      {{"-sz", "--sz"}, 1, "Final grid spacing along the z axis in mm (in voxel if negative value) [sx value]", ""},
      {{"-be", "--be"}, 1, "Weight of the bending energy (second derivative of the transformation) penalty term [0.001]", ""},
      {{"-le", "--le"}, 1, "Weight of first order penalty term (symmetric and anti-symmetric part of the Jacobian) [0.01]", ""},
      {{"-jl", "--jl"}, 1, "Weight of log of the Jacobian determinant penalty term [0.0]", ""},
      {{"-noAppJL", "--noAppJL"}, 0, "Do not approximate the log of the Jacobian penalty at control points only", ""},
      {{"-land", "--land"}, 2, "Use of a set of landmarks which distance should be minimised (weight, file)", ""},
      {{"--nmi"}, 0, "NMI. Used NMI even when one or several other measures are specified", ""},
      {{"--rbn"}, 1, "Number of bin to use for the joint histogram, identical for all time points [64]", ""},
      {{"-rbn", "-tbn"}, 2, "Number of bin to use for the joint histogram, for time point <tp> [64]", ""},
      {{"--fbn"}, 1, "Number of bin to use for the joint histogram, identical for all time points [64]", ""},
      {{"-fbn", "-sbn"}, 2, "Number of bin to use for the joint histogram, for time point <tp> [64]", ""},
      {{"--lncc"}, 1, "Standard deviation of the Gaussian kernel for LNCC, all time points", ""},
      {{"-lncc"}, 2, "Standard deviation of the Gaussian kernel for LNCC, for time point <tp>", ""},
      {{"--ssd"}, 0, "SSD, all time points", ""},
      {{"-ssd"}, 1, "SSD for time point <tp>", ""},
      {{"--ssdn"}, 0, "Normalised SSD, all time points", ""},
      {{"-kld", "--kld"}, 0, "KL divergence", ""},
      {{"--mind"}, 1, "MIND with offset", ""},
      {{"--mindssc"}, 1, "MIND-SSC with offset", ""},
      {{"-rr", "--rr"}, 0, "Intensities are thresholded between the 2 and 98% iles", ""},
      {{"-nmiw"}, 2, "NMI weight for time point <tp>", ""},
      {{"-lnccw"}, 2, "LNCC weight for time point <tp>", ""},
      {{"-ssdw"}, 2, "SSD weight for time point <tp>", ""},
      {{"-kldw"}, 2, "KLD weight for time point <tp>", ""},
      {{"-wSim", "--wSim"}, 1, "Weight to apply to the measure of similarity at each voxel position", ""},
      {{"-rLwTh", "-tLwTh"}, 2, "Lower threshold to apply to the reference image intensities [none], for time point <tp>", ""},
      {{"-rUpTh", "-tUpTh"}, 2, "Upper threshold to apply to the reference image intensities [none], for time point <tp>", ""},
      {{"-fLwTh", "-sLwTh"}, 2, "Lower threshold to apply to the floating image intensities [none], for time point <tp>", ""},
      {{"-fUpTh", "-sUpTh"}, 2, "Upper threshold to apply to the floating image intensities [none], for time point <tp>", ""},
      {{"--rLwTh"}, 1, "Lower threshold to apply to the reference image intensities [none]", ""},
      {{"--rUpTh"}, 1, "Upper threshold to apply to the reference image intensities [none]", ""},
      {{"--fLwTh"}, 1, "Lower threshold to apply to the floating image intensities [none]", ""},
      {{"--fUpTh"}, 1, "Upper threshold to apply to the floating image intensities [none]", ""},
      {{"-smooR", "-smooT", "--smooR"}, 1, "Standard deviation in mm of the Gaussian kernel smoothing the reference [0]", ""},
      {{"-smooF", "-smooS", "--smooF"}, 1, "Standard deviation in mm of the Gaussian kernel smoothing the floating [0]", ""},
      {{"-smoothGrad", "--smoothGrad"}, 1, "Standard deviation in mm of the Gaussian kernel smoothing the gradient [0]", ""},
      {{"-pad", "--pad"}, 1, "Padding value [nan]", ""},
      {{"-maxit", "--maxit"}, 1, "Maximal number of iteration at the final level [150]", ""},
      {{"-ln", "--ln"}, 1, "Number of level to perform [3]", ""},
      {{"-lp", "--lp"}, 1, "Only perform the first levels [ln]", ""},
      {{"-nopy", "--nopy"}, 0, "Do not use a pyramidal approach", ""},
      {{"-noConj", "--noConj"}, 0, "To not use the conjuage gradient optimisation but a simple gradient ascent", ""},
      {{"-pert", "--pert"}, 1, "To add perturbation step(s) after each optimisation scheme", ""},
      {{"-vel", "--vel"}, 0, "Use a velocity field integration to generate the deformation", ""},
      {{"-nogce", "--nogce"}, 0, "Do not use the gradient accumulation through exponentiation", ""},
      {{"-bch", "--bch"}, 1, "Number of BCH update term", ""},
      {{"-ic", "--ic"}, 1, "Weight of the inverse consistency penalty term [0.01]", ""},
      {{"-nox"}, 0, "Don't optimise in x direction", ""},
      {{"-noy"}, 0, "Don't optimise in y direction", ""},
      {{"-noz"}, 0, "Don't optimise in z direction", ""},
      {{"-nogr"}, 0, "Do not refine the grid between levels", ""},
      {{"-approxGrad", "--approxGrad"}, 0, "Approximate the gradient using finite differences", ""},
      {{"-interp", "--interp"}, 1, "Interpolation order to use internally to warp the floating image [1]", ""},
  };
  for (auto& o : nr::common_options()) c.options.push_back(o);
  return c;
}

void body(const nr::Parsed&) {
  throw evk::Refused(
      "non-rigid registration is not in this EvoKernels build: this drop-in runs `reg_deform register` (reg_f3d's "
      "cubic B-spline registration on the GPU), which is not merged yet; use NiftyReg's reg_f3d until then");
}

}  // namespace

int main(int argc, char** argv) { return nr::run(command(), argc, argv, body); }
