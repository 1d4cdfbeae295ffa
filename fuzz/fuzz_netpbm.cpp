// PGM/PPM (P2, P3, P5, P6, 8/16 bit) and PFM as `stereo` reads them (images, disparity maps and
// ground truth). Bad input must end in InputError; an accepted image must have the size it says.
#include <cstddef>
#include <cstdint>

#include "core/reference.hpp"
#include "evk/error.hpp"
#include "fuzz_util.hpp"
#include "io/io.hpp"

namespace st = evk::stereo;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = evk::fuzz::put("in.img", evk::fuzz::view(data, size));
  try {
    const st::Image8 im = st::read_gray(path);
    if (im.width <= 0 || im.height <= 0 || im.pixels.size() != static_cast<std::size_t>(im.width) * im.height)
      __builtin_trap();
    if (im.pixels.size() <= 4096) {  // a tiny match of the image against itself
      const st::DisparityMap d = st::disparity_cpu(im, im, st::Params{0, 3, 3, 500000});
      if (d.d.size() != im.pixels.size()) __builtin_trap();
    }
  } catch (const evk::InputError&) {
  }
  try {
    const st::FloatMap m = st::read_disparity(path, 4.0);
    if (m.v.size() != static_cast<std::size_t>(m.width) * m.height) __builtin_trap();
  } catch (const evk::InputError&) {
  }
  return 0;
}
