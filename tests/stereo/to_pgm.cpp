// stereo_to_pgm IN OUT.pgm: any image stereo_io reads -> 8-bit grey PGM (as `stereo` would see it).
#include <cstdio>

#include "evk/error.hpp"
#include "io/io.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: stereo_to_pgm IN OUT.pgm\n");
    return 2;
  }
  try {
    evk::stereo::write_pgm8(argv[2], evk::stereo::read_gray(argv[1]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stereo_to_pgm: %s\n", e.what());
    return 2;
  }
  return 0;
}
