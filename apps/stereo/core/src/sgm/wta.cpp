// Stage wta (winner takes all) on the aggregated volume S[y][x][k]:
//   left pixel:  best = the smallest k of minimal S(x, y, k); S beside it; the smallest S with
//                |k - best| > 1 (the uniqueness test's rival)
//   right pixel: best = the smallest k of minimal S(xr + min_disparity + k, y, k) over the k whose
//                left pixel lies inside the image (-1 when there is none)
#include <algorithm>

#include "core/sgm.hpp"
#include "evk/parallel.hpp"

namespace evk::stereo {

WtaResult wta_cpu(const std::vector<std::uint16_t>& S, int W, int H, int D, int dmin, bool right, int threads) {
  WtaResult w;
  w.width = W;
  w.height = H;
  w.count = D;
  w.min_disparity = dmin;
  w.left.assign(static_cast<std::size_t>(W) * H, WtaPixel{});
  if (right) w.right_best.assign(static_cast<std::size_t>(W) * H, -1);
  parallel_for(static_cast<std::size_t>(H), [&](std::size_t y0, std::size_t y1) {
    for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y) {
      for (int x = 0; x < W; ++x) {
        const std::uint16_t* s = &S[(static_cast<std::size_t>(y) * W + x) * D];
        int b = 0;
        for (int k = 1; k < D; ++k)
          if (s[k] < s[b]) b = k;
        WtaPixel& px = w.left[static_cast<std::size_t>(y) * W + x];
        px.best = b;
        px.s_best = s[b];
        px.s_prev = b > 0 ? s[b - 1] : -1;
        px.s_next = b + 1 < D ? s[b + 1] : -1;
        int second = -1;
        for (int k = 0; k < D; ++k)
          if ((k < b - 1 || k > b + 1) && (second < 0 || s[k] < second)) second = s[k];
        px.s_second = second;
      }
      if (!right) continue;
      for (int xr = 0; xr < W; ++xr) {
        int best = -1, sb = 0;
        for (int k = 0; k < D; ++k) {
          const int x = xr + dmin + k;
          if (x < 0 || x >= W) continue;
          const int v = S[(static_cast<std::size_t>(y) * W + x) * D + k];
          if (best < 0 || v < sb) {
            best = k;
            sb = v;
          }
        }
        w.right_best[static_cast<std::size_t>(y) * W + xr] = best;
      }
    }
  }, threads);
  return w;
}

}  // namespace evk::stereo
