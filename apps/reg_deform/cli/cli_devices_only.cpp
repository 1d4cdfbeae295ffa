// reg_deform without nifticlib: only `devices` (the build warns; install libnifti2-dev). It lists
// the tool's own registry (core needs no NIfTI): the paper and expert kernels and the shipped
// variants, as the full tool does.
#include "evk/cli.hpp"
#include "gi/kernel_variant.hpp"

int main(int argc, char** argv) {
  auto app = evk::make_app("reg_deform", "Cubic B-spline deformation fields and resampling for brain MRI (built without nifticlib: devices only)");
  evk::add_devices_command(*app, "reg_deform", evk::reg_deform::make_registry);
  return evk::run_cli(*app, argc, argv);
}
