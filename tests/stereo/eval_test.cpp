// eval: hand-computed bad-pixel counts, and the Middlebury scale conventions on real pairs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/eval.hpp"
#include "core/reference.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "io/io.hpp"

using namespace evk::stereo;
namespace fs = std::filesystem;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
FloatMap fm(int w, int h, std::vector<float> v) { return FloatMap{w, h, std::move(v)}; }
}  // namespace

TEST(StereoEval, HandComputedCounts) {
  // gt 0 = unknown (pixel 5 skipped). Errors: 0, 0.5, 1.5, 3, invalid, -, 1.0 (not > 1).
  FloatMap gt = fm(7, 1, {10, 10, 10, 10, 10, 0, 10});
  FloatMap d = fm(7, 1, {10, 10.5f, 8.5f, 13, kInf, 4, 11});
  EvalResult r = evaluate(d, gt, nullptr, {1.0, 2.0});
  EXPECT_EQ(r.pixels, 6);
  EXPECT_EQ(r.invalid, 1);
  EXPECT_EQ(r.bad[0], 3);  // 1.5, 3, invalid
  EXPECT_EQ(r.bad[1], 2);  // 3, invalid
  EXPECT_NEAR(r.rms, std::sqrt((0 + 0.25 + 2.25 + 9 + 1) / 5.0), 1e-9);
  EXPECT_NEAR(r.percent(r.bad[0]), 50.0, 1e-9);
}

TEST(StereoEval, MaskSelectsPixels) {
  FloatMap gt = fm(4, 1, {5, 5, 5, 5});
  FloatMap d = fm(4, 1, {5, 9, 9, -1});
  Image8 mask{4, 1, {255, 255, 128, 0}};
  EvalResult r = evaluate(d, gt, &mask, {2.0});
  EXPECT_EQ(r.pixels, 2);
  EXPECT_EQ(r.bad[0], 1);
  EXPECT_EQ(r.invalid, 0);
}

TEST(StereoEval, SizeMismatchIsInputError) {
  EXPECT_THROW(evaluate(fm(2, 1, {1, 1}), fm(1, 1, {1}), nullptr), evk::InputError);
}

namespace {
// SSD 11x11, 0..50 on a Middlebury 2001/2003 pair; bad-2 percent in the non-occluded mask.
double bad2_nonocc(const fs::path& dir, double gt_scale) {
  Image8 l = read_gray(dir / "imL.png"), r = read_gray(dir / "imR.png");
  DisparityMap d = disparity_cpu(l, r, Params{});
  FloatMap gt = read_disparity(dir / "groundtruth.png", gt_scale);
  Image8 mask = read_mask(dir / "nonocc.png");
  EvalResult e = evaluate(to_float(d), gt, &mask, {2.0});
  EXPECT_GT(e.pixels, l.width * l.height / 2);
  return e.percent(e.bad[0]);
}
}  // namespace

TEST(StereoEval, TsukubaScale16) {
  fs::path dir = evk::testing::shared_data_dir() / "stereo" / "Tsukuba";
  if (evk::testing::shared_data_dir().empty() || !fs::exists(dir / "imL.png")) GTEST_SKIP() << "no Tsukuba data";
  if (!have_opencv()) GTEST_SKIP() << "PNG input needs OpenCV";
  // The orientation figure is ~8% bad-2 (non-occluded); the wrong scale is far off.
  const double b = bad2_nonocc(dir, 16);
  EXPECT_GT(b, 5.0);
  EXPECT_LT(b, 11.0);
  EXPECT_GT(bad2_nonocc(dir, 8), 50.0);
}

TEST(StereoEval, VenusScale8) {
  fs::path dir = evk::testing::shared_data_dir() / "stereo" / "Venus";
  if (evk::testing::shared_data_dir().empty() || !fs::exists(dir / "imL.png")) GTEST_SKIP() << "no Venus data";
  if (!have_opencv()) GTEST_SKIP() << "PNG input needs OpenCV";
  const double b = bad2_nonocc(dir, 8);  // ~6%
  EXPECT_GT(b, 3.0);
  EXPECT_LT(b, 9.0);
  EXPECT_GT(bad2_nonocc(dir, 16), 50.0);
}

TEST(StereoEval, AloeScale1) {
  fs::path dir = evk::testing::project_data_dir() / "stereo";
  if (!fs::exists(dir / "aloeL.jpg")) GTEST_SKIP() << "no aloe data (scripts/fetch-data.sh)";
  if (!have_opencv()) GTEST_SKIP() << "JPEG input needs OpenCV";
  Image8 l = read_gray(dir / "aloeL.jpg"), r = read_gray(dir / "aloeR.jpg");
  FloatMap gt = read_disparity(dir / "aloeGT.png", 1);
  ASSERT_EQ(gt.width, l.width);
  // aloe's disparities reach well past 100 px at this resolution: 0..50 misses most of the scene,
  // 0..191 finds most of it.
  Params wide;
  wide.max_disparity = 191;
  EvalResult narrow = evaluate(to_float(disparity_cpu(l, r, Params{})), gt, nullptr, {2.0});
  EvalResult full = evaluate(to_float(disparity_cpu(l, r, wide)), gt, nullptr, {2.0});
  EXPECT_LT(full.percent(full.bad[0]), 30.0);
  EXPECT_GT(narrow.percent(narrow.bad[0]), 50.0);
}
