// Stage refine: uniqueness ratio and sub-pixel fit on winner-take-all statistics, in 1/16 pixel.
//   invalid  when best < 0, or uniqueness u > 0 and s_second * 100 < s_best * (100 + u)
//   value    16 (min_disparity + best) + subpixel_offset(s_prev, s_best, s_next) (0 at the ends of
//            the range or without sub-pixel)
#include "core/sgm.hpp"
#include "core/src/sgm/sgm_math.h"

namespace evk::stereo {

int subpixel_offset(int s_prev, int s0, int s_next, Subpixel sp) {
  return sgm_math::subpixel_offset(s_prev, s0, s_next, static_cast<int>(sp));
}

DisparityQ refine_cpu(const WtaResult& w, int uniqueness, Subpixel sp) {
  DisparityQ out{w.width, w.height, std::vector<std::int16_t>(w.left.size(), kInvalidQ)};
  for (std::size_t i = 0; i < w.left.size(); ++i) {
    const WtaPixel& p = w.left[i];
    if (p.best < 0) continue;
    if (uniqueness > 0 && p.s_second >= 0 &&
        static_cast<long long>(p.s_second) * 100 < static_cast<long long>(p.s_best) * (100 + uniqueness))
      continue;
    int q = (w.min_disparity + p.best) * kDispScale;
    if (sp != Subpixel::none && p.s_prev >= 0 && p.s_next >= 0) q += subpixel_offset(p.s_prev, p.s_best, p.s_next, sp);
    out.q[i] = static_cast<std::int16_t>(q);
  }
  return out;
}

DisparityQ right_map(const WtaResult& w) {
  DisparityQ out{w.width, w.height, std::vector<std::int16_t>(w.right_best.size(), kInvalidQ)};
  for (std::size_t i = 0; i < w.right_best.size(); ++i)
    if (w.right_best[i] >= 0) out.q[i] = static_cast<std::int16_t>((w.min_disparity + w.right_best[i]) * kDispScale);
  return out;
}

}  // namespace evk::stereo
