// Stage census: 9x7 centre-symmetric census transform (libSGM's default kind). Each of the 31
// offsets o of the half window (rows -3..-1 and the left half of row 0) sets its bit when
// I(p + o) > I(p - o); reads outside the image are clamped to the nearest edge pixel.
#include "core/sgm.hpp"
#include "evk/parallel.hpp"

namespace evk::stereo {

std::vector<Offset> census_offsets() {
  std::vector<Offset> o;
  for (int dy = -3; dy <= 0; ++dy)
    for (int dx = -4; dx <= 4; ++dx)
      if (dy < 0 || dx < 0) o.push_back({dx, dy});
  return o;  // 27 + 4 = 31
}

namespace {
inline int clampi(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

template <class Img>
std::vector<std::uint32_t> census_impl(const Img& im) {
  const int W = im.width, H = im.height;
  const std::vector<Offset> off = census_offsets();
  std::vector<std::uint32_t> c(static_cast<std::size_t>(W) * H);
  parallel_for(static_cast<std::size_t>(H), [&](std::size_t y0, std::size_t y1) {
    for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y)
      for (int x = 0; x < W; ++x) {
        std::uint32_t v = 0;
        for (std::size_t k = 0; k < off.size(); ++k) {
          const int a = im.at(clampi(x + off[k].dx, W), clampi(y + off[k].dy, H));
          const int b = im.at(clampi(x - off[k].dx, W), clampi(y - off[k].dy, H));
          if (a > b) v |= 1u << k;
        }
        c[static_cast<std::size_t>(y) * W + x] = v;
      }
  });
  return c;
}
}  // namespace

std::vector<std::uint32_t> census_cpu(const Image8& im) { return census_impl(im); }
std::vector<std::uint32_t> census_cpu(const Image16& im) { return census_impl(im); }

}  // namespace evk::stereo
