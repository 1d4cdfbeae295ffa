// barracuda_exact command line: argument parsing and printing only; the work lives in core/ and io/.
#include "evk/cli.hpp"

int main(int argc, char** argv) {
  auto app = evk::make_app("barracuda_exact", "Exact short-read mapping on a BWA index (BarraCUDA's kernel, genetically improved per GPU)");
  evk::add_devices_command(*app, "barracuda_exact", [] {
    evk::Registry reg;
    reg.add_kernel("barracuda_exact");
    return reg;
  });
  return evk::run_cli(*app, argc, argv);
}
