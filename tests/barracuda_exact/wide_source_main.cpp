// Writes the wide inexact kernel's source (core/aln_wide.hpp), derived from the embedded original,
// to argv[1]: the host build of the wide kernel in the CPU tests includes it.
#include <fstream>
#include <iostream>

#include "core/aln_wide.hpp"
#include "evk_kernels/barracuda_inexact_kernel.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: bc_wide_source OUT.cu\n";
    return 2;
  }
  std::ofstream(argv[1]) << evk::barracuda_exact::inexact_wide_source(barracuda_inexact_kernel().text());
  return 0;
}
