// Build-time generator: writes the wide inexact kernel's source (core/aln_wide.hpp), derived from
// the embedded original, to argv[1]; the build embeds it compiled for the default later passes, and
// the CPU tests compile it for the host.
#include <fstream>
#include <iostream>

#include "core/aln_wide.hpp"
#include "evk_kernels/barracuda_inexact_kernel.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: barracuda_exact_wide_source OUT.cu\n";
    return 2;
  }
  try {
    std::ofstream out(argv[1]);
    out << evk::barracuda_exact::inexact_wide_source(barracuda_inexact_kernel().text());
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "barracuda_exact_wide_source: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
