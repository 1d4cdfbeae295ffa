// reg_aladin, NiftyReg 2.0's command line: the option table (names, values, NiftyReg's defaults)
// is complete so that a pipeline's command line is checked now; the registration itself runs
// `reg_deform affine` (reg_aladin's block matching on the GPU), which is not in this build yet, so
// every run that is not -h/--version fails with a message saying so. Enabling it: map the parsed
// options onto reg_deform affine's options in body() (defaults below are reg_aladin's).
#include "evk/error.hpp"
#include "nr_cli.hpp"

namespace nr = evk::niftyreg_compat;

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
      {{"-smooR", "-smooT", "--smooR"}, 1, "Standard deviation in mm of the Gaussian kernel smoothing the reference [0]", ""},
      {{"-smooF", "-smooS", "--smooF"}, 1, "Standard deviation in mm of the Gaussian kernel smoothing the floating [0]", ""},
      {{"-refLowThr", "--refLowThr"}, 1, "Lower threshold value applied to the reference image [0]", ""},
      {{"-refUpThr", "--refUpThr"}, 1, "Upper threshold value applied to the reference image [0]", ""},
      {{"-floLowThr", "--floLowThr"}, 1, "Lower threshold value applied to the floating image [0]", ""},
      {{"-floUpThr", "--floUpThr"}, 1, "Upper threshold value applied to the floating image [0]", ""},
      {{"-pad", "--pad"}, 1, "Padding value [nan]", ""},
      {{"-nac", "--nac"}, 0, "Use the nifti header origin to initialise the transformation (image centres by default)", ""},
      {{"-comm", "-cog", "--comm", "--cog"}, 0, "Use the input masks centre of mass to initialise the transformation", ""},
      {{"-comi", "--comi"}, 0, "Use the input images centre of mass to initialise the transformation", ""},
      {{"-rigOnly", "--rigOnly"}, 0, "To perform a rigid registration only (rigid+affine by default)", ""},
      {{"-affDirect", "--affDirect"}, 0, "Directly optimise 12 DoF affine (default: rigid initially then affine)", ""},
      {{"-pv", "-%v", "--pv"}, 1, "Percentage of blocks to use in the optimisation scheme [50]", ""},
      {{"-pi", "-%i", "--pi"}, 1, "Percentage of blocks to consider as inlier in the optimisation scheme [50]", ""},
      {{"-speeeeed", "--speeed"}, 0, "Go faster", ""},
      {{"-interp", "--interp"}, 1, "Interpolation order to use to warp the floating image [1]", ""},
      {{"-iso", "--iso"}, 0, "Make floating and reference images isotropic if required", ""},
  };
  for (auto& o : nr::common_options()) c.options.push_back(o);
  return c;
}

void body(const nr::Parsed&) {
  throw evk::Refused(
      "affine registration is not in this EvoKernels build: this drop-in runs `reg_deform affine` (reg_aladin's "
      "block matching on the GPU), which is not merged yet; use NiftyReg's reg_aladin until then");
}

}  // namespace

int main(int argc, char** argv) { return nr::run(command(), argc, argv, body); }
