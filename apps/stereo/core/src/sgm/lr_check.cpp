// Stage lr_check: a valid left pixel x (disparity dL in 1/16 pixel) survives when its match
// xr = x - round(dL) lies in the image, the right map is valid there and |dL - dR(xr)| <= max_diff
// pixels (compared in 1/16 pixel). round: halves up.
#include <cstdlib>

#include "core/sgm.hpp"
#include "core/src/sgm/sgm_math.h"
#include "evk/error.hpp"

namespace evk::stereo {

DisparityQ lr_check_cpu(const DisparityQ& L, const DisparityQ& R, int max_diff) {
  if (L.width != R.width || L.height != R.height) input_error("lr-check", "left and right maps differ in size");
  DisparityQ o = L;
  const int W = L.width;
  for (int y = 0; y < L.height; ++y)
    for (int x = 0; x < W; ++x) {
      const int q = L.at(x, y);
      if (q == kInvalidQ) continue;
      const int xr = x - sgm_math::round_q(q);
      bool ok = xr >= 0 && xr < W;
      if (ok) {
        const int r = R.at(xr, y);
        ok = r != kInvalidQ && std::abs(q - r) <= max_diff * kDispScale;
      }
      if (!ok) o.q[static_cast<std::size_t>(y) * W + x] = kInvalidQ;
    }
  return o;
}

}  // namespace evk::stereo
