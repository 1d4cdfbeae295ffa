// reg_deform without nifticlib: only `devices` (the build warns; install libnifti2-dev).
#include "evk/cli.hpp"

int main(int argc, char** argv) {
  auto app = evk::make_app("reg_deform", "Cubic B-spline deformation fields and resampling for brain MRI (NiftyReg's kernel, genetically improved per GPU)");
  evk::add_devices_command(*app, "reg_deform", [] {
    evk::Registry reg;
    reg.add_kernel("reg_deform");
    return reg;
  });
  return evk::run_cli(*app, argc, argv);
}
