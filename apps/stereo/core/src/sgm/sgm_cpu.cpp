// The SGM pipeline on the CPU: cost -> aggregate -> wta -> refine -> median -> lr_check -> speckle.
#include "core/sgm.hpp"

namespace evk::stereo {

void postprocess_cpu(StereoResult& r, const PostParams& p) {
  if (p.median == 3) {
    r.left = median3_cpu(r.left);
    if (!r.right.q.empty()) r.right = median3_cpu(r.right);
  }
  if (p.lr_check >= 0) r.left = lr_check_cpu(r.left, r.right, p.lr_check);
  if (p.speckle_size > 0) speckle_cpu(r.left, p.speckle_size, p.speckle_range);
}

namespace {
template <class Img>
StereoResult sgm_impl(const Img& L, const Img& R, const SgmParams& p, int threads) {
  validate(p);
  CostVolume c = cost_cpu(L, R, p);
  std::vector<std::uint16_t> S = aggregate_cpu(c, p, threads);
  WtaResult w = wta_cpu(S, c.width, c.height, c.count, c.min_disparity, p.post.needs_right(), threads);
  S = {};
  StereoResult r;
  r.left = refine_cpu(w, p.post.uniqueness, p.post.subpixel);
  if (p.post.needs_right()) r.right = right_map(w);
  postprocess_cpu(r, p.post);
  if (!p.post.right) r.right = {};
  return r;
}
}  // namespace

StereoResult sgm_cpu(const Image8& l, const Image8& r, const SgmParams& p, int threads) {
  return sgm_impl(l, r, p, threads);
}
StereoResult sgm_cpu(const Image16& l, const Image16& r, const SgmParams& p, int threads) {
  return sgm_impl(l, r, p, threads);
}

}  // namespace evk::stereo
