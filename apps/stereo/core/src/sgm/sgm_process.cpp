// SgmPipeline::process (host buffers to host buffers: staging, row bands overlapping the wta with
// the post-processing and downloads) and run().
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "core/sgm_gpu.hpp"
#include "core/src/sgm/pipeline_detail.h"
#include "evk/error.hpp"
#include "evk/task_pool.hpp"

namespace evk::stereo {

using detail::Post;
using detail::post_kind;

const std::vector<int>& SgmPipeline::bands() const {
  if (!bands_.empty()) return bands_;  // the layout, tuning and device never change
  const int H = layout_.height;
  int n = tuning_.bands, rows = 0;
  if (n <= 0) {
    // whole waves of wta blocks (1920x1080 on an H100, 4 blocks per SM: 528 rows, so two bands; the
    // remainder joins the last). Bands of less than a wave leave the GPU short of loads in flight:
    // H100, 1920x1080, pinned buffers, 4 equal bands against these 2: 256/4 2.56 vs 2.22 ms, 256/8
    // 4.17 vs 4.09 (128/8 2.27 vs 2.26).
    const int wave = dev_.resident_blocks(sgm_wta_kernel(layout_, choice_), Dim3{SgmLayout::kWtaThreads, 1, 1},
                                          sgm_wta_smem(layout_.width, layout_.K, p_.post.needs_right(),
                                                       p_.post.subpixel != Subpixel::none));
    n = wave > 0 ? std::max(1, H / wave) : 1;
    rows = wave;
  }
  n = std::clamp(n, 1, std::min(H, SgmDevice::kEvents / 2));
  std::vector<int> b(n + 1);
  for (int i = 0; i <= n; ++i) b[i] = rows > 0 ? std::min(H, i * rows) : static_cast<int>(static_cast<long long>(H) * i / n);
  b[n] = H;
  bands_ = std::move(b);
  return bands_;
}

void* SgmPipeline::staging(int which, std::size_t n) {
  if (stage_bytes_[which] < n) {
    if (stage_[which]) dev_.release_host(stage_[which]);
    stage_[which] = nullptr;
    stage_[which] = dev_.alloc_host(n);
    stage_bytes_[which] = n;
  }
  return stage_[which];
}

void SgmPipeline::stage_in(const void* src, void* dst, int which, std::size_t n) {
  // host threads copy a chunk into pinned memory while the device copies the previous one
  char* h = static_cast<char*>(staging(which, n));
  const char* s = static_cast<const char*>(src);
  const std::size_t chunk = tuning_.copy_chunk_kib > 0 ? std::size_t(tuning_.copy_chunk_kib) << 10 : n;
  for (std::size_t off = 0; off < n; off += chunk) {
    const std::size_t len = std::min(chunk, n - off);
    host_copy(h + off, s + off, len);
    dev_.to_device(static_cast<char*>(dst) + off, h + off, len);
  }
}

void SgmPipeline::host_copy(void* dst, const void* src, std::size_t n) {
  if (!copiers_) {
    const unsigned hw = std::thread::hardware_concurrency();
    const int want = tuning_.copy_threads > 0 ? tuning_.copy_threads : 8;  // the caller is one of them
    copiers_ = std::make_unique<TaskPool>(std::max(0, std::min(want, static_cast<int>(hw)) - 1));
  }
  const std::size_t grain = std::max<std::size_t>(std::size_t(1) << 16, n / (copiers_->workers() + 1) + 1);
  copiers_->parallel_for(n, grain, [&](std::size_t b, std::size_t e) {
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  });
}

void SgmPipeline::process(const void* left, const void* right, std::int16_t* left_out, std::int16_t* right_out) {
  const SgmLayout& l = layout_;
  const int W = l.width, H = l.height;
  const std::size_t npx = static_cast<std::size_t>(W) * H, in = npx * (bits_ / 8);
  dev_.select(0);
  // each image's census is issued after its upload: the left one runs while the right one is copied
  const bool pinned_in = dev_.pinned(left) && dev_.pinned(right);
  for (int i = 0; i < 2; ++i) {
    const void* src = i == 0 ? left : right;
    void* dst = raw_[i] ? raw_[i] : img_[i];  // rectifying: the raw image, remapped on the device
    if (pinned_in)
      dev_.to_device(dst, src, in);
    else
      stage_in(src, dst, i, in);
    if (raw_[i]) rectify(i);
    if (p_.cost == CostKind::census) census(i);
  }
  if (p_.cost != CostKind::census) enqueue_cost();
  enqueue_aggregate();
  const bool want_right = right_out && p_.post.needs_right();
  const bool direct = dev_.pinned(left_out) && (!want_right || dev_.pinned(right_out));
  std::int16_t *dl = left_out, *dr = right_out;
  if (!direct) {
    dl = static_cast<std::int16_t*>(staging(2, npx * 2 * (want_right ? 2 : 1)));
    dr = dl + npx;
  }
  // The maps the post-processing leaves (post_done() swaps them in): 2 and 3 where it ran.
  const Post k = post_kind(p_.post);
  void* res_l = k == Post::none ? map_[0] : map_[2];
  void* res_r = k == Post::median_lr || (k == Post::median && p_.post.needs_right()) ? map_[3] : map_[1];
  const std::vector<int>& b = bands();
  const int n = static_cast<int>(b.size()) - 1;
  // post band i: rows [s_i, s_i+1), one row behind the wta's bands (its median reads the row below)
  std::vector<int> s(n + 1);
  for (int i = 0; i <= n; ++i) s[i] = (i == 0 || i == n) ? b[i] : b[i] - 1;
  for (int i = 0; i < n; ++i) {
    dev_.select(0);
    wta_rows(b[i], b[i + 1] - b[i]);
    if (n > 1) {
      dev_.record(2 * i);
      dev_.select(1);
      dev_.wait(2 * i);
    }
    post_rows(s[i], s[i + 1] - s[i]);
    const std::size_t off = static_cast<std::size_t>(s[i]) * W, len = static_cast<std::size_t>(s[i + 1] - s[i]) * W;
    if (len > 0) {
      dev_.to_host(dl + off, static_cast<std::int16_t*>(res_l) + off, len * 2);
      if (want_right) dev_.to_host(dr + off, static_cast<std::int16_t*>(res_r) + off, len * 2);
    }
    dev_.record(2 * i + 1);
  }
  dev_.select(0);
  post_done();
  if (!direct)
    for (int i = 0; i < n; ++i) {  // band i to the caller's memory while later bands run
      dev_.host_wait(2 * i + 1);
      const std::size_t off = static_cast<std::size_t>(s[i]) * W, len = static_cast<std::size_t>(s[i + 1] - s[i]) * W;
      host_copy(left_out + off, dl + off, len * 2);
      if (want_right) host_copy(right_out + off, dr + off, len * 2);
    }
  dev_.synchronize();
}

namespace {
template <class Img>
StereoResult run_impl(SgmPipeline& pl, const Img& L, const Img& R, const void* left, const void* right) {
  const SgmLayout& l = pl.layout();
  if (L.width != l.width || L.height != l.height || R.width != l.width || R.height != l.height)
    input_error("images", "pair size differs from the pipeline's");
  StereoResult r;
  r.left = {l.width, l.height, std::vector<std::int16_t>(static_cast<std::size_t>(l.width) * l.height)};
  const bool right_map = pl.params().post.right;
  if (right_map) r.right = r.left;
  pl.process(left, right, r.left.q.data(), right_map ? r.right.q.data() : nullptr);
  pl.finish_host(r.left);
  return r;
}
}  // namespace

StereoResult SgmPipeline::run(const Image8& L, const Image8& R) {
  validate_pair(L, R);
  if (bits_ != 8) {
    Image16 l16 = to_image16(L), r16 = to_image16(R);
    return run(l16, r16);
  }
  return run_impl(*this, L, R, L.pixels.data(), R.pixels.data());
}

StereoResult SgmPipeline::run(const Image16& L, const Image16& R) {
  if (bits_ == 8) {
    // 8-bit pipeline: sad/ssd costs (read_gray's scaling) or an 8-bit census pipeline given
    // 16-bit images of maxval 255.
    if (p_.cost == CostKind::census && (L.maxval > 255 || R.maxval > 255))
      throw std::logic_error("SgmPipeline: 16-bit census needs a 16-bit pipeline");
    Image8 l8 = to_image8(L), r8 = to_image8(R);
    return run_impl(*this, L, R, l8.pixels.data(), r8.pixels.data());
  }
  return run_impl(*this, L, R, L.pixels.data(), R.pixels.data());
}

}  // namespace evk::stereo