// SGM stages and the shared post-processing on the CPU: each against a naive version written here
// from the definition (docs/STEREO.md, "SGM") or against hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/reference.hpp"
#include "core/sgm.hpp"
#include "core/ssd.hpp"
#include "core/synthetic.hpp"
#include "evk/error.hpp"

using namespace evk::stereo;

namespace {
int clampi(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

// Census from the definition: 9x7 window rows -3..0, bit k for the k-th offset in raster order.
std::vector<std::uint32_t> census_naive(const Image8& im) {
  std::vector<std::uint32_t> c(im.pixels.size());
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) {
      std::uint32_t v = 0;
      int bit = 0;
      for (int j = -3; j <= 0; ++j)
        for (int i = -4; i <= 4; ++i) {
          if (j == 0 && i >= 0) continue;
          const int a = im.at(clampi(x + i, im.width), clampi(y + j, im.height));
          const int b = im.at(clampi(x - i, im.width), clampi(y - j, im.height));
          v |= (a > b ? 1u : 0u) << bit++;
        }
      c[static_cast<std::size_t>(y) * im.width + x] = v;
    }
  return c;
}

SgmParams params(int mind, int maxd, int paths = 8, CostKind cost = CostKind::census) {
  SgmParams p;
  p.min_disparity = mind;
  p.max_disparity = maxd;
  p.paths = paths;
  p.cost = cost;
  p.window = 3;
  return p;
}
}  // namespace

TEST(StereoSgm, CensusMatchesDefinition) {
  std::uint64_t seed = 3;
  for (auto [w, h] : {std::pair{37, 23}, std::pair{1, 1}, std::pair{9, 7}, std::pair{101, 4}}) {
    Image8 im = random_image(w, h, seed++);
    for (auto& p : im.pixels) p = static_cast<std::uint8_t>(p % 3);  // ties
    EXPECT_EQ(census_cpu(im), census_naive(im)) << w << "x" << h;
  }
  // Interior pixels of a ramp increasing in raster order: every p + o precedes p - o -> code 0;
  // of a decreasing ramp: all 31 bits.
  Image8 up{20, 20, {}}, down{20, 20, {}};
  for (int i = 0; i < 400; ++i) {
    up.pixels.push_back(static_cast<std::uint8_t>(i / 2));
    down.pixels.push_back(static_cast<std::uint8_t>(255 - i / 2));
  }
  EXPECT_EQ(census_offsets().size(), 31u);
  EXPECT_EQ(census_cpu(up)[10 * 20 + 10], 0u);
  EXPECT_EQ(census_cpu(down)[10 * 20 + 10], 0x7fffffffu);
  // 16-bit input uses the full depth: values 256 apart are distinct.
  Image16 deep{9, 7, 65535, std::vector<std::uint16_t>(63, 1000)};
  deep.pixels[3 * 9 + 4 - 9 - 1] = 1256;  // p + (-1, -1) of the centre
  EXPECT_EQ(census_cpu(deep)[3 * 9 + 4], 1u << (2 * 9 + 3));
}

TEST(StereoSgm, CostsFollowTheDefinition) {
  Image8 l = random_image(17, 9, 1), r = random_image(17, 9, 2);
  CostVolume c = cost_cpu(l, r, params(-3, 20));
  const auto cl = census_naive(l), cr = census_naive(r);
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 17; ++x)
      for (int k = 0; k < c.count; ++k) {
        const int xr = x - (k - 3);
        const std::uint32_t b = (xr >= 0 && xr < 17) ? cr[static_cast<std::size_t>(y) * 17 + xr] : 0u;
        ASSERT_EQ(c.at(x, y, k), __builtin_popcount(cl[static_cast<std::size_t>(y) * 17 + x] ^ b));
      }
  for (CostKind kind : {CostKind::sad, CostKind::ssd}) {
    SgmParams p = params(-2, 6, 8, kind);
    p.window = 5;
    CostVolume v = cost_cpu(l, r, p);
    for (int y = 0; y < 9; ++y)
      for (int x = 0; x < 17; ++x)
        for (int k = 0; k < v.count; ++k) {
          long long s = 0;
          for (int j = -2; j <= 2; ++j)
            for (int i = -2; i <= 2; ++i) {
              const int a = l.at(clampi(x + i, 17), clampi(y + j, 9)), b = r.at(clampi(x + i - (k - 2), 17), clampi(y + j, 9));
              s += kind == CostKind::sad ? std::abs(a - b) : (a - b) * (a - b);
            }
          const int want = kind == CostKind::sad ? static_cast<int>(std::lround(s / 25.0 - 1e-9 * 0))
                                                 : static_cast<int>(std::floor(std::sqrt(static_cast<double>(s / 25))));
          const int sad_exact = static_cast<int>((s + 12) / 25);  // round half up
          ASSERT_EQ(v.at(x, y, k), kind == CostKind::sad ? sad_exact : want) << x << "," << y << "," << k;
        }
  }
}

TEST(StereoSgm, AggregationHandComputed) {
  // A 3x1 image, 2 disparities, P1 1, P2 3; costs [0,5] [4,0] [0,4]. Left to right:
  // L(x0) = [0,5]; L(x1) = [4+0, 0+1] = [4,1]; L(x2) = [0+2-1, 4+1-1] = [1,4]; right to left:
  // [0,4]; [4,1]; [1,5]. Vertical paths (lines of one cell) add C twice: S = L-> + L<- + 2C.
  CostVolume c;
  c.width = 3;
  c.height = 1;
  c.count = 2;
  c.kind = CostKind::sad;
  c.stored = {0, 5, 4, 0, 0, 4};
  SgmParams p = params(0, 1, 4, CostKind::sad);
  p.p1 = 1;
  p.p2 = 3;
  const std::vector<std::uint16_t> want = {1, 20, 16, 2, 1, 16};
  EXPECT_EQ(aggregate_cpu(c, p), want);
  EXPECT_EQ(aggregate_naive(c, p), want);
}

TEST(StereoSgm, AggregationMatchesNaive) {
  struct Case {
    int w, h, mind, maxd, paths, p1, p2;
    CostKind cost;
  } cases[] = {{37, 23, 0, 63, 8, 10, 120, CostKind::census}, {37, 23, -7, 20, 4, 10, 120, CostKind::census},
               {23, 37, 2, 2, 8, 10, 120, CostKind::census},  {1, 1, 0, 9, 8, 10, 120, CostKind::census},
               {19, 13, -4, 30, 8, 5, 300, CostKind::sad},    {13, 19, 0, 16, 4, 0, 0, CostKind::ssd},
               {64, 3, 0, 40, 8, 20, 20, CostKind::census}};
  std::uint64_t seed = 40;
  for (const Case& cs : cases) {
    Image8 l = random_image(cs.w, cs.h, seed++), r = random_image(cs.w, cs.h, seed++);
    SgmParams p = params(cs.mind, cs.maxd, cs.paths, cs.cost);
    p.p1 = cs.p1;
    p.p2 = cs.p2;
    CostVolume c = cost_cpu(l, r, p);
    const auto naive = aggregate_naive(c, p);
    EXPECT_EQ(aggregate_cpu(c, p, 1), naive) << cs.w << "x" << cs.h;
    EXPECT_EQ(aggregate_cpu(c, p, 3), naive) << cs.w << "x" << cs.h << " (3 threads)";
  }
}

TEST(StereoSgm, EachDirectionMatchesNaive) {
  Image8 l = random_image(29, 17, 5), r = random_image(29, 17, 6);
  SgmParams p = params(-3, 20);
  CostVolume c = cost_cpu(l, r, p);
  for (int dir = 0; dir < 8; ++dir) EXPECT_EQ(aggregate_direction_cpu(c, p, dir, 2), aggregate_naive(c, p, dir)) << dir;
}

TEST(StereoSgm, WtaPicksTheFirstMinimumAndTheRightMap) {
  // 3x1 image, 3 disparities 1..3 (min_disparity 1). S per pixel:
  const std::vector<std::uint16_t> S = {5, 2, 2,    // x0: tie -> k 1
                                        9, 8, 1,    // x1: k 2; rival (|k-2| > 1): k 0 = 9
                                        3, 4, 7};   // x2: k 0; beside it 4; rival k 2 = 7
  WtaResult w = wta_cpu(S, 3, 1, 3, 1, true);
  EXPECT_EQ(w.left[0].best, 1);
  EXPECT_EQ(w.left[0].s_prev, 5);
  EXPECT_EQ(w.left[0].s_next, 2);
  EXPECT_EQ(w.left[0].s_second, -1);  // no k with |k - 1| > 1 among 0..2
  EXPECT_EQ(w.left[1].best, 2);
  EXPECT_EQ(w.left[1].s_next, -1);
  EXPECT_EQ(w.left[1].s_second, 9);
  EXPECT_EQ(w.left[2].best, 0);
  EXPECT_EQ(w.left[2].s_prev, -1);
  EXPECT_EQ(w.left[2].s_second, 7);
  // Right pixel xr: candidates k with x = xr + 1 + k in 0..2.
  // xr 0: k0 -> x1 (9), k1 -> x2 (4) -> k 1; xr 1: k0 -> x2 (3) -> k 0; xr 2: none.
  EXPECT_EQ(w.right_best, (std::vector<int>{1, 0, -1}));
  DisparityQ rm = right_map(w);
  EXPECT_EQ(rm.q, (std::vector<std::int16_t>{(1 + 1) * 16, (1 + 0) * 16, kInvalidQ}));
}

TEST(StereoSgm, SubpixelMatchesRealArithmetic) {
  std::mt19937 rng(5);
  for (int t = 0; t < 20000; ++t) {
    const int s0 = static_cast<int>(rng() % 2000), sp = s0 + 1 + static_cast<int>(rng() % 500),
              sn = s0 + static_cast<int>(rng() % 500);
    const double num = sp - sn;
    const double dp = 2.0 * (sp - 2.0 * s0 + sn), de = 2.0 * (std::max(sp, sn) - s0);
    auto q = [](double off) { return std::clamp(static_cast<int>(std::floor(16.0 * off + 0.5)), -8, 8); };
    ASSERT_EQ(subpixel_offset(sp, s0, sn, Subpixel::parabola), q(num / dp)) << sp << " " << s0 << " " << sn;
    ASSERT_EQ(subpixel_offset(sp, s0, sn, Subpixel::equiangular), q(num / de)) << sp << " " << s0 << " " << sn;
  }
  EXPECT_EQ(subpixel_offset(10, 0, 10, Subpixel::parabola), 0);
  EXPECT_EQ(subpixel_offset(10, 0, 0, Subpixel::parabola), 8);    // halfway: +0.5 px
  EXPECT_EQ(subpixel_offset(10, 0, 0, Subpixel::equiangular), 8);
  EXPECT_EQ(subpixel_offset(30, 0, 10, Subpixel::equiangular), 5);  // (30-10)/(2*30) = 1/3 -> 5.33/16
  EXPECT_EQ(subpixel_offset(5, 4, 4, Subpixel::none), 0);
}

TEST(StereoSgm, RefineUniquenessBoundary) {
  WtaResult w;
  w.width = 2;
  w.height = 1;
  w.count = 8;
  w.min_disparity = -2;
  w.left = {WtaPixel{3, 100, 120, 130, 110}, WtaPixel{3, 100, 120, 130, 109}};
  // u 10: rival 110 * 100 = 100 * 110: not smaller -> valid; 109 -> invalid.
  DisparityQ q = refine_cpu(w, 10, Subpixel::none);
  EXPECT_EQ(q.q[0], (3 - 2) * 16);
  EXPECT_EQ(q.q[1], kInvalidQ);
  EXPECT_EQ(refine_cpu(w, 0, Subpixel::none).q[1], 16);  // off
  // sub-pixel: parabola (120 - 130) / (2 (120 - 200 + 130)) = -0.1 -> -1.6/16 -> -2
  EXPECT_EQ(refine_cpu(w, 0, Subpixel::parabola).q[0], 16 - 2);
}

TEST(StereoSgm, MedianLrSpeckleHandComputed) {
  const std::int16_t I = kInvalidQ;
  // median: valid neighbours only, lower median
  DisparityQ m{3, 3, {16, 32, I, 48, 64, 80, I, I, 160}};
  DisparityQ mm = median3_cpu(m);
  // centre: {16,32,48,64,80,160} -> lower median 48; (0,0): {16,32,48,64} -> 32; (2,2): {64,80,160} -> 80
  EXPECT_EQ(mm.at(1, 1), 48);
  EXPECT_EQ(mm.at(0, 0), 32);
  EXPECT_EQ(mm.at(2, 2), 80);
  EXPECT_EQ(mm.at(2, 0), I);
  // LR: x0 d 1 -> xr -1: out. x1 d 0 -> xr 1, right 2.5 px: |0 - 40| > 16: out. x2 d 1.5 (24)
  // rounds to 2 -> xr 0, right 1.5 px: kept. x3 d 2 -> xr 1: |32 - 40| = 8: kept with max_diff 1,
  // dropped with 0.
  DisparityQ L{4, 1, {16, 0, 24, 32}}, R{4, 1, {24, 40, I, I}};
  EXPECT_EQ(lr_check_cpu(L, R, 1).q, (std::vector<std::int16_t>{I, I, 24, 32}));
  EXPECT_EQ(lr_check_cpu(L, R, 0).q, (std::vector<std::int16_t>{I, I, 24, I}));
  // speckle: a 2-pixel island at 6 px in a 10-pixel background at 4 px (range 1 px: two regions)
  DisparityQ s{4, 3, {64, 64, 64, 64, 64, 96, 96, 64, 64, 64, 64, 64}};
  DisparityQ s1 = s, s2 = s, s3 = s, s4 = s;
  speckle_cpu(s1, 1, 1);  // no region of <= 1 pixel
  EXPECT_EQ(s1.q, s.q);
  speckle_cpu(s2, 2, 1);  // the island goes
  EXPECT_EQ(s2.at(1, 1), I);
  EXPECT_EQ(s2.at(2, 1), I);
  EXPECT_EQ(s2.at(0, 0), 64);
  speckle_cpu(s3, 10, 1);  // both regions go
  EXPECT_EQ(std::count(s3.q.begin(), s3.q.end(), I), 12);
  speckle_cpu(s4, 11, 2);  // range 2 px: one region of 12 pixels stays
  EXPECT_EQ(s4.q, s.q);
}

TEST(StereoSgm, RecoversSyntheticDisparities) {
  SyntheticPair sp = make_synthetic_pair(160, 120, 30, 7);
  StereoResult r = sgm_cpu(sp.left, sp.right, params(0, 31));
  long long ok = 0, n = 0;
  for (int y = 0; y < 120; ++y)
    for (int x = 40; x < 160; ++x) {  // left of x = max disparity the match leaves the right image
      ++n;
      const int q = r.left.at(x, y);
      ok += q != kInvalidQ && std::abs(q - sp.truth.at(x, y) * 16) <= 16;
    }
  EXPECT_GT(static_cast<double>(ok) / n, 0.9);  // occlusion borders of the rectangles are hard
  EXPECT_EQ(sgm_cpu(sp.left, sp.right, params(0, 31), 1).left.q, r.left.q);
}

TEST(StereoSgm, FiveHundredTwelveDisparitiesRecoverAWideShift) {
  // 512 disparities (libSGM stops at 256): the right image is the left shifted by 400 pixels, and
  // every pixel that has its match inside the right image gets 400; threads do not change the map
  Image8 l = random_image(1100, 24, 5), r = l;
  for (int y = 0; y < 24; ++y)
    for (int x = 0; x < 1100; ++x) r.pixels[static_cast<std::size_t>(y) * 1100 + x] = l.at(std::min(1099, x + 400), y);
  const StereoResult res = sgm_cpu(l, r, params(0, 511));
  long long ok = 0, n = 0;
  for (int y = 3; y < 21; ++y)
    for (int x = 520; x < 1090; ++x, ++n) ok += res.left.at(x, y) == 400 * 16;
  EXPECT_EQ(ok, n);
  EXPECT_EQ(sgm_cpu(l, r, params(0, 511), 1).left.q, res.left.q);
}

TEST(StereoSgm, NegativeDisparitiesAndTheRightMap) {
  // The right image is the left shifted right by 3 pixels: disparity -3 everywhere (left of the
  // border), and the right map says the same from the other side.
  Image8 l = random_image(60, 30, 9), r = l;
  for (int y = 0; y < 30; ++y)
    for (int x = 0; x < 60; ++x) r.pixels[static_cast<std::size_t>(y) * 60 + x] = l.at(std::max(0, x - 3), y);
  SgmParams p = params(-8, 8);
  p.post.right = true;
  StereoResult res = sgm_cpu(l, r, p);
  long long ok = 0, okr = 0;
  for (int y = 5; y < 25; ++y)
    for (int x = 10; x < 50; ++x) {
      ok += res.left.at(x, y) == -3 * 16;
      okr += res.right.at(x, y) == -3 * 16;
    }
  EXPECT_EQ(ok, 20 * 40);
  EXPECT_EQ(okr, 20 * 40);
}

TEST(StereoSgm, SixteenBitInputUsesTheFullDepth) {
  // Texture only in the low byte (values 1000..1003): 8-bit scaling would flatten it.
  Image16 l{64, 16, 4095, {}}, r{64, 16, 4095, {}};
  std::mt19937 rng(3);
  for (int i = 0; i < 64 * 16; ++i) l.pixels.push_back(static_cast<std::uint16_t>(1000 + rng() % 4));
  r.pixels = l.pixels;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < 64; ++x) r.pixels[static_cast<std::size_t>(y) * 64 + x] = l.at(std::min(63, x + 5), y);
  StereoResult res = sgm_cpu(l, r, params(0, 15));
  long long ok = 0;
  for (int y = 4; y < 12; ++y)
    for (int x = 20; x < 58; ++x) ok += res.left.at(x, y) == 5 * 16;
  EXPECT_EQ(ok, 8 * 38);
}

TEST(StereoSgm, RejectsBadParameters) {
  auto bad = [](auto f) { EXPECT_THROW(f(), evk::InputError); };
  bad([] { SgmParams p = params(5, 4); validate(p); });
  bad([] { SgmParams p = params(0, 1024); validate(p); });
  bad([] { SgmParams p = params(-2048, 0); validate(p); });
  bad([] { SgmParams p = params(0, 63, 6); validate(p); });
  bad([] { SgmParams p = params(0, 63); p.p1 = 20; p.p2 = 10; validate(p); });
  bad([] { SgmParams p = params(0, 63); p.p2 = 8161; validate(p); });
  bad([] { SgmParams p = params(0, 63, 8, CostKind::sad); p.window = 4; validate(p); });
  bad([] { SgmParams p = params(0, 63); p.post.median = 5; validate(p); });
  bad([] { SgmParams p = params(0, 63); p.post.uniqueness = -1; validate(p); });
  bad([] { parse_cost("bt"); });
  bad([] { parse_subpixel("cubic"); });
  SgmParams ok = params(-1000, 23);
  ok.p2 = 8160;
  EXPECT_NO_THROW(validate(ok));
}

namespace {
// The SSD right map from its definition: for xr the first d minimising
// sum (L(xr + d + i, y + j) - R(xr + i, y + j))^2, reads clamped, below min_ssd.
DisparityMap ssd_right_naive(const Image8& L, const Image8& R, const Params& p) {
  DisparityMap out{L.width, L.height, std::vector<int>(L.pixels.size(), kInvalid)};
  const int r = p.radius();
  for (int y = 0; y < L.height; ++y)
    for (int xr = 0; xr < L.width; ++xr) {
      long long best = p.min_ssd;
      for (int d = p.min_disparity; d <= p.max_disparity; ++d) {
        long long s = 0;
        for (int j = -r; j <= r; ++j)
          for (int i = -r; i <= r; ++i) {
            const int yy = clampi(y + j, L.height);
            const int a = L.at(clampi(xr + d + i, L.width), yy), b = R.at(clampi(xr + i, L.width), yy);
            s += (a - b) * (a - b);
          }
        if (s < best) {
          best = s;
          out.d[static_cast<std::size_t>(y) * L.width + xr] = d;
        }
      }
    }
  return out;
}
}  // namespace

TEST(StereoSsdPost, WtaStatisticsAndRightMapFollowTheDefinitions) {
  SyntheticPair sp = make_synthetic_pair(41, 27, 12, 4);
  const Params p{0, 12, 5, 300000};
  const DisparityMap ref = disparity_cpu(sp.left, sp.right, p);
  WtaResult w = ssd_wta_cpu(sp.left, sp.right, p, 2);
  for (std::size_t i = 0; i < ref.d.size(); ++i) ASSERT_EQ(w.left[i].best, ref.d[i]) << i;
  // statistics against a direct evaluation at one pixel
  const int x = 20, y = 13, best = ref.at(x, y);
  ASSERT_GT(best, 1);
  auto ssd = [&](int d) {
    long long s = 0;
    for (int j = -2; j <= 2; ++j)
      for (int i = -2; i <= 2; ++i) {
        const int a = sp.left.at(clampi(x + i, 41), clampi(y + j, 27)), b = sp.right.at(clampi(x + i - d, 41), clampi(y + j, 27));
        s += (a - b) * (a - b);
      }
    return static_cast<int>(s);
  };
  const WtaPixel& px = w.left[static_cast<std::size_t>(y) * 41 + x];
  EXPECT_EQ(px.s_best, ssd(best));
  EXPECT_EQ(px.s_prev, ssd(best - 1));
  EXPECT_EQ(px.s_next, best < 12 ? ssd(best + 1) : -1);
  int second = -1;
  for (int d = 0; d <= 12; ++d)
    if (std::abs(d - best) > 1 && (second < 0 || ssd(d) < second)) second = ssd(d);
  EXPECT_EQ(px.s_second, second);
  // right map through the mirrored pair = the direct definition
  EXPECT_EQ(ssd_right_map(disparity_cpu(mirror(sp.right), mirror(sp.left), p)).q, to_q(ssd_right_naive(sp.left, sp.right, p)).q);
  // without post-processing the SSD method is Stam's map
  EXPECT_EQ(ssd_cpu(sp.left, sp.right, p, PostParams{}).left.q, to_q(ref).q);
}
