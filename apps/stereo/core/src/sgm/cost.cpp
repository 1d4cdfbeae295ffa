// Stage cost: C(x, y, d) for d = min_disparity + k, k = 0..count-1.
//   census  popcount(cL(x,y) ^ cR(x-d,y)); a right pixel outside the image has census 0, so such
//           costs are popcount(cL) (0..31)
//   sad     round(sum |L - R| / n) over the window (n pixels), 0..255
//   ssd     isqrt(floor(sum (L - R)^2 / n)), the root mean square difference, 0..255
// sad/ssd read L(x+i, y+j) and R(x+i-d, y+j) clamped to the image (as the SSD method does) and use
// 8-bit values (deeper images scaled as read_gray does).
#include <bit>

#include "core/sgm.hpp"
#include "core/src/sgm/sgm_math.h"
#include "evk/error.hpp"
#include "evk/parallel.hpp"

namespace evk::stereo {

int CostVolume::at(int x, int y, int k) const {
  const std::size_t i = static_cast<std::size_t>(y) * width + x;
  if (kind != CostKind::census) return stored[i * count + k];
  const int xr = x - (min_disparity + k);
  const std::uint32_t r = (xr >= 0 && xr < width) ? census_right[static_cast<std::size_t>(y) * width + xr] : 0u;
  return std::popcount(census_left[i] ^ r);
}

namespace {
inline int clampi(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

Image8 to8(const Image16& im) { return to_image8(im); }
const Image8& to8(const Image8& im) { return im; }

std::vector<std::uint8_t> window_costs(const Image8& L, const Image8& R, const SgmParams& p) {
  const int W = L.width, H = L.height, D = p.count(), r = p.window / 2, n = p.window * p.window;
  const bool sq = p.cost == CostKind::ssd;
  std::vector<std::uint8_t> v(static_cast<std::size_t>(W) * H * D);
  parallel_for(static_cast<std::size_t>(H), [&](std::size_t y0, std::size_t y1) {
    std::vector<unsigned> col(static_cast<std::size_t>(W + 2 * r));
    for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y)
      for (int k = 0; k < D; ++k) {
        const int d = p.min_disparity + k;
        for (int c = -r; c < W + r; ++c) {
          unsigned s = 0;
          for (int j = -r; j <= r; ++j) {
            const int yy = clampi(y + j, H);
            const int a = L.at(clampi(c, W), yy), b = R.at(clampi(c - d, W), yy);
            s += sq ? static_cast<unsigned>((a - b) * (a - b)) : static_cast<unsigned>(a > b ? a - b : b - a);
          }
          col[static_cast<std::size_t>(c + r)] = s;
        }
        unsigned s = 0;
        for (int c = 0; c < 2 * r + 1; ++c) s += col[static_cast<std::size_t>(c)];
        for (int x = 0; x < W; ++x) {
          if (x > 0) s += col[static_cast<std::size_t>(x + 2 * r)] - col[static_cast<std::size_t>(x - 1)];
          const unsigned cost = sq ? sgm_math::isqrt(s / n) : (s + n / 2) / n;
          v[(static_cast<std::size_t>(y) * W + x) * D + k] = static_cast<std::uint8_t>(cost > 255 ? 255 : cost);
        }
      }
  });
  return v;
}

template <class Img>
CostVolume cost_impl(const Img& L, const Img& R, const SgmParams& p) {
  validate(p);
  CostVolume c;
  c.width = L.width;
  c.height = L.height;
  c.count = p.count();
  c.min_disparity = p.min_disparity;
  c.kind = p.cost;
  if (p.cost == CostKind::census) {
    c.census_left = census_cpu(L);
    c.census_right = census_cpu(R);
  } else {
    c.stored = window_costs(to8(L), to8(R), p);
  }
  return c;
}
}  // namespace

CostVolume cost_cpu(const Image8& l, const Image8& r, const SgmParams& p) {
  validate_pair(l, r);
  return cost_impl(l, r, p);
}
CostVolume cost_cpu(const Image16& l, const Image16& r, const SgmParams& p) {
  if (l.width != r.width || l.height != r.height || l.width <= 0 || l.height <= 0)
    input_error("images", "left and right images must be non-empty and of the same size");
  return cost_impl(l, r, p);
}

}  // namespace evk::stereo
