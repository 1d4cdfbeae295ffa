// The rectification remap's CPU reference (core/rectify.hpp) against its definition evaluated in
// double precision, and the facade with a rig's maps on the CPU backend: raw pairs in, the maps of
// the pair rectified by remap_cpu out. (The GPU kernel against remap_cpu: rectify_checks.hpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "core/matcher.hpp"
#include "core/rectify.hpp"
#include "core/synthetic.hpp"
#include "evk/error.hpp"

using namespace evk::stereo;

namespace {
// The definition: a position inside (-1, W) x (-1, H) rounded to the nearest 1/256 pixel (halves
// up), the bilinear blend of its four neighbours (0 outside) in double, rounded half up.
double defined(const std::vector<std::uint16_t>& im, int w, int h, double x, double y) {
  if (!(x > -1 && x < w && y > -1 && y < h)) return 0;
  const double qx = std::floor(x * 256 + 0.5) / 256, qy = std::floor(y * 256 + 0.5) / 256;
  const double x0 = std::floor(qx), y0 = std::floor(qy), fx = qx - x0, fy = qy - y0;
  auto at = [&](double xx, double yy) {
    return xx < 0 || yy < 0 || xx >= w || yy >= h ? 0.0 : im[static_cast<std::size_t>(yy) * w + static_cast<std::size_t>(xx)];
  };
  const double v = (1 - fx) * (1 - fy) * at(x0, y0) + fx * (1 - fy) * at(x0 + 1, y0) + (1 - fx) * fy * at(x0, y0 + 1) +
                   fx * fy * at(x0 + 1, y0 + 1);
  return std::floor(v + 0.5);
}
}  // namespace

TEST(StereoRectify, RemapCpuFollowsItsDefinition) {
  const int w = 23, h = 17;
  std::mt19937_64 rng(5);
  for (int maxval : {255, 65535}) {
    std::vector<std::uint16_t> im(static_cast<std::size_t>(w) * h);
    for (auto& p : im) p = static_cast<std::uint16_t>(rng() % static_cast<unsigned>(maxval + 1));
    std::vector<std::uint8_t> im8(im.begin(), im.end());
    // positions: whole pixels, multiples of 1/256 and their midpoints (the ties), random, outside
    std::vector<float> mx, my;
    std::uniform_real_distribution<float> ux(-2.f, w + 1.f), uy(-2.f, h + 1.f);
    for (int i = 0; i < w * h; ++i) {
      const int kind = i % 4;
      float x = ux(rng), y = uy(rng);
      if (kind == 0) x = std::round(x), y = std::round(y);
      if (kind == 1) x = std::round(x * 256) / 256, y = std::round(y * 256) / 256;
      if (kind == 2) x = (std::round(x * 256) + 0.5f) / 256, y = (std::round(y * 256) - 0.5f) / 256;
      mx.push_back(x);
      my.push_back(y);
    }
    std::vector<std::uint16_t> out(im.size());
    std::vector<std::uint8_t> out8(im.size());
    remap_cpu(im.data(), w, h, mx.data(), my.data(), out.data());
    remap_cpu(im8.data(), w, h, mx.data(), my.data(), out8.data());
    for (std::size_t i = 0; i < im.size(); ++i) {
      const double want = defined(im, w, h, mx[i], my[i]);
      ASSERT_EQ(out[i], want) << "maxval " << maxval << " at (" << mx[i] << ", " << my[i] << ")";
      if (maxval == 255) {
        ASSERT_EQ(out8[i], want) << "8-bit at (" << mx[i] << ", " << my[i] << ")";
      }
    }
  }
}

TEST(StereoRectify, IdentityShiftsAndNonFinitePositions) {
  const int w = 9, h = 7;
  std::vector<std::uint16_t> im(static_cast<std::size_t>(w) * h), out(im.size());
  for (std::size_t i = 0; i < im.size(); ++i) im[i] = static_cast<std::uint16_t>(1000 + 37 * i);
  auto run = [&](auto fx, auto fy) {
    std::vector<float> mx, my;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) mx.push_back(fx(x, y)), my.push_back(fy(x, y));
    remap_cpu(im.data(), w, h, mx.data(), my.data(), out.data());
  };
  run([](int x, int) { return static_cast<float>(x); }, [](int, int y) { return static_cast<float>(y); });
  EXPECT_EQ(out, im);
  run([](int x, int) { return x + 2.f; }, [](int, int y) { return y - 1.f; });  // (x + 2, y - 1), 0 outside
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      EXPECT_EQ(out[static_cast<std::size_t>(y) * w + x],
                x + 2 < w && y >= 1 ? im[static_cast<std::size_t>(y - 1) * w + x + 2] : 0)
          << x << "," << y;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  run([&](int x, int) { return x % 3 == 0 ? nan : x % 3 == 1 ? inf : -1.f; }, [](int, int y) { return static_cast<float>(y); });
  for (auto v : out) EXPECT_EQ(v, 0);
}

TEST(StereoRectify, CpuMatcherWithMapsMatchesTheRemappedPair) {
  const int w = 48, h = 30;
  auto maps = std::make_shared<RectifyMaps>(synthetic_rectify_maps(w, h, 0.01, -0.04));
  const SyntheticPair sp = make_synthetic_pair(w, h, 12, 41);
  const Image16 l = to_image16(sp.left), r = to_image16(sp.right);
  Image16 rl = l, rr = r;
  rectify_image(*maps, 0, rl);
  rectify_image(*maps, 1, rr);
  for (const char* method : {"sgm", "ssd"}) {
    MatchOptions o;
    o.method = method;
    o.backend = "cpu";
    o.params.max_disparity = 15;
    o.params.window = 5;
    o.post.lr_check = 1;
    o.finalize();
    Matcher raw(o, w, h, {}, maps), plain(o, w, h);
    EXPECT_EQ(raw.run(l, r).left.q, plain.run(rl, rr).left.q) << method;
    Image16 small = l;
    small.width -= 1;
    small.pixels.resize(static_cast<std::size_t>(small.width) * h);
    try {
      raw.run(small, small);
      ADD_FAILURE() << "a pair of another size than the maps was taken";
    } catch (const evk::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--rig"), std::string::npos) << e.what();
    }
  }
}
