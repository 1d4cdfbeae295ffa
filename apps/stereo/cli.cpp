// stereo command line: argument parsing and printing only; the work lives in core/ and io/.
#include "evk/cli.hpp"

int main(int argc, char** argv) {
  auto app = evk::make_app("stereo", "Disparity maps from rectified stereo pairs (Stam's stereoKernel, genetically improved per GPU)");
  evk::add_devices_command(*app, "stereo", [] {
    evk::Registry reg;
    reg.add_kernel("stereo");
    return reg;
  });
  return evk::run_cli(*app, argc, argv);
}
