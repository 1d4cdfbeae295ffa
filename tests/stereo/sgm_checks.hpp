// Checks of the SGM device kernels through an SgmDevice: each stage alone against its CPU
// reference on odd sizes with random data (outputs poisoned first), then the whole pipeline against
// sgm_cpu. Run by the CUDA emulator (sgm_emu_test.cpp, CPU) and on a real GPU (sgm_gpu_test.cpp).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/sgm.hpp"
#include "core/reference.hpp"
#include "core/sgm_gpu.hpp"
#include "core/ssd_expert.hpp"
#include "core/stream.hpp"
#include "core/synthetic.hpp"
#include <functional>
#include <mutex>

namespace sgm_checks {
using namespace evk::stereo;

inline Image16 random16(int w, int h, int maxval, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Image16 im{w, h, maxval, std::vector<std::uint16_t>(static_cast<std::size_t>(w) * h)};
  for (auto& p : im.pixels) p = static_cast<std::uint16_t>(rng() % static_cast<unsigned>(maxval + 1));
  return im;
}

// A device buffer holding a copy of v, or count elements of poison (0xA5 bytes).
template <class T>
struct Buf {
  SgmDevice& dev;
  void* p;
  std::size_t n;
  Buf(SgmDevice& d, std::size_t count) : dev(d), p(d.alloc(count * sizeof(T))), n(count) { dev.fill(p, 0xA5, n * sizeof(T)); }
  Buf(SgmDevice& d, const std::vector<T>& v) : Buf(d, v.size()) { dev.to_device(p, v.data(), n * sizeof(T)); }
  ~Buf() { dev.release(p); }
  std::vector<T> get() const {
    std::vector<T> v(n);
    dev.to_host(v.data(), p, n * sizeof(T));
    dev.synchronize();
    return v;
  }
};

inline std::string first_diff(const DisparityQ& a, const DisparityQ& b) {
  if (a.width != b.width || a.height != b.height) return "sizes differ";
  for (std::size_t i = 0; i < a.q.size(); ++i)
    if (a.q[i] != b.q[i])
      return "pixel (" + std::to_string(i % a.width) + "," + std::to_string(i / a.width) + "): " +
             std::to_string(a.q[i]) + " vs " + std::to_string(b.q[i]);
  return "";
}

inline void census(SgmDevice& dev) {
  const int sizes[][2] = {{37, 23}, {101, 67}, {1, 1}, {5, 40}, {64, 9}, {33, 65}, {70, 32}};
  std::uint64_t seed = 1;
  for (auto [w, h] : sizes) {
    for (int bits : {8, 16}) {
      // copies 1: sgm_census_*; 4: sgm_census4_* (copy q, h pitch words after copy q - 1, shifted by q)
      for (int copies : {1, 4}) {
        Image16 im = random16(w, h, bits == 8 ? 255 : 4095, seed++);
        if (bits == 8) {  // few grey levels: many equal pairs (bit 0)
          for (auto& p : im.pixels) p = static_cast<std::uint16_t>(p % 4);
        }
        std::vector<std::uint32_t> ref;
        const int pitch = w + 7 + 4, off = 3;
        Buf<std::uint32_t> out(dev, static_cast<std::size_t>(pitch) * h * copies);
        dev.fill(out.p, 0, out.n * 4);  // the padding columns stay 0: the kernel writes only the image
        int W = w, H = h;
        const std::string suffix = bits == 8 ? "_u8" : "_u16";
        const std::string name = (copies == 4 ? "sgm_census4" : "sgm_census") + suffix;
        const Dim3 grid = sgm_census_grid(w, h);
        if (bits == 8) {
          Image8 im8{w, h, std::vector<std::uint8_t>(im.pixels.begin(), im.pixels.end())};
          ref = census_cpu(im8);
          Buf<std::uint8_t> in(dev, im8.pixels);
          void* a[] = {&in.p, &W, &H, &out.p, const_cast<int*>(&pitch), const_cast<int*>(&off)};
          dev.launch(name, grid, kSgmCensusBlock, 0, a);
        } else {
          ref = census_cpu(im);
          Buf<std::uint16_t> in(dev, im.pixels);
          void* a[] = {&in.p, &W, &H, &out.p, const_cast<int*>(&pitch), const_cast<int*>(&off)};
          dev.launch(name, grid, kSgmCensusBlock, 0, a);
        }
        std::vector<std::uint32_t> got = out.get();
        long long bad = 0;
        for (int q = 0; q < copies; ++q)
          for (int y = 0; y < h; ++y)
            for (int x = 0; x < pitch; ++x) {
              const std::uint32_t g = got[(static_cast<std::size_t>(q) * h + y) * pitch + x];
              const bool in_image = x >= off + q && x < off + q + w;
              bad += in_image ? g != ref[static_cast<std::size_t>(y) * w + x - off - q] : g != 0;
            }
        EXPECT_EQ(bad, 0) << w << "x" << h << " " << bits << " bit, " << name;
      }
    }
  }
}

inline void window_cost(SgmDevice& dev) {
  struct Case {
    int w, h, mind, maxd, window;
    CostKind kind;
  } cases[] = {{37, 23, -5, 20, 3, CostKind::sad}, {37, 23, 0, 31, 5, CostKind::ssd}, {13, 7, 2, 2, 1, CostKind::sad},
               {29, 11, -3, 40, 7, CostKind::ssd}};
  std::uint64_t seed = 10;
  for (const Case& c : cases) {
    Image8 l = random_image(c.w, c.h, seed++), r = random_image(c.w, c.h, seed++);
    SgmParams p;
    p.min_disparity = c.mind;
    p.max_disparity = c.maxd;
    p.cost = c.kind;
    p.window = c.window;
    const SgmLayout lay = sgm_layout(c.w, c.h, p);
    CostVolume ref = cost_cpu(l, r, p);
    Buf<std::uint8_t> bl(dev, l.pixels), br(dev, r.pixels);
    Buf<std::uint8_t> vol(dev, static_cast<std::size_t>(c.w) * c.h * lay.Dp);
    int W = c.w, H = c.h, dmin = c.mind, D = p.count(), Dp = lay.Dp, radius = c.window / 2,
        sq = c.kind == CostKind::ssd;
    void* a[] = {&bl.p, &br.p, &vol.p, &W, &H, &dmin, &D, &Dp, &radius, &sq};
    dev.launch("sgm_cost_window", {static_cast<unsigned>((W * Dp + 255) / 256), static_cast<unsigned>(H), 1},
               {256, 1, 1}, 0, a);
    std::vector<std::uint8_t> got = vol.get();
    long long bad = 0;
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        for (int k = 0; k < Dp; ++k) {
          const int g = got[(static_cast<std::size_t>(y) * W + x) * Dp + k];
          bad += k < D ? g != ref.at(x, y, k) : g != 0;
        }
    EXPECT_EQ(bad, 0) << c.w << "x" << c.h << " window " << c.window;
  }
}

// Runs an aggregation kernel (agg 1: the seed, direct, prefetched direct or staged loads; 2:
// aggregate_fast.cu) for the given directions; returns the volumes [dir][y][x][Dp].
inline std::vector<int> aggregate_dev(SgmDevice& dev, const CostVolume& c, const SgmParams& p, const SgmLayout& l,
                               int dir0, int ndirs, bool staged, int agg = 1, bool prefetch = false, int k3 = 0,
                               bool split3 = false) {
  const int W = c.width, H = c.height;
  const bool agg3 = agg == 3 && c.kind == CostKind::census;
  // kernel 3: four copies of the padded rows, copy q shifted right by q words (as sgm_census4_* writes them)
  const int rpitch = agg3 ? sgm_agg3_copy_pitch(l) : l.right_pitch;
  std::vector<std::uint32_t> cr(static_cast<std::size_t>(rpitch) * H * (agg3 ? 4 : 1), 0u);
  std::vector<std::uint8_t> vol;
  if (c.kind == CostKind::census) {
    for (int q = 0; q < (agg3 ? 4 : 1); ++q)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
          cr[(static_cast<std::size_t>(q) * H + y) * rpitch + l.right_offset + x + q] =
              c.census_right[static_cast<std::size_t>(y) * W + x];
  } else {
    vol.assign(static_cast<std::size_t>(W) * H * l.Dp, 0);
    for (std::size_t i = 0; i < static_cast<std::size_t>(W) * H; ++i)
      for (int k = 0; k < c.count; ++k) vol[i * l.Dp + k] = c.stored[i * c.count + k];
  }
  Buf<std::uint32_t> bcl(dev, c.kind == CostKind::census ? c.census_left : std::vector<std::uint32_t>(1));
  Buf<std::uint32_t> bcr(dev, cr);
  Buf<std::uint8_t> bvol(dev, vol.empty() ? std::vector<std::uint8_t>(1) : vol);
  const std::size_t n = static_cast<std::size_t>(ndirs) * W * H * l.Dp;
  Buf<std::uint8_t> out(dev, n * (l.store16 ? 2 : 1));
  int w = W, h = H, dmin = c.min_disparity, D = c.count, Dp = l.Dp, G = l.G, Gs = agg3 ? sgm_agg3_lanes(l, k3) : l.Gs,
      P1 = p.p1, P2 = p.p2, rp = rpitch, ro = l.right_offset;
  void* none = nullptr;
  void* cl = c.kind == CostKind::census ? bcl.p : none;
  void* crp = c.kind == CostKind::census ? bcr.p : none;
  void* vp = c.kind == CostKind::census ? none : bvol.p;
  void* a[] = {&cl, &crp, &rp, &ro, &vp, &out.p, &w, &h, &dmin, &D, &Dp, &G, &Gs, &P1, &P2, &dir0};
  const bool census = c.kind == CostKind::census;
  SgmChoice choice;
  choice.agg = census ? agg : 1;
  choice.k = l.K;
  choice.k3 = k3;
  choice.split3 = split3;
  choice.staged = staged && census && choice.agg == 1;
  choice.prefetch = prefetch && !staged && census && choice.agg == 1;
  const std::string name = sgm_aggregate_kernel(l, choice, census);
  const int lines = SgmLayout::kAggregateThreads / Gs;
  const std::size_t smem = choice.agg == 2 ? sgm_agg2_smem(l) : (choice.staged ? sgm_staged_smem(l) : 0);
  if (agg3 && name != (split3 ? "sgm_aggregate3s_k" : "sgm_aggregate3_k") + std::to_string(sgm_agg3_k(l, k3)) + "_g" +
                         std::to_string(Gs) + (l.store16 ? "_u16" : "_u8"))
    ADD_FAILURE() << "kernel 3 entry " << name;
  unsigned gx = static_cast<unsigned>((std::max(W, H) + lines - 1) / lines);
  if (agg3 && split3) gx = std::max(gx, static_cast<unsigned>((H + lines / 2 - 1) / (lines / 2)));
  dev.launch(name, {gx, static_cast<unsigned>(ndirs), 1}, {SgmLayout::kAggregateThreads, 1, 1}, smem, a);
  std::vector<int> r(n);
  if (l.store16) {
    std::vector<std::uint16_t> v(n);
    dev.to_host(v.data(), out.p, n * 2);
    dev.synchronize();
    std::copy(v.begin(), v.end(), r.begin());
  } else {
    std::vector<std::uint8_t> v(n);
    dev.to_host(v.data(), out.p, n);
    std::copy(v.begin(), v.end(), r.begin());
  }
  dev.synchronize();
  return r;
}

inline void aggregate(SgmDevice& dev) {
  struct Case {
    int w, h, mind, maxd, k, p1, p2;
    CostKind kind;
  } cases[] = {
      {37, 23, 0, 63, 16, 10, 120, CostKind::census},   // 4 lanes of 16
      {37, 23, -5, 31, 8, 10, 120, CostKind::census},   // negative minimum, 37 disparities: padding
      {23, 37, 3, 3, 8, 10, 120, CostKind::census},     // one disparity
      {19, 13, 0, 99, 32, 7, 300, CostKind::census},    // 16-bit volumes, 4 lanes of 32 (G 4 of Gs 4)
      {21, 17, 0, 47, 16, 5, 250, CostKind::sad},       // stored costs, 16-bit volumes, G 3 of Gs 4
      {17, 19, -2, 20, 8, 3, 40, CostKind::ssd},        // stored costs, 8-bit volumes
      {9, 5, 0, 4, 8, 0, 0, CostKind::census},          // P1 = P2 = 0
      {13, 21, 0, 63, 16, 0, 50, CostKind::census},     // P1 = 0 on full lane layouts (kernel 3's diagonal restart: -P1 = 0)
      {101, 13, 0, 127, 16, 10, 120, CostKind::census}, // 7 blocks of 16 lines: diagonals wrap inside blocks
      {70, 9, -20, 9, 8, 10, 120, CostKind::census},    // negative range, 30 disparities on K 8
      {11, 45, 0, 63, 8, 10, 120, CostKind::census},    // taller than wide: diagonals wrap several times
      {133, 7, -3, 60, 16, 10, 120, CostKind::census},  // 64 disparities on K 16 (G 4), partial last block
      {3, 29, 0, 255, 16, 10, 120, CostKind::census},   // 16 lanes of 16, image narrower than a block's lines
      {29, 3, 0, 255, 32, 10, 120, CostKind::census},   // 8 lanes of 32
      {1, 1, 0, 7, 8, 10, 120, CostKind::census},       // one pixel
      {17, 11, 0, 8, 8, 10, 120, CostKind::census},     // 9 disparities: G 2, one padded lane pair
      {25, 21, -40, 200, 16, 9, 400, CostKind::census}, // 241 disparities, 16-bit volumes, padding
  };
  std::uint64_t seed = 100;
  for (const Case& cs : cases) {
    Image8 l = random_image(cs.w, cs.h, seed++), r = random_image(cs.w, cs.h, seed++);
    SgmParams p;
    p.min_disparity = cs.mind;
    p.max_disparity = cs.maxd;
    p.p1 = cs.p1;
    p.p2 = cs.p2;
    p.cost = cs.kind;
    p.window = 3;
    const SgmLayout lay = sgm_layout(cs.w, cs.h, p, cs.k);
    CostVolume c = cost_cpu(l, r, p);
    // modes: the seed with direct loads, the seed staged (or stored costs), the second kernel, the
    // seed with prefetched direct loads, the third kernel with 4, 8 and 16 disparities per lane
    // (widened where that needs more than 32 lanes), then with 8 and 16 and its horizontal
    // directions split (half the disparities per lane, twice the lanes) where it can
    for (int mode = 0; mode < 9; ++mode) {
    const bool staged = mode == 1;
    if (mode != 1 && cs.kind != CostKind::census) continue;
    const int agg = mode == 2 ? 2 : (mode >= 4 ? 3 : 1);
    const bool prefetch = mode == 3;
    const bool split3 = mode >= 7;
    const int k3 = mode >= 7 ? 8 << (mode - 7) : (mode >= 4 ? 4 << (mode - 4) : 0);
    if (agg == 3 && sgm_agg3_lanes(lay, k3) == 0) continue;
    if (split3 && !sgm_agg3_can_split(lay, k3)) continue;
    std::vector<int> got = aggregate_dev(dev, c, p, lay, 0, 8, staged, agg, prefetch, k3, split3);
    for (int dir = 0; dir < 8; ++dir) {
      std::vector<std::uint16_t> ref = aggregate_naive(c, p, dir);
      long long bad = 0;
      std::string first;
      for (int y = 0; y < cs.h; ++y)
        for (int x = 0; x < cs.w; ++x)
          for (int k = 0; k < c.count; ++k) {
            const int g = got[((static_cast<std::size_t>(dir) * cs.h + y) * cs.w + x) * lay.Dp + k];
            const int e = ref[(static_cast<std::size_t>(y) * cs.w + x) * c.count + k];
            if (g != e && bad++ == 0)
              first = "(" + std::to_string(x) + "," + std::to_string(y) + ",k" + std::to_string(k) +
                      "): " + std::to_string(g) + " vs " + std::to_string(e);
          }
      EXPECT_EQ(bad, 0) << cs.w << "x" << cs.h << " d " << cs.mind << ".." << cs.maxd << " K " << cs.k
                        << " direction " << dir
                        << (agg == 3 ? std::string(split3 ? " split" : "") + " kernel 3 K3 " + std::to_string(sgm_agg3_k(lay, k3))
                                     : agg == 2 ? " kernel 2" : staged ? " staged" : prefetch ? " prefetch" : " direct")
                        << " first " << first;
    }
    }
  }
}

// Random path volumes (values 0..vmax, entries k >= D random too: the kernel must ignore them),
// their sum as the CPU's S, and the WTA kernel's left/right maps.
struct WtaCase {
  int w, h, mind, maxd, paths, k, vmax, uniq;
  Subpixel sub;
  bool store16, right;
};

inline void check_wta(SgmDevice& dev, const WtaCase& c, std::uint64_t seed) {
  SgmParams p;
  p.min_disparity = c.mind;
  p.max_disparity = c.maxd;
  p.paths = c.paths;
  p.p2 = c.store16 ? 1000 : 120;
  const SgmLayout l = sgm_layout(c.w, c.h, p, c.k);
  ASSERT_EQ(l.store16, c.store16);
  const int W = c.w, H = c.h, D = p.count();
  std::mt19937_64 rng(seed);
  const std::size_t n = static_cast<std::size_t>(c.paths) * W * H * l.Dp;
  std::vector<int> v(n);
  for (auto& x : v) x = static_cast<int>(rng() % static_cast<unsigned>(c.vmax + 1));
  if (c.store16)  // padding above the real range may hold large values (up to BIG + P2 on the GPU)
    for (std::size_t i = 0; i < n; ++i)
      if (static_cast<int>(i % l.Dp) >= D) v[i] = 16384 + static_cast<int>(rng() % 8000);
  std::vector<std::uint16_t> S(static_cast<std::size_t>(W) * H * D, 0);
  for (int pth = 0; pth < c.paths; ++pth)
    for (std::size_t cell = 0; cell < static_cast<std::size_t>(W) * H; ++cell)
      for (int k = 0; k < D; ++k)
        S[cell * D + k] = static_cast<std::uint16_t>(S[cell * D + k] + v[(pth * static_cast<std::size_t>(W) * H + cell) * l.Dp + k]);
  WtaResult wr = wta_cpu(S, W, H, D, c.mind, c.right);
  DisparityQ ref_l = refine_cpu(wr, c.uniq, c.sub);

  void* vol = dev.alloc(n * (c.store16 ? 2 : 1));
  if (c.store16) {
    std::vector<std::uint16_t> b(v.begin(), v.end());
    dev.to_device(vol, b.data(), n * 2);
  } else {
    std::vector<std::uint8_t> b(v.begin(), v.end());
    dev.to_device(vol, b.data(), n);
  }
  Buf<std::int16_t> left(dev, static_cast<std::size_t>(W) * H), right(dev, static_cast<std::size_t>(W) * H);
  int w = W, h = H, dmin = c.mind, dd = D, Dp = l.Dp, G = l.G, Gs = l.Gs, paths = c.paths, uniq = c.uniq,
      sub = static_cast<int>(c.sub);
  void* none = nullptr;
  void* rp = c.right ? right.p : none;
  int first = 0;
  void* a[] = {&vol, &paths, &w, &h, &dmin, &dd, &Dp, &G, &Gs, &uniq, &sub, &left.p, &rp, &first};
  // the paths looped, unrolled, unrolled with the minimum by keys; in two row bands (y0 = 0 and
  // y0 = H / 3), as SgmPipeline::process launches them
  for (const char* kernel : {"sgm_wta_k", "sgm_wta2_k", "sgm_wta3_k"}) {
    dev.fill(left.p, 0xA5, left.n * 2);
    dev.fill(right.p, 0xA5, right.n * 2);
    for (auto [y0, rows] : {std::pair{0, H / 3}, std::pair{H / 3, H - H / 3}}) {
      if (rows == 0) continue;
      first = y0;
      dev.launch(kernel + std::to_string(l.K) + (c.store16 ? "_u16" : "_u8"), {static_cast<unsigned>(rows), 1, 1},
                 {SgmLayout::kWtaThreads, 1, 1}, sgm_wta_smem(W, l.K, c.right, c.sub != Subpixel::none), a);
    }
    DisparityQ got_l{W, H, left.get()};
    EXPECT_EQ(first_diff(got_l, ref_l), "") << kernel << " " << W << "x" << H << " d " << c.mind << ".." << c.maxd
                                            << " K " << c.k << " paths " << c.paths;
    if (c.right) {
      DisparityQ got_r{W, H, right.get()};
      EXPECT_EQ(first_diff(got_r, right_map(wr)), "") << kernel << " right map";
    }
  }
  dev.synchronize();
  dev.release(vol);
}

inline void wta(SgmDevice& dev) {
  const WtaCase cases[] = {
      {37, 23, 0, 63, 8, 16, 151, 0, Subpixel::none, false, true},
      {37, 23, -5, 31, 4, 8, 3, 10, Subpixel::parabola, false, true},     // many ties, uniqueness
      {29, 13, 2, 38, 8, 16, 5, 5, Subpixel::equiangular, false, false},  // 37 disparities: padding
      {19, 11, -7, 92, 8, 32, 1000, 15, Subpixel::parabola, true, true},  // 16-bit volumes, padding
      {9, 7, 0, 0, 8, 8, 10, 10, Subpixel::parabola, false, true},         // one disparity
      {40, 5, -3, -2, 4, 8, 2, 50, Subpixel::equiangular, true, true},     // two disparities
      {33, 9, 0, 255, 4, 32, 151, 5, Subpixel::parabola, false, true},     // 8 lanes of 32, 4 paths
      {21, 6, -1, 126, 8, 16, 255, 0, Subpixel::parabola, false, true},   // 8-bit volumes at their maximum
      {97, 9, 0, 63, 8, 16, 151, 5, Subpixel::none, false, true},        // uniqueness alone (cells staged for the rival); right-map fast path
      {45, 7, 0, 47, 8, 16, 255, 3, Subpixel::none, false, true},         // 8 paths of 255: S up to 2040, the keys' limit
  };
  std::uint64_t seed = 500;
  for (const WtaCase& c : cases) check_wta(dev, c, seed++);
}

inline void median_lr(SgmDevice& dev) {
  std::mt19937_64 rng(77);
  for (auto [w, h] : {std::pair{37, 23}, std::pair{101, 67}, std::pair{1, 1}, std::pair{300, 2}}) {
    auto rand_map = [&](int span) {
      DisparityQ m{w, h, std::vector<std::int16_t>(static_cast<std::size_t>(w) * h)};
      for (auto& q : m.q) q = rng() % 5 == 0 ? kInvalidQ : static_cast<std::int16_t>(static_cast<int>(rng() % span) - 16);
      return m;
    };
    DisparityQ l = rand_map(400), r = rand_map(400);
    Buf<std::int16_t> bl(dev, l.q), br(dev, r.q), out(dev, l.q.size());
    int W = w, H = h, first = 0;
    // every launch in two row bands (y0 = 0 and y0 = h / 2), as SgmPipeline::process runs them
    auto banded = [&](const char* kernel, void** args) {
      for (auto [y0, rows] : {std::pair{0, h / 2}, std::pair{h / 2, h - h / 2}}) {
        if (rows == 0) continue;
        first = y0;
        dev.launch(kernel, Dim3{static_cast<unsigned>((w + 255) / 256), static_cast<unsigned>(rows), 1}, {256, 1, 1}, 0,
                   args);
      }
    };
    void* a[] = {&bl.p, &out.p, &W, &H, &first};
    dev.fill(out.p, 0xA5, out.n * 2);
    banded("sgm_median3", a);
    EXPECT_EQ(first_diff(DisparityQ{w, h, out.get()}, median3_cpu(l)), "") << "median " << w << "x" << h;
    for (int maxd : {0, 1, 3}) {
      int md = maxd;
      void* b[] = {&bl.p, &br.p, &out.p, &W, &H, &md, &first};
      dev.fill(out.p, 0xA5, out.n * 2);
      banded("sgm_lr_check", b);
      EXPECT_EQ(first_diff(DisparityQ{w, h, out.get()}, lr_check_cpu(l, r, maxd)), "") << "lr " << maxd;
    }
    // both medians and the LR check on them in one launch
    Buf<std::int16_t> out_r(dev, r.q.size());
    for (int maxd : {0, 1, 3}) {
      int md = maxd;
      void* b[] = {&bl.p, &br.p, &out.p, &out_r.p, &W, &H, &md, &first};
      dev.fill(out.p, 0xA5, out.n * 2);
      dev.fill(out_r.p, 0xA5, out_r.n * 2);
      banded("sgm_median3_lr", b);
      const DisparityQ mr = median3_cpu(r);
      EXPECT_EQ(first_diff(DisparityQ{w, h, out.get()}, lr_check_cpu(median3_cpu(l), mr, maxd)), "") << "median + lr " << maxd;
      EXPECT_EQ(first_diff(DisparityQ{w, h, out_r.get()}, mr), "") << "median + lr, right " << maxd;
    }
  }
}

struct PipeCase {
  int w, h, mind, maxd, paths, p1, p2;
  CostKind cost;
  PostParams post;
  int bits;
  int kernel;  // 0 the seed with direct loads, 1 the seed staged (stored costs: its volume mode), 2 kernel 2,
               // 3 the seed with prefetched direct loads, 4 kernel 3, 6 kernel 3 (K3 8) with its horizontal
               // directions split
};

inline void pipeline(SgmDevice& dev) {
  auto post = [](int u, Subpixel s, int lr, int med, int sp, bool right) {
    PostParams p;
    p.uniqueness = u;
    p.subpixel = s;
    p.lr_check = lr;
    p.median = med;
    p.speckle_size = sp;
    p.speckle_range = 2;
    p.right = right;
    return p;
  };
  const PipeCase cases[] = {
      {37, 23, 0, 31, 8, 10, 120, CostKind::census, post(0, Subpixel::none, -1, 0, 0, false), 8, 1},
      {37, 23, 0, 31, 8, 10, 120, CostKind::census, post(0, Subpixel::none, -1, 0, 0, false), 8, 0},
      {37, 23, 0, 31, 8, 10, 120, CostKind::census, post(0, Subpixel::none, -1, 0, 0, false), 8, 2},
      {37, 23, 0, 31, 8, 10, 120, CostKind::census, post(0, Subpixel::none, -1, 0, 0, false), 8, 3},
      {37, 23, -4, 27, 4, 10, 120, CostKind::census, post(5, Subpixel::parabola, 1, 3, 20, true), 8, 3},
      {37, 23, -4, 27, 4, 10, 120, CostKind::census, post(5, Subpixel::parabola, 1, 3, 20, true), 8, 1},
      {37, 23, -4, 27, 4, 10, 120, CostKind::census, post(5, Subpixel::parabola, 1, 3, 20, true), 8, 2},
      {37, 23, -4, 27, 4, 10, 120, CostKind::census, post(5, Subpixel::parabola, 1, 3, 20, true), 8, 4},
      {37, 23, 0, 31, 8, 10, 120, CostKind::census, post(0, Subpixel::none, -1, 0, 0, false), 8, 4},
      {41, 29, 0, 47, 8, 8, 96, CostKind::census, post(10, Subpixel::equiangular, 0, 3, 0, true), 16, 1},
      {41, 29, 0, 47, 8, 8, 96, CostKind::census, post(10, Subpixel::equiangular, 0, 3, 0, true), 16, 0},
      {41, 29, 0, 47, 8, 8, 96, CostKind::census, post(10, Subpixel::equiangular, 0, 3, 0, true), 16, 2},
      {41, 29, 0, 47, 8, 8, 96, CostKind::census, post(10, Subpixel::equiangular, 0, 3, 0, true), 16, 3},
      {41, 29, 0, 47, 8, 8, 96, CostKind::census, post(10, Subpixel::equiangular, 0, 3, 0, true), 16, 4},
      {41, 29, 0, 47, 8, 8, 96, CostKind::census, post(10, Subpixel::equiangular, 0, 3, 0, true), 16, 6},
      {37, 23, -4, 27, 4, 10, 120, CostKind::census, post(5, Subpixel::parabola, 1, 3, 20, true), 8, 6},
      {23, 19, 0, 36, 8, 6, 60, CostKind::sad, post(0, Subpixel::parabola, 2, 0, 4, false), 8, 1},
      {23, 19, -3, 12, 4, 4, 400, CostKind::ssd, post(3, Subpixel::none, 1, 3, 0, true), 8, 2},  // falls back to the seed
  };
  std::uint64_t seed = 900;
  for (const PipeCase& c : cases) {
    SyntheticPair sp = make_synthetic_pair(c.w, c.h, std::max(1, c.maxd / 2), seed++);
    SgmParams p;
    p.min_disparity = c.mind;
    p.max_disparity = c.maxd;
    p.paths = c.paths;
    p.p1 = c.p1;
    p.p2 = c.p2;
    p.cost = c.cost;
    p.window = 3;
    p.post = c.post;
    StereoResult ref, got;
    SgmTuning tune;
    tune.staged = c.kernel == 1;
    tune.prefetch = c.kernel == 3;
    tune.agg = c.kernel == 2 ? 2 : (c.kernel == 4 || c.kernel == 6 ? 3 : 1);
    if (c.kernel == 6) {
      tune.k3 = 8;
      tune.split3 = 1;
    }
    if (c.bits == 8) {
      ref = sgm_cpu(sp.left, sp.right, p);
      SgmPipeline pl(dev, p, c.w, c.h, 8, tune);
      EXPECT_EQ(pl.choice().split3, c.kernel == 6);
      pl.poison();
      got = pl.run(sp.left, sp.right);
    } else {
      Image16 l = random16(c.w, c.h, 1023, seed), r = l;  // 10-bit: right = left shifted by 3
      for (int y = 0; y < c.h; ++y)
        for (int x = 0; x < c.w; ++x) r.pixels[static_cast<std::size_t>(y) * c.w + x] = l.at(std::min(c.w - 1, x + 3), y);
      ref = sgm_cpu(l, r, p);
      SgmPipeline pl(dev, p, c.w, c.h, 16, tune);
      EXPECT_EQ(pl.choice().split3, c.kernel == 6);
      pl.poison();
      got = pl.run(l, r);
    }
    EXPECT_EQ(first_diff(got.left, ref.left), "") << c.w << "x" << c.h << " cost " << to_string(c.cost) << " kernel "
                                                  << c.kernel;
    EXPECT_EQ(got.right.q.empty(), !c.post.right);
    if (c.post.right) {
      EXPECT_EQ(first_diff(got.right, ref.right), "") << "right map";
    }
    const long long valid = std::count_if(ref.left.q.begin(), ref.left.q.end(), [](std::int16_t q) { return q != kInvalidQ; });
    EXPECT_GT(valid, static_cast<long long>(ref.left.q.size()) / 4) << "degenerate case";
  }
}

// SgmPipeline::process, host to host, with the wta in row bands whose post-processing and downloads
// run on the side queue: every band count given (0: the device's waves, expect_default_bands of
// them where > 0), each post-processing
// (both medians + LR check in one launch, median alone, LR check alone, none), with and without the
// right map, 8- and 16-bit pixels, host buffers pinned (dev.alloc_host) or not. The maps equal
// sgm_cpu's; the host outputs are poisoned first; bands() covers every row once.
inline void process_bands(const std::function<std::unique_ptr<SgmDevice>()>& make, int w, int h, int maxd, int paths,
                          const std::vector<int>& band_counts, bool pinned_host, int expect_default_bands = 0) {
  struct PostCase {
    int median, lr, uniq;
    Subpixel sub;
    bool right;
  } posts[] = {{3, 1, 5, Subpixel::parabola, true},   {3, 1, 0, Subpixel::none, false}, {3, -1, 0, Subpixel::none, true},
               {3, -1, 5, Subpixel::equiangular, false}, {0, 2, 0, Subpixel::none, true},  {0, -1, 0, Subpixel::parabola, false}};
  SyntheticPair sp = make_synthetic_pair(w, h, std::max(1, maxd / 2), 4242);
  for (const PostCase& pc : posts) {
    SgmParams p;
    p.max_disparity = maxd;
    p.paths = paths;
    p.post.median = pc.median;
    p.post.lr_check = pc.lr;
    p.post.uniqueness = pc.uniq;
    p.post.subpixel = pc.sub;
    p.post.right = pc.right;
    const StereoResult ref = sgm_cpu(sp.left, sp.right, p);
    for (int bits : {8, 16}) {
      if (bits == 16 && &pc != &posts[0] && &pc != &posts[4]) continue;  // 16-bit pixels on two post cases
      for (int bands : band_counts) {
        auto dev = make();
        SgmTuning t;
        t.bands = bands;
        SgmPipeline pl(*dev, p, w, h, bits, t);
        const std::vector<int> b = pl.bands();
        const int n = static_cast<int>(b.size()) - 1;
        EXPECT_EQ(n, bands > 0 ? std::min(bands, h) : (expect_default_bands > 0 ? expect_default_bands : n)) << bands;
        EXPECT_EQ(b.front(), 0);
        EXPECT_EQ(b.back(), h);
        for (int i = 0; i < n; ++i) EXPECT_LT(b[i], b[i + 1]) << "band " << i;
        const std::size_t npx = static_cast<std::size_t>(w) * h, in = npx * (bits / 8), out = npx * 2;
        std::vector<std::uint16_t> l16(npx), r16(npx);
        for (std::size_t i = 0; i < npx; ++i) {
          l16[i] = sp.left.pixels[i];
          r16[i] = sp.right.pixels[i];
        }
        const void* srcl = bits == 8 ? static_cast<const void*>(sp.left.pixels.data()) : l16.data();
        const void* srcr = bits == 8 ? static_cast<const void*>(sp.right.pixels.data()) : r16.data();
        void* hl = pinned_host ? dev->alloc_host(in) : nullptr;
        void* hr = pinned_host ? dev->alloc_host(in) : nullptr;
        auto* ol = static_cast<std::int16_t*>(pinned_host ? dev->alloc_host(out) : ::operator new(out));
        auto* orr = static_cast<std::int16_t*>(pinned_host ? dev->alloc_host(out) : ::operator new(out));
        if (pinned_host) {
          std::memcpy(hl, srcl, in);
          std::memcpy(hr, srcr, in);
        }
        std::fill(ol, ol + npx, static_cast<std::int16_t>(0x5A5A));
        std::fill(orr, orr + npx, static_cast<std::int16_t>(0x5A5A));
        for (int rep = 0; rep < 2; ++rep) {  // twice: staging buffers and events reused
          pl.poison();
          pl.process(pinned_host ? hl : srcl, pinned_host ? hr : srcr, ol, pc.right ? orr : nullptr);
          const std::string what = std::to_string(w) + "x" + std::to_string(h) + " bands " + std::to_string(bands) + " (" +
                                   std::to_string(n) + ") median " + std::to_string(pc.median) + " lr " +
                                   std::to_string(pc.lr) + " bits " + std::to_string(bits) + " rep " + std::to_string(rep);
          EXPECT_EQ(first_diff(DisparityQ{w, h, std::vector<std::int16_t>(ol, ol + npx)}, ref.left), "") << what;
          if (pc.right) {
            EXPECT_EQ(first_diff(DisparityQ{w, h, std::vector<std::int16_t>(orr, orr + npx)}, ref.right), "")
                << what << " right map";
          } else {
            EXPECT_EQ(std::count(orr, orr + npx, static_cast<std::int16_t>(0x5A5A)), static_cast<long>(npx))
                << what << ": right map written without a request";
          }
        }
        if (pinned_host) {
          for (void* q : {hl, hr, static_cast<void*>(ol), static_cast<void*>(orr)}) dev->release_host(q);
        } else {
          ::operator delete(ol);
          ::operator delete(orr);
        }
      }
    }
  }
}

// The overlapped frame engine (stream.hpp) with emulated device slots: every frame, in any order of
// completion, equals sgm_cpu of its pair; frames of two sizes force pipelines to be rebuilt.

inline void stream_engine(const std::function<std::unique_ptr<SgmDevice>()>& make) {
  SgmParams p;
  p.max_disparity = 15;
  p.post.uniqueness = 5;
  p.post.subpixel = Subpixel::parabola;
  p.post.lr_check = 1;
  p.post.median = 3;
  p.post.speckle_size = 6;
  p.post.right = true;
  const int n = 7;
  std::vector<SyntheticPair> pairs;
  for (int i = 0; i < n; ++i) pairs.push_back(make_synthetic_pair(i % 3 == 2 ? 29 : 33, 17, 10, 100 + i));
  auto m = sgm_device_matcher(p, make, 3);
  std::mutex mu;
  std::vector<StereoResult> got(n);
  StreamOptions o;
  o.readers = 2;
  o.writers = 2;
  o.queue = 2;
  StreamStats st = run_stream(
      n,
      [&](int i) {
        Frame f;
        f.left = to_image16(pairs[static_cast<std::size_t>(i)].left);
        f.right = to_image16(pairs[static_cast<std::size_t>(i)].right);
        return f;
      },
      *m,
      [&](int i, StereoResult& r) {
        std::lock_guard<std::mutex> g(mu);
        got[static_cast<std::size_t>(i)] = r;
      },
      o);
  EXPECT_EQ(st.frames, n);
  for (int i = 0; i < n; ++i) {
    const StereoResult ref = sgm_cpu(pairs[static_cast<std::size_t>(i)].left, pairs[static_cast<std::size_t>(i)].right, p);
    EXPECT_EQ(first_diff(got[static_cast<std::size_t>(i)].left, ref.left), "") << "frame " << i;
    EXPECT_EQ(first_diff(got[static_cast<std::size_t>(i)].right, ref.right), "") << "frame " << i;
  }
  // an exception in a stage stops the run and reaches the caller
  auto m2 = sgm_device_matcher(p, make, 2);
  EXPECT_THROW(run_stream(
                   n,
                   [&](int i) -> Frame {
                     if (i == 3) throw std::runtime_error("unreadable frame 3");
                     Frame f;
                     f.left = to_image16(pairs[0].left);
                     f.right = to_image16(pairs[0].right);
                     return f;
                   },
                   *m2, [](int, StereoResult&) {}, o),
               std::runtime_error);
}

// The expert SSD kernel against disparity_cpu (Stam's definition): odd sizes, windows 3..21,
// ranges with and without a minimum, min_ssd binding or not, structured and noise pairs.
inline void ssd_expert(SgmDevice& dev) {
  constexpr int kNo = 2000000000;
  struct Case {
    int w, h, mind, maxd, window, min_ssd;
    bool noise;
  } cases[] = {{37, 23, 0, 20, 11, 500000, false}, {101, 67, 0, 50, 11, 500000, false}, {65, 33, 3, 3, 5, kNo, true},
               {130, 70, 2, 38, 7, kNo, false},     {17, 5, 0, 50, 11, kNo, true},       {64, 32, 0, 63, 21, 2000000, false},
               {1, 1, 0, 9, 3, kNo, true},          {200, 9, 10, 17, 9, 300000, false},
               {70, 40, 0, 30, 19, kNo, false},      {45, 20, 1, 12, 23, kNo, true}};  // r 9 and 11: the run-time radius
  std::uint64_t seed = 70;
  for (const Case& c : cases) {
    Image8 l, r;
    if (c.noise) {
      l = random_image(c.w, c.h, seed++);
      r = random_image(c.w, c.h, seed++);
    } else {
      SyntheticPair sp = make_synthetic_pair(c.w, c.h, std::max(1, c.maxd), seed++);
      l = sp.left;
      r = sp.right;
    }
    const Params p{c.mind, c.maxd, c.window, c.min_ssd};
    const DisparityMap ref = disparity_cpu(l, r, p);
    SsdExpert k(dev, c.w, c.h);
    k.poison();
    const DisparityMap got = k.run(l, r, p);
    long long bad = 0;
    std::string first;
    for (std::size_t i = 0; i < ref.d.size(); ++i)
      if (got.d[i] != ref.d[i] && bad++ == 0)
        first = "(" + std::to_string(i % c.w) + "," + std::to_string(i / c.w) + "): " + std::to_string(got.d[i]) +
                " vs " + std::to_string(ref.d[i]);
    EXPECT_EQ(bad, 0) << c.w << "x" << c.h << " d " << c.mind << ".." << c.maxd << " window " << c.window << " first "
                      << first;
    const long long valid = std::count_if(ref.d.begin(), ref.d.end(), [](int v) { return v >= 0; });
    EXPECT_GT(valid, 0) << "degenerate case";
  }
}

}  // namespace sgm_checks
