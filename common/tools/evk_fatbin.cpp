// evk_fatbin FILE...: one line per nvcc fatbin, the machine code and PTX it holds
// ("FILE: sm_75 sm_80 ... compute_121"); exit 2 with one line when a file is missing or not a fatbin.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "evk/fatbin.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: evk_fatbin FILE...\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      if (!in && bytes.empty()) throw std::invalid_argument("cannot open");
      std::printf("%s: %s\n", argv[i], evk::fatbin_summary(evk::fatbin_entries(bytes.data(), bytes.size())).c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "evk_fatbin: %s: %s\n", argv[i], e.what());
      return 2;
    }
  }
  return 0;
}
