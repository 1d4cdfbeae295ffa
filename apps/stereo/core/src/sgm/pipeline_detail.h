// Small helpers the SGM pipeline's files share (sgm_policy.cpp, sgm_pipeline.cpp, sgm_process.cpp).
#pragma once
#include "core/sgm.hpp"

namespace evk::stereo::detail {

inline int pow2ceil(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}
inline unsigned ceil_div(long long a, long long b) { return static_cast<unsigned>((a + b - 1) / b); }

// The post-processing the parameters ask for: both medians and the LR check in one launch
// (sgm_median3_lr of median.cu), the median alone, the LR check alone, or none.
enum class Post { none, median_lr, median, lr };
inline Post post_kind(const PostParams& q) {
  if (q.median == 3 && q.lr_check >= 0) return Post::median_lr;
  if (q.median == 3) return Post::median;
  return q.lr_check >= 0 ? Post::lr : Post::none;
}

}  // namespace evk::stereo::detail
