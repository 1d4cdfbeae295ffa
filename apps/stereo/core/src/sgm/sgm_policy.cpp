// The SGM pipeline's plan, pure host logic: the work split (sgm_layout), the tuning policy
// (sgm_choose), kernel 3's lanes, the kernels' shared memory and entry names.
#include <algorithm>
#include <string>

#include "core/sgm_gpu.hpp"
#include "core/src/sgm/pipeline_detail.h"
#include "core/src/sgm/sgm_agg2.h"
#include "core/src/sgm/sgm_math.h"
#include "evk/error.hpp"

namespace evk::stereo {

using detail::ceil_div;
using detail::pow2ceil;

static_assert(sgm_agg2::kThreads == SgmLayout::kAggregateThreads, "both aggregation kernels use 128 threads");


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
// A second sweep (same H100 model, one run, kernel x K x loads): kernel 2 K 16 at 64/4
// (1.411 ms vs K 8 1.502) and K 32 at 256/8 (5.706 vs K 16 6.211) took those rows; elsewhere the
// fastest differed from the table by 2% or less (64/8 kernel 2 K 32 2.023 vs 2.067; 128/8 the
// seed's prefetched loads 2.925 vs direct 2.980), within what one sweep can tell apart, so those
// rows stay.
// Then (H100, kernel 3 = aggregate_vec.cu with one cell in flight and 8 blocks per SM at
// K3 <= 8; its lanes' K swept in one run beside kernels 1 and 2, default setting, median ms,
// bench/gi/runs/h100-2026-11-24-sgm3/h100-final): 64/4 K3 4 1.324 vs kernel 2 1.500 (K 8) / 1.409
// (K 16); 64/8 K3 8 1.884 vs the seed 2.062; 128/4 K3 8 1.837 vs kernel 2 2.055; 128/8 K3 8 2.830
// vs the seed 2.971 (K3 16 3.226: 80 registers); 256/4 K3 8 2.845 vs kernel 2 3.283; 256/8 K3 16
// 5.045 vs kernel 2 5.764. Kernel 3 at every row; kernels 1 and 2 stay for sad/ssd, > 512
// disparities and explicit tuning. At 64 disparities the layout's K (the wta's) is 16: the wta took
// 0.253 ms with K 16 (kernel 2's rows) against 0.303 with K 8 at 64/4.
// Then (H100, same sweep plus kernel 3 with its horizontal directions split, "3s": K3/2 on
// twice the lanes; bench/gi/runs/h100-2026-11-24-sgm4/tuning): 128/4 3s K3 16 1.566 ms vs 3 K3 8 1.672;
// 128/8 3s K3 16 2.632 vs 2.680; 256/8 3s K3 16 4.540 vs 3 K3 16 4.675; 256/4 a tie (2.610 / 2.611:
// the row stays); at 64 disparities the split was slower (64/4 1.180 vs 1.142, 64/8 1.744 vs 1.661).
// Then (kernel 3 without per-group predicates where the lanes hold exactly D, and no
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

std::string sgm_wta_kernel(const SgmLayout& l, const SgmChoice& c) {
  return (c.wta == 1 ? std::string("sgm_wta_k") : "sgm_wta" + std::to_string(c.wta) + "_k") + std::to_string(l.K) +
         (l.store16 ? "_u16" : "_u8");
}

}  // namespace evk::stereo
