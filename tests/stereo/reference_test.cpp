// The CPU reference against the literal per-pixel definition, hand-computed cases and semantics.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/reference.hpp"
#include "core/synthetic.hpp"
#include "evk/error.hpp"
#include "test_util.hpp"

using namespace evk::stereo;

namespace {
Image8 img(int w, int h, std::vector<std::uint8_t> px) { return Image8{w, h, std::move(px)}; }

constexpr int kNo = 2000000000;
struct Case {
  int w, h, mind, maxd, window, min_ssd;
};
}  // namespace

TEST(StereoReference, MatchesNaiveOnOddSizes) {
  const Case cases[] = {
      // Noise SSDs exceed the default min_ssd for large windows: kNo keeps every pixel valid.
      {631, 479, 0, 3, 3, kNo},  {631, 479, 5, 8, 5, 500000}, {17, 5, 0, 50, 11, kNo},
      {1, 1, 0, 50, 11, kNo},    {1, 1, 3, 3, 3, 500000},     {33, 29, 2, 40, 7, kNo},
      {40, 23, 0, 20, 21, kNo},  {57, 31, 0, 30, 11, 1300000}, {64, 40, 10, 12, 9, 100},
      {5, 200, 0, 9, 5, 500000},
  };
  std::uint64_t seed = 1;
  for (const Case& c : cases) {
    Image8 l = random_image(c.w, c.h, seed++), r = random_image(c.w, c.h, seed++);
    Params p{c.mind, c.maxd, c.window, c.min_ssd};
    DisparityMap fast = disparity_cpu(l, r, p), slow = disparity_naive(l, r, p);
    if (c.min_ssd == kNo) {
      EXPECT_EQ(std::count(fast.d.begin(), fast.d.end(), kInvalid), 0);
    }
    EXPECT_EQ(stereo_test::first_difference(fast, slow), "")
        << c.w << "x" << c.h << " d " << c.mind << ".." << c.maxd << " window " << c.window;
  }
}

TEST(StereoReference, MatchesNaiveOnStructuredPairs) {
  // Random noise rarely produces ties or invalid pixels; shifted pairs exercise both.
  for (std::uint64_t s = 0; s < 3; ++s) {
    SyntheticPair sp = make_synthetic_pair(97, 61, 20, s);
    Params p{0, 20, 5, 20000};
    EXPECT_EQ(stereo_test::first_difference(disparity_cpu(sp.left, sp.right, p), disparity_naive(sp.left, sp.right, p)), "");
  }
}

TEST(StereoReference, ThreadCountDoesNotMatter) {
  Image8 l = random_image(203, 157, 7), r = random_image(203, 157, 8);
  Params p;
  EXPECT_EQ(stereo_test::first_difference(disparity_cpu(l, r, p, 1), disparity_cpu(l, r, p, 3)), "");
}

TEST(StereoReference, HandComputedSinglePixel) {
  // Every read clamps to the one pixel: SSD = 9 * (10-7)^2 = 81 for every d; the first d wins,
  // and only when 81 is strictly below min_ssd.
  Image8 l = img(1, 1, {10}), r = img(1, 1, {7});
  EXPECT_EQ(disparity_cpu(l, r, Params{2, 9, 3, 82}).d[0], 2);
  EXPECT_EQ(disparity_cpu(l, r, Params{2, 9, 3, 81}).d[0], kInvalid);
}

TEST(StereoReference, HandComputedShift) {
  // Left bright pixel at x=2, right at x=1: disparity 1 at x=2 (the right image is shifted left).
  Image8 l = img(5, 1, {0, 0, 100, 0, 0}), r = img(5, 1, {0, 100, 0, 0, 0});
  DisparityMap d = disparity_cpu(l, r, Params{0, 3, 3, 500000});
  EXPECT_EQ(d.d[2], 1);
  // d=0 at x=2: columns 1..3 differ by -100, 100, 0 in 3 rows: SSD 60000; with min_ssd 60000 and
  // d=1 giving 0 the answer is still 1; with min_ssd 0 nothing is strictly below -> invalid.
  EXPECT_EQ(disparity_cpu(l, r, Params{0, 3, 3, 60000}).d[2], 1);
  EXPECT_EQ(disparity_cpu(l, r, Params{0, 3, 3, 0}).d[2], kInvalid);
}

TEST(StereoReference, RecoversSyntheticDisparities) {
  SyntheticPair sp = make_synthetic_pair(320, 240, 50, 11);
  DisparityMap d = disparity_cpu(sp.left, sp.right, Params{});
  long long ok = 0;
  for (std::size_t i = 0; i < d.d.size(); ++i) ok += d.d[i] == sp.truth.d[i];
  // Occlusion borders and the left margin (x < d) are ambiguous; the rest must match.
  EXPECT_GT(static_cast<double>(ok) / d.d.size(), 0.85);
}

TEST(StereoReference, RejectsBadParameters) {
  Image8 l = random_image(8, 8, 1), r = random_image(8, 8, 2);
  EXPECT_THROW(disparity_cpu(l, r, Params{0, 50, 10, 500000}), evk::InputError);
  EXPECT_THROW(disparity_cpu(l, r, Params{0, 50, 1, 500000}), evk::InputError);
  EXPECT_THROW(disparity_cpu(l, r, Params{10, 5, 11, 500000}), evk::InputError);
  EXPECT_THROW(disparity_cpu(l, r, Params{0, 50, 183, 500000}), evk::InputError);
  EXPECT_THROW(disparity_cpu(l, random_image(8, 9, 3), Params{}), evk::InputError);
  EXPECT_THROW(disparity_cpu(Image8{}, Image8{}, Params{}), evk::InputError);
}
