// The SGM pipeline on an SgmDevice: buffers, launch geometry and the order of the stages.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "evk/error.hpp"
#include "evk/stereo/sgm_gpu.hpp"
#include "evk/task_pool.hpp"
#include "sgm_agg2.h"
#include "sgm_math.h"

namespace evk::stereo {

static_assert(sgm_agg2::kThreads == SgmLayout::kAggregateThreads, "both aggregation kernels use 128 threads");

namespace {
int pow2ceil(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}
unsigned ceil_div(long long a, long long b) { return static_cast<unsigned>((a + b - 1) / b); }
}  // namespace

std::size_t SgmLayout::volume_bytes(int paths) const {
  return static_cast<std::size_t>(paths) * width * height * Dp * (store16 ? 2 : 1);
}

SgmLayout sgm_layout(int W, int H, const SgmParams& p, int k) {
  validate(p);
  if (W <= 0 || H <= 0) input_error("images", "empty image");
  SgmLayout l;
  l.width = W;
  l.height = H;
  l.count = p.count();
  l.min_disparity = p.min_disparity;
  // Default lane width from the H100 sweep (bench/stereo/sgm_vs_libsgm.sh, 1920x1080, 8 paths, direct
  // loads): K 8 fastest up to 64 disparities (2.07 ms vs 2.18 with K 16), K 16 beyond (128: 2.98 ms
  // vs 3.40 / 3.95; 256: 6.67 vs 7.34 / 7.13).
  if (k == 0) k = l.count <= 64 ? 8 : (l.count <= 512 ? 16 : 32);
  if (k != 8 && k != 16 && k != 32) input_error("sgm layout", "disparities per lane must be 8, 16 or 32");
  if ((l.count + k - 1) / k > 32) k = 32;  // at most 32 lanes per cell
  l.K = k;
  l.G = (l.count + k - 1) / k;
  l.Gs = pow2ceil(l.G);
  l.Dp = l.G * k;
  l.store16 = p.cost_max() + p.p2 > 255;
  l.right_offset = std::max(0, p.min_disparity + l.Dp - 1);
  l.right_pitch = l.right_offset + W + std::max(0, -p.min_disparity);
  return l;
}

SgmTuning SgmTuning::from_env() {
  SgmTuning t;
  if (const char* k = std::getenv("EVK_SGM_K")) t.k = std::atoi(k);
  if (const char* l = std::getenv("EVK_SGM_LOADS")) {
    t.staged = std::string(l) == "staged";
    t.direct = std::string(l) == "direct";
    t.prefetch = std::string(l) == "prefetch";
  }
  if (const char* a = std::getenv("EVK_SGM_AGG")) t.agg = std::atoi(a);
  if (const char* k3 = std::getenv("EVK_SGM_K3")) t.k3 = std::atoi(k3);
  if (const char* s3 = std::getenv("EVK_SGM_SPLIT3")) t.split3 = std::atoi(s3) != 0 ? 1 : 0;
  if (const char* w = std::getenv("EVK_SGM_WTA")) t.wta = std::atoi(w);
  if (const char* b = std::getenv("EVK_SGM_BANDS")) t.bands = std::atoi(b);
  if (const char* c = std::getenv("EVK_SGM_COPY_THREADS")) t.copy_threads = std::atoi(c);
  if (const char* c = std::getenv("EVK_SGM_COPY_CHUNK")) t.copy_chunk_kib = std::atoi(c);
  return t;
}

// The tuning policy by (disparities, paths), CUB-style: kernel, lanes, loads per setting.
// Kernel 2 rows are the design's choice, not yet measured: its lanes hold the K that was fastest for
// the seed. bench/stereo/sgm_vs_libsgm.sh sweeps kernel x K (x the seed's loads) at every setting
// and prints the fastest as rows of this table: what it should hold.
// Measured for the seed on the H100 (1920x1080): 8 paths, direct loads: K 8 up to 64 disparities
// (2.07 ms vs 2.18 with K 16), K 16 beyond (128: 2.98 ms vs 3.40 / 3.95; 256: 6.67 vs 7.34 / 7.13);
// 256/4: staged loads 3.89 ms, direct 4.64.
namespace {
// Measured on an NVIDIA H100 at 1920x1080 (bench/stereo/sgm_vs_libsgm.sh, 2026-11-23, old = the
// seed kernel, new = kernel 2, median ms): 64/4 1.660 vs 1.500, 64/8 2.068 vs 2.441, 128/4 2.183 vs
// 2.086, 128/8 2.975 vs 4.533, 256/4 4.669 vs 3.282, 256/8 6.687 vs 6.195: kernel 2 wins with 4
// paths and at 256/8, the seed with 8 paths up to 128 (kernel 2's diagonal passes are slower).
// Seventh session's sweep (same H100 model, one run, kernel x K x loads): kernel 2 K 16 at 64/4
// (1.411 ms vs K 8 1.502) and K 32 at 256/8 (5.706 vs K 16 6.211) took those rows; elsewhere the
// fastest differed from the table by 2% or less (64/8 kernel 2 K 32 2.023 vs 2.067; 128/8 the
// seed's prefetched loads 2.925 vs direct 2.980), within what one sweep can tell apart, so those
// rows stay.
// Ninth session (H100, kernel 3 = aggregate_vec.cu with one cell in flight and 8 blocks per SM at
// K3 <= 8; its lanes' K swept in one run beside kernels 1 and 2, default setting, median ms,
// bench/gi/runs/h100-2026-11-24-sgm3/h100-final): 64/4 K3 4 1.324 vs kernel 2 1.500 (K 8) / 1.409
// (K 16); 64/8 K3 8 1.884 vs the seed 2.062; 128/4 K3 8 1.837 vs kernel 2 2.055; 128/8 K3 8 2.830
// vs the seed 2.971 (K3 16 3.226: 80 registers); 256/4 K3 8 2.845 vs kernel 2 3.283; 256/8 K3 16
// 5.045 vs kernel 2 5.764. Kernel 3 at every row; kernels 1 and 2 stay for sad/ssd, > 512
// disparities and explicit tuning. At 64 disparities the layout's K (the wta's) is 16: the wta took
// 0.253 ms with K 16 (kernel 2's rows) against 0.303 with K 8 at 64/4.
// Tenth session (H100, same sweep plus kernel 3 with its horizontal directions split, "3s": K3/2 on
// twice the lanes; bench/gi/runs/h100-2026-11-24-sgm4/tuning): 128/4 3s K3 16 1.566 ms vs 3 K3 8 1.672;
// 128/8 3s K3 16 2.632 vs 2.680; 256/8 3s K3 16 4.540 vs 3 K3 16 4.675; 256/4 a tie (2.610 / 2.611:
// the row stays); at 64 disparities the split was slower (64/4 1.180 vs 1.142, 64/8 1.744 vs 1.661).
// Eleventh session (kernel 3 without per-group predicates where the lanes hold exactly D, and no
// register copies per step; bench/gi/runs/h100-2026-11-24-sgm5/): 256/4 K3 16 2.319 ms vs K3 8
// 2.491 (so that row moved to 16); the other rows held (64/4 K3 4 0.902, 64/8 K3 8 1.416, 128/4
// K3 16 split 1.419, 128/8 K3 16 split 2.355, 256/8 K3 16 split 4.076). The wta column: the wta
// stage at the default setting, same H100, wta 2 / the keys' wta 3, once both had launch bounds and
// 4 paths their next cell's loads ahead: 64/4 0.213 / 0.210, 64/8 0.407 / 0.375, 128/4 0.408 /
// 0.399, 128/8 0.799 / 0.732, 256/4 0.869 / 0.803, 256/8 1.637 / 1.453 (sub-pixel alike).
const SgmPolicy kPolicy[] = {
    {64, 4, 3, 16, false, 4, false, 3},   {64, 8, 3, 16, false, 8, false, 3},   //
    {128, 4, 3, 16, false, 16, true, 3},  {128, 8, 3, 16, false, 16, true, 3},  //
    {256, 4, 3, 16, false, 16, false, 3}, {256, 8, 3, 16, false, 16, true, 3},  //
};
}  // namespace

const SgmPolicy* sgm_policy_table(int* rows) {
  if (rows) *rows = static_cast<int>(sizeof kPolicy / sizeof kPolicy[0]);
  return kPolicy;
}

SgmChoice sgm_choose(const SgmParams& p, const SgmTuning& t) {
  const int count = p.count();
  SgmChoice c;
  c.agg = 2;
  c.k = count <= 64 ? 8 : (count <= 512 ? 16 : 32);  // the fallback
  bool staged = false;
  int wta = 2;
  for (const SgmPolicy& row : kPolicy)
    if (count <= row.max_count && p.paths == row.paths) {
      c.agg = row.agg;
      c.k = row.k;
      c.k3 = row.k3;
      c.split3 = row.split3;
      staged = row.staged;
      wta = row.wta;
      break;
    }
  if (t.agg != 0) {
    if (t.agg < 1 || t.agg > 3) input_error("sgm tuning", "aggregation kernel must be 1, 2 or 3");
    if (t.agg != c.agg) {  // that kernel's own defaults
      c.k = count <= 64 ? 8 : (count <= 512 ? 16 : 32);
      c.k3 = 0;
      c.split3 = false;
      staged = false;
    }
    c.agg = t.agg;
  }
  if (t.k3 != 0) {
    if (t.k3 != 4 && t.k3 != 8 && t.k3 != 16) input_error("sgm tuning", "kernel 3's disparities per lane must be 4, 8 or 16");
    c.k3 = t.k3;
  }
  if (t.split3 >= 0) c.split3 = t.split3 == 1;
  if (c.agg == 3 && count > 512) c.agg = 2;   // kernel 3 runs up to 512 disparities
  if (p.cost != CostKind::census) c.agg = 1;  // stored sad/ssd costs: the seed's volume mode
  if (t.k != 0) c.k = t.k;
  if (t.staged) staged = true;
  if (t.direct || t.prefetch) staged = false;
  c.staged = c.agg == 1 && p.cost == CostKind::census && staged;
  c.prefetch = c.agg == 1 && p.cost == CostKind::census && t.prefetch;
  if (t.wta < 0 || t.wta > 3) input_error("sgm tuning", "wta kernel must be 1, 2 or 3");
  c.wta = t.wta != 0 ? t.wta : (c.agg == 1 ? 1 : wta);
  return c;
}

int sgm_agg3_k(const SgmLayout& l, int k3) {
  if (k3 == 0) k3 = l.Dp <= 128 ? 4 : (l.Dp <= 256 ? 8 : 16);
  while (k3 < 16 && (l.Dp + k3 - 1) / k3 > 32) k3 *= 2;
  return k3;
}

int sgm_agg3_lanes(const SgmLayout& l, int k3) {
  if (l.Dp % 4 != 0) return 0;
  const int k = sgm_agg3_k(l, k3);
  const int lanes = std::max(8, pow2ceil((l.Dp + k - 1) / k));  // entries for 8, 16 and 32 lanes
  return lanes <= 32 ? lanes : 0;
}

bool sgm_agg3_can_split(const SgmLayout& l, int k3) {
  const int lanes = sgm_agg3_lanes(l, k3);
  return lanes != 0 && lanes <= 16 && sgm_agg3_k(l, k3) >= 8;
}

int sgm_agg3_copy_pitch(const SgmLayout& l) { return (l.right_pitch + 3 + 3) / 4 * 4; }

bool sgm_agg3_offsets_fit(const SgmLayout& l) {
  const long long words = 4LL * sgm_agg3_copy_pitch(l) * l.height + 4;  // the four copies
  return words < 2147483647LL && static_cast<long long>(l.width) * l.height < 2147483647LL;
}

Dim3 sgm_census_grid(int width, int height) { return Dim3{ceil_div(width, 32), ceil_div(height, 32), 1}; }

std::size_t sgm_wta_smem(int width, int k, bool right, bool subpixel) {
  return (right ? static_cast<std::size_t>(sgm_math::wta_rkey_words(width)) * 4 : 0) +
         (subpixel ? static_cast<std::size_t>(SgmLayout::kWtaThreads) * (k / 2) * 4 : 0);
}

std::size_t sgm_staged_smem(const SgmLayout& l) {
  const int seg = l.Dp + SgmLayout::kAggregateThreads / l.Gs - 1;
  const int pos = (seg - 1) + 5 * ((seg - 1) >> 5) + 1;  // staged_pos(seg - 1) + 1 of sgm_aggregate.cu
  return static_cast<std::size_t>(pos) * 4 * 4;         // A and B, double-buffered
}

std::size_t sgm_agg2_smem(const SgmLayout& l) { return static_cast<std::size_t>(sgm_agg2::staged_bytes(l.Dp, l.Gs, l.K)); }

std::string sgm_aggregate_kernel(const SgmLayout& l, const SgmChoice& c, bool census) {
  const std::string k = std::to_string(l.K), st = l.store16 ? "_u16" : "_u8";
  if (census && c.agg == 3)
    return std::string(c.split3 ? "sgm_aggregate3s_k" : "sgm_aggregate3_k") + std::to_string(sgm_agg3_k(l, c.k3)) + "_g" + std::to_string(sgm_agg3_lanes(l, c.k3)) + st;
  if (census && c.agg == 2) return "sgm_aggregate2_k" + k + st;
  return "sgm_aggregate_k" + k + st + (census ? (c.staged ? "_staged" : (c.prefetch ? "_prefetch" : "_census")) : "_volume");
}

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
  for (void* h : stage_)
    if (h) dev_.release_host(h);
}

void SgmPipeline::upload(const void* left, const void* right) {
  const std::size_t n = static_cast<std::size_t>(layout_.width) * layout_.height * (bits_ / 8);
  dev_.to_device(img_[0], left, n);
  dev_.to_device(img_[1], right, n);
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

namespace {
std::string wta_kernel(const SgmLayout& l, const SgmChoice& c) {
  return (c.wta == 1 ? std::string("sgm_wta_k") : "sgm_wta" + std::to_string(c.wta) + "_k") + std::to_string(l.K) +
         (l.store16 ? "_u16" : "_u8");
}
// The post-processing the parameters ask for: both medians and the LR check in one launch
// (sgm_median3_lr of median.cu), the median alone, the LR check alone, or none.
enum class Post { none, median_lr, median, lr };
Post post_kind(const PostParams& q) {
  if (q.median == 3 && q.lr_check >= 0) return Post::median_lr;
  if (q.median == 3) return Post::median;
  return q.lr_check >= 0 ? Post::lr : Post::none;
}
}  // namespace

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
  dev_.launch(wta_kernel(l, choice_), Dim3{static_cast<unsigned>(rows), 1, 1}, Dim3{SgmLayout::kWtaThreads, 1, 1},
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

const std::vector<int>& SgmPipeline::bands() const {
  if (!bands_.empty()) return bands_;  // the layout, tuning and device never change
  const int H = layout_.height;
  int n = tuning_.bands, rows = 0;
  if (n <= 0) {
    // whole waves of wta blocks (1920x1080 on an H100, 4 blocks per SM: 528 rows, so two bands; the
    // remainder joins the last). Bands of less than a wave leave the GPU short of loads in flight:
    // H100, 1920x1080, pinned buffers, 4 equal bands against these 2: 256/4 2.56 vs 2.22 ms, 256/8
    // 4.17 vs 4.09 (128/8 2.27 vs 2.26).
    const int wave = dev_.resident_blocks(wta_kernel(layout_, choice_), Dim3{SgmLayout::kWtaThreads, 1, 1},
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
    if (pinned_in)
      dev_.to_device(img_[i], src, in);
    else
      stage_in(src, img_[i], i, in);
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
    auto to8 = [&](const Image16& im) {
      Image8 o{im.width, im.height, std::vector<std::uint8_t>(im.pixels.size())};
      const unsigned m = static_cast<unsigned>(im.maxval);
      for (std::size_t i = 0; i < im.pixels.size(); ++i)
        o.pixels[i] = static_cast<std::uint8_t>((im.pixels[i] * 255u + m / 2) / m);
      return o;
    };
    if (p_.cost == CostKind::census && (L.maxval > 255 || R.maxval > 255))
      throw std::logic_error("SgmPipeline: 16-bit census needs a 16-bit pipeline");
    Image8 l8 = to8(L), r8 = to8(R);
    return run_impl(*this, L, R, l8.pixels.data(), r8.pixels.data());
  }
  return run_impl(*this, L, R, L.pixels.data(), R.pixels.data());
}

}  // namespace evk::stereo
