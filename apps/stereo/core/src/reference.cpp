#include "core/reference.hpp"

#include <algorithm>
#include <vector>

#include "evk/parallel.hpp"

namespace evk::stereo {

namespace {
inline int clampi(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }
inline int sq(int v) { return v * v; }
}  // namespace

DisparityMap disparity_cpu(const Image8& L, const Image8& R, const Params& p, int threads) {
  validate(p);
  validate_pair(L, R);
  const int W = L.width, H = L.height, r = p.radius();
  DisparityMap out{W, H, std::vector<int>(static_cast<std::size_t>(W) * H, kInvalid)};
  // Clamped column indices of the left image for window columns c = -r .. W-1+r.
  std::vector<int> xl(static_cast<std::size_t>(W + 2 * r));
  for (int c = -r; c < W + r; ++c) xl[c + r] = clampi(c, W);

  // Rows in bands; each band rolls its column sums down its rows for every disparity.
  const std::size_t band = 16;
  const std::size_t nbands = (static_cast<std::size_t>(H) + band - 1) / band;
  parallel_for(nbands, [&](std::size_t b0, std::size_t b1) {
    std::vector<int> col(static_cast<std::size_t>(W + 2 * r));
    std::vector<int> xr(col.size());
    std::vector<int> best;
    for (std::size_t b = b0; b < b1; ++b) {
      const int y0 = static_cast<int>(b * band), y1 = std::min(H, y0 + static_cast<int>(band));
      best.assign(static_cast<std::size_t>(y1 - y0) * W, p.min_ssd);
      for (int d = p.min_disparity; d <= p.max_disparity; ++d) {
        for (int c = -r; c < W + r; ++c) xr[c + r] = clampi(c - d, W);
        auto diff2 = [&](int k, int y) {
          const int yy = clampi(y, H);
          return sq(int(L.pixels[static_cast<std::size_t>(yy) * W + xl[k]]) -
                    int(R.pixels[static_cast<std::size_t>(yy) * W + xr[k]]));
        };
        for (std::size_t k = 0; k < col.size(); ++k) {
          int s = 0;
          for (int j = -r; j <= r; ++j) s += diff2(static_cast<int>(k), y0 + j);
          col[k] = s;
        }
        for (int y = y0; y < y1; ++y) {
          if (y > y0)
            for (std::size_t k = 0; k < col.size(); ++k)
              col[k] += diff2(static_cast<int>(k), y + r) - diff2(static_cast<int>(k), y - 1 - r);
          int s = 0;
          for (int k = 0; k < 2 * r + 1; ++k) s += col[k];
          int* bestrow = &best[static_cast<std::size_t>(y - y0) * W];
          int* outrow = &out.d[static_cast<std::size_t>(y) * W];
          for (int x = 0; x < W; ++x) {
            if (x > 0) s += col[x + 2 * r] - col[x - 1];
            if (s < bestrow[x]) {
              bestrow[x] = s;
              outrow[x] = d;
            }
          }
        }
      }
    }
  }, threads);
  return out;
}

DisparityMap disparity_naive(const Image8& L, const Image8& R, const Params& p) {
  validate(p);
  validate_pair(L, R);
  const int W = L.width, H = L.height, r = p.radius();
  DisparityMap out{W, H, std::vector<int>(static_cast<std::size_t>(W) * H, kInvalid)};
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      long long best = p.min_ssd;
      for (int d = p.min_disparity; d <= p.max_disparity; ++d) {
        long long ssd = 0;
        for (int j = -r; j <= r; ++j)
          for (int i = -r; i <= r; ++i) {
            const int yy = clampi(y + j, H);
            const int a = L.at(clampi(x + i, W), yy), b = R.at(clampi(x + i - d, W), yy);
            ssd += static_cast<long long>(a - b) * (a - b);
          }
        if (ssd < best) {
          best = ssd;
          out.d[static_cast<std::size_t>(y) * W + x] = d;
        }
      }
    }
  return out;
}

}  // namespace evk::stereo
