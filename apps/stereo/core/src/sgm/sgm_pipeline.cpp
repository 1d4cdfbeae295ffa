// The SGM pipeline on an SgmDevice: buffers and the stages in order (census or the cost volume,
// aggregation, wta, median and LR check), each enqueued on the device's queue.
#include <algorithm>
#include <stdexcept>

#include "core/sgm_gpu.hpp"
#include "core/src/sgm/pipeline_detail.h"
#include "evk/error.hpp"
#include "evk/task_pool.hpp"

namespace evk::stereo {

using detail::ceil_div;
using detail::Post;
using detail::post_kind;

SgmPipeline::SgmPipeline(SgmDevice& dev, const SgmParams& p, int W, int H, int bits, SgmTuning tuning)
    : dev_(dev),
      p_(p),
      layout_(sgm_layout(W, H, p, sgm_choose(p, tuning).k)),
      bits_(bits),
      tuning_(tuning),
      choice_(sgm_choose(p, tuning)) {
  choice_.k = layout_.K;  // sgm_layout widens K where more than 32 lanes would be needed
  if (choice_.agg == 3) {
    if (sgm_agg3_lanes(layout_, choice_.k3) == 0) throw std::logic_error("SgmPipeline: kernel 3 cannot run this layout");
    choice_.split3 = choice_.split3 && sgm_agg3_can_split(layout_, choice_.k3);
    choice_.k3 = sgm_agg3_k(layout_, choice_.k3);
    if (!sgm_agg3_offsets_fit(layout_)) {
      choice_.agg = 2;
      choice_.split3 = false;
    }
  }
  if (bits != 8 && bits != 16) throw std::logic_error("SgmPipeline: bits must be 8 or 16");
  if (bits == 16 && p.cost != CostKind::census) bits_ = 8;  // sad/ssd run on 8-bit pixels
  const SgmLayout& l = layout_;
  const std::size_t npx = static_cast<std::size_t>(W) * H;
  auto grab = [&](std::size_t n) {
    void* q = dev_.alloc(n);
    bytes_ += n;
    return q;
  };
  try {
    for (int i = 0; i < 2; ++i) img_[i] = grab(npx * (bits_ / 8));
    if (p.cost == CostKind::census) {
      census_[0] = grab(npx * 4);
      // kernel 3 reads four copies of the right census, copy q shifted right by q words
      const std::size_t nr = choice_.agg == 3 ? static_cast<std::size_t>(sgm_agg3_copy_pitch(l)) * H * 4 * 4
                                              : static_cast<std::size_t>(l.right_pitch) * H * 4;
      census_[1] = grab(nr);
      dev_.fill(census_[1], 0, nr);  // padding columns stay 0 (census of pixels outside the image)
    } else {
      cost_ = grab(npx * l.Dp);
    }
    paths_ = grab(l.volume_bytes(p.paths));
    for (int i = 0; i < 4; ++i) map_[i] = grab(npx * 2);
  } catch (...) {
    for (void* q : {img_[0], img_[1], census_[0], census_[1], cost_, paths_, map_[0], map_[1], map_[2], map_[3]})
      if (q) dev_.release(q);
    throw;
  }
}

SgmPipeline::~SgmPipeline() {
  for (void* q : {img_[0], img_[1], census_[0], census_[1], cost_, paths_, map_[0], map_[1], map_[2], map_[3]})
    if (q) dev_.release(q);
  for (void* q : {raw_[0], raw_[1], rmap_[0], rmap_[1], rmap_[2], rmap_[3]})
    if (q) dev_.release(q);
  for (void* h : stage_)
    if (h) dev_.release_host(h);
}

Dim3 sgm_rectify_grid(int w, int h) { return Dim3{ceil_div(w, 32), ceil_div(h, 8), 1}; }

int sgm_pixel_bits(const SgmParams& p, const Image16& l, const Image16& r) {
  return p.cost == CostKind::census && std::max(l.maxval, r.maxval) > 255 ? 16 : 8;
}
bool sgm_pixels_exact(const SgmParams& p, const Image16& l, const Image16& r) {
  return sgm_pixel_bits(p, l, r) == 16 || (l.maxval == 255 && r.maxval == 255);
}

void SgmPipeline::set_rectify(const RectifyMaps& m) {
  const std::size_t npx = static_cast<std::size_t>(layout_.width) * layout_.height;
  check_rectify_size(m, layout_.width, layout_.height);
  for (int c = 0; c < 2; ++c)
    if (m.x[c].size() != npx || m.y[c].size() != npx) throw std::logic_error("SgmPipeline: rectify maps of the wrong size");
  if (!raw_[0]) {
    for (auto& r : raw_) r = dev_.alloc(npx * (bits_ / 8)), bytes_ += npx * (bits_ / 8);
    for (auto& r : rmap_) r = dev_.alloc(npx * 4), bytes_ += npx * 4;
  }
  for (int c = 0; c < 2; ++c) {
    dev_.to_device(rmap_[2 * c], m.x[c].data(), npx * 4);
    dev_.to_device(rmap_[2 * c + 1], m.y[c].data(), npx * 4);
  }
  dev_.synchronize();  // the maps' host memory may go once this returns
}

void SgmPipeline::rectify(int i) {
  int W = layout_.width, H = layout_.height;
  void* a[] = {&raw_[i], &rmap_[2 * i], &rmap_[2 * i + 1], &W, &H, &img_[i]};
  dev_.launch(bits_ == 8 ? "sgm_rectify_u8" : "sgm_rectify_u16", sgm_rectify_grid(W, H), kSgmRectifyBlock, 0, a);
}

void SgmPipeline::download_image(int i, void* dst) {
  dev_.to_host(dst, img_[i], static_cast<std::size_t>(layout_.width) * layout_.height * (bits_ / 8));
}

void SgmPipeline::upload(const void* left, const void* right, bool raw) {
  const std::size_t n = static_cast<std::size_t>(layout_.width) * layout_.height * (bits_ / 8);
  const bool remap = raw && raw_[0];
  dev_.to_device(remap ? raw_[0] : img_[0], left, n);
  dev_.to_device(remap ? raw_[1] : img_[1], right, n);
  if (remap) enqueue_rectify();
}

void SgmPipeline::enqueue_rectify() {
  if (!raw_[0]) throw std::logic_error("SgmPipeline::enqueue_rectify: no maps (set_rectify)");
  rectify(0);
  rectify(1);
}

void SgmPipeline::compute() {
  enqueue_cost();
  enqueue_aggregate();
  enqueue_wta();
  enqueue_post();
}

void SgmPipeline::enqueue_cost() {
  const SgmLayout& l = layout_;
  int W = l.width, H = l.height, dmin = l.min_disparity, D = l.count, Dp = l.Dp;
  if (p_.cost == CostKind::census) {
    census(0);
    census(1);
  } else {
    int radius = p_.window / 2, squared = p_.cost == CostKind::ssd ? 1 : 0;
    void* a[] = {&img_[0], &img_[1], &cost_, &W, &H, &dmin, &D, &Dp, &radius, &squared};
    dev_.launch("sgm_cost_window", Dim3{ceil_div(static_cast<long long>(W) * Dp, 256), static_cast<unsigned>(H), 1},
                Dim3{256, 1, 1}, 0, a);
  }
}

void SgmPipeline::census(int i) {
  // the left codes once; the right ones in their padded rows (kernel 3: four shifted copies)
  const SgmLayout& l = layout_;
  int W = l.width, H = l.height;
  const char* name = bits_ == 8 ? "sgm_census_u8" : "sgm_census_u16";
  const Dim3 grid = sgm_census_grid(W, H), block = kSgmCensusBlock;
  if (i == 0) {
    int pitch = W, off = 0;
    void* a0[] = {&img_[0], &W, &H, &census_[0], &pitch, &off};
    dev_.launch(name, grid, block, 0, a0);
    return;
  }
  int rpitch = choice_.agg == 3 ? sgm_agg3_copy_pitch(l) : l.right_pitch, roff = l.right_offset;
  void* a1[] = {&img_[1], &W, &H, &census_[1], &rpitch, &roff};
  const std::string rname = choice_.agg == 3 ? (bits_ == 8 ? "sgm_census4_u8" : "sgm_census4_u16") : name;
  dev_.launch(rname, grid, block, 0, a1);
}

void SgmPipeline::enqueue_aggregate(int only) {
  // every direction in one launch (blockIdx.y = direction), or direction `only` alone (its own
  // volume, for per-direction timings)
  const SgmLayout& l = layout_;
  int W = l.width, H = l.height, dmin = l.min_disparity, D = l.count, Dp = l.Dp, G = l.G, Gs = l.Gs;
  int P1 = p_.p1, P2 = p_.p2;
  if (only >= p_.paths) throw std::logic_error("enqueue_aggregate: no such direction");
  const bool census = p_.cost == CostKind::census;
  const std::string name = sgm_aggregate_kernel(l, choice_, census);
  const bool agg3 = census && choice_.agg == 3;
  if (agg3) Gs = sgm_agg3_lanes(l, choice_.k3);  // kernel 3's own lanes per cell
  const int lines = SgmLayout::kAggregateThreads / Gs;
  int rpitch = agg3 ? sgm_agg3_copy_pitch(l) : l.right_pitch, roff = l.right_offset, dir0 = only >= 0 ? only : 0;
  void* none = nullptr;
  void* cl = census ? census_[0] : none;
  void* cr = census ? census_[1] : none;
  void* vol = census ? none : cost_;
  void* out = paths_;
  if (only >= 0) out = static_cast<char*>(paths_) + l.volume_bytes(only);
  void* a[] = {&cl, &cr, &rpitch, &roff, &vol, &out, &W, &H, &dmin, &D, &Dp, &G, &Gs, &P1, &P2, &dir0};
  const std::size_t smem =
      agg3 ? 0 : (census && choice_.agg == 2 ? sgm_agg2_smem(l) : (choice_.staged ? sgm_staged_smem(l) : 0));
  unsigned gx = ceil_div(std::max(W, H), lines);
  if (agg3 && choice_.split3) gx = std::max(gx, ceil_div(H, lines / 2));  // horizontal lines on twice the lanes
  dev_.launch(name, Dim3{gx, only >= 0 ? 1u : static_cast<unsigned>(p_.paths), 1}, Dim3{SgmLayout::kAggregateThreads, 1, 1},
              smem, a);
}

void SgmPipeline::enqueue_wta() { wta_rows(0, layout_.height); }

void SgmPipeline::wta_rows(int y0, int rows) {
  // wta + uniqueness + sub-pixel (+ the right map), one block per row
  const SgmLayout& l = layout_;
  int W = l.width, H = l.height, dmin = l.min_disparity, D = l.count, Dp = l.Dp, G = l.G, Gs = l.Gs, first = y0;
  left_ = 0;
  right_ = 1;
  const bool want_right = p_.post.needs_right();
  int paths = p_.paths, uniq = p_.post.uniqueness, sub = static_cast<int>(p_.post.subpixel);
  void* none = nullptr;
  void* right = want_right ? map_[right_] : none;
  void* a[] = {&paths_, &paths, &W, &H, &dmin, &D, &Dp, &G, &Gs, &uniq, &sub, &map_[left_], &right, &first};
  dev_.launch(sgm_wta_kernel(l, choice_), Dim3{static_cast<unsigned>(rows), 1, 1}, Dim3{SgmLayout::kWtaThreads, 1, 1},
              sgm_wta_smem(W, l.K, want_right, sub != 0), a);
}

void SgmPipeline::enqueue_post() {
  post_rows(0, layout_.height);
  post_done();
}

void SgmPipeline::post_rows(int y0, int rows) {
  // reads maps 0 (left) and 1 (right) as the wta left them, writes 2 and 3; post_done() swaps
  if (rows <= 0) return;
  int W = layout_.width, H = layout_.height, maxd = p_.post.lr_check, first = y0;
  const Dim3 grid{ceil_div(W, 256), static_cast<unsigned>(rows), 1}, block{256, 1, 1};
  switch (post_kind(p_.post)) {
    case Post::median_lr: {
      void* a[] = {&map_[0], &map_[1], &map_[2], &map_[3], &W, &H, &maxd, &first};
      dev_.launch("sgm_median3_lr", grid, block, 0, a);
      break;
    }
    case Post::median: {
      void* a[] = {&map_[0], &map_[2], &W, &H, &first};
      dev_.launch("sgm_median3", grid, block, 0, a);
      if (p_.post.needs_right()) {
        void* b[] = {&map_[1], &map_[3], &W, &H, &first};
        dev_.launch("sgm_median3", grid, block, 0, b);
      }
      break;
    }
    case Post::lr: {
      void* a[] = {&map_[0], &map_[1], &map_[2], &W, &H, &maxd, &first};
      dev_.launch("sgm_lr_check", grid, block, 0, a);
      break;
    }
    case Post::none:
      break;
  }
}

void SgmPipeline::post_done() {
  const Post k = post_kind(p_.post);
  if (k == Post::none) return;
  std::swap(map_[0], map_[2]);
  if (k == Post::median_lr || (k == Post::median && p_.post.needs_right())) std::swap(map_[1], map_[3]);
}

void SgmPipeline::enqueue_median() {
  int W = layout_.width, H = layout_.height, first = 0;
  const Dim3 pgrid{ceil_div(W, 256), static_cast<unsigned>(H), 1}, pblock{256, 1, 1};
  if (p_.post.median == 3) {
    void* a[] = {&map_[left_], &map_[2], &W, &H, &first};
    dev_.launch("sgm_median3", pgrid, pblock, 0, a);
    std::swap(map_[left_], map_[2]);
    if (p_.post.needs_right()) {
      void* b[] = {&map_[right_], &map_[3], &W, &H, &first};
      dev_.launch("sgm_median3", pgrid, pblock, 0, b);
      std::swap(map_[right_], map_[3]);
    }
  }
}

void SgmPipeline::enqueue_lr_check() {
  int W = layout_.width, H = layout_.height, first = 0;
  const Dim3 pgrid{ceil_div(W, 256), static_cast<unsigned>(H), 1}, pblock{256, 1, 1};
  if (p_.post.lr_check >= 0) {
    int maxd = p_.post.lr_check;
    void* a[] = {&map_[left_], &map_[right_], &map_[2], &W, &H, &maxd, &first};
    dev_.launch("sgm_lr_check", pgrid, pblock, 0, a);
    std::swap(map_[left_], map_[2]);
  }
}

void SgmPipeline::download(std::int16_t* left, std::int16_t* right) {
  const std::size_t n = static_cast<std::size_t>(layout_.width) * layout_.height * 2;
  dev_.to_host(left, map_[left_], n);
  if (right && p_.post.needs_right()) dev_.to_host(right, map_[right_], n);
}

void SgmPipeline::poison() {
  const std::size_t npx = static_cast<std::size_t>(layout_.width) * layout_.height;
  dev_.fill(paths_, 0xA5, layout_.volume_bytes(p_.paths));
  for (void* m : map_) dev_.fill(m, 0xA5, npx * 2);
  if (cost_) dev_.fill(cost_, 0xA5, npx * layout_.Dp);
}

void SgmPipeline::finish_host(DisparityQ& left) const {
  if (p_.post.speckle_size > 0) speckle_cpu(left, p_.post.speckle_size, p_.post.speckle_range);
}
}  // namespace evk::stereo
