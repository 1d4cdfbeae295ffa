// File formats: round trips, conventions (PFM bottom-to-top, +inf invalid; 16-bit scale; 0 invalid).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "core/rig.hpp"
#include "core/sgm.hpp"
#include "io/io.hpp"
#include "io/points.hpp"

using namespace evk::stereo;
namespace fs = std::filesystem;

namespace {
DisparityMap sample() { return DisparityMap{3, 2, {0, 1, 2, 50, -1, 7}}; }
void write_text(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }
}  // namespace

TEST(StereoIo, PfmRoundTripWithInfInvalid) {
  evk::testing::TempDir t;
  write_disparity(t / "d.pfm", sample());
  FloatMap m = read_disparity(t / "d.pfm", 1);
  ASSERT_EQ(m.width, 3);
  ASSERT_EQ(m.height, 2);
  EXPECT_EQ(m.at(0, 0), 0.0f);
  EXPECT_EQ(m.at(2, 0), 2.0f);
  EXPECT_EQ(m.at(0, 1), 50.0f);
  EXPECT_TRUE(std::isinf(m.at(1, 1)) && m.at(1, 1) > 0);
  // Middlebury PFM stores the bottom row first: the first float after the header is (0, 1) = 50.
  std::ifstream in(t / "d.pfm", std::ios::binary);
  std::string magic, scale;
  int w, h;
  in >> magic >> w >> h >> scale;
  in.get();
  float first;
  in.read(reinterpret_cast<char*>(&first), 4);
  EXPECT_EQ(magic, "Pf");
  EXPECT_EQ(scale, "-1.0");
  EXPECT_EQ(first, 50.0f);
}

TEST(StereoIo, Pgm16RoundTripWithScale) {
  evk::testing::TempDir t;
  write_disparity(t / "d.pgm", sample(), WriteOptions{4});
  FloatMap m = read_disparity(t / "d.pgm", 4);
  EXPECT_EQ(m.at(1, 0), 1.0f);
  EXPECT_EQ(m.at(0, 1), 50.0f);
  EXPECT_TRUE(std::isinf(m.at(1, 1)));  // invalid -> 0
  EXPECT_TRUE(std::isinf(m.at(0, 0)));  // disparity 0 is indistinguishable from invalid (documented)
}

TEST(StereoIo, Png16WrittenAndReadBack) {
  if (!have_opencv()) GTEST_SKIP() << "PNG reading needs OpenCV";
  evk::testing::TempDir t;
  write_disparity(t / "d.png", sample(), WriteOptions{256});
  FloatMap m = read_disparity(t / "d.png", 256);
  EXPECT_EQ(m.at(2, 0), 2.0f);
  EXPECT_EQ(m.at(0, 1), 50.0f);
  EXPECT_EQ(m.at(2, 1), 7.0f);
  EXPECT_TRUE(std::isinf(m.at(1, 1)));
}

TEST(StereoIo, ColorPngInvalidIsBlack) {
  if (!have_opencv()) GTEST_SKIP() << "PNG reading needs OpenCV";
  evk::testing::TempDir t;
  write_color_png(t / "c.png", sample(), 0, 50);
  Image8 g = read_gray(t / "c.png");
  EXPECT_EQ(g.at(1, 1), 0);  // invalid
  EXPECT_GT(g.at(2, 1), 0);  // valid disparities are coloured (never black)
  EXPECT_GT(g.at(0, 0), 0);
}

TEST(StereoIo, NetpbmVariants) {
  evk::testing::TempDir t;
  write_text(t / "a.pgm", "P2\n# comment\n3 1\n255\n0 128 255\n");
  Image8 a = read_gray(t / "a.pgm");
  EXPECT_EQ(a.pixels, (std::vector<std::uint8_t>{0, 128, 255}));
  write_text(t / "b.ppm", std::string("P6\n2 1\n255\n") + std::string("\xff\x00\x00\x00\x00\xff", 6));
  Image8 b = read_gray(t / "b.ppm");
  EXPECT_EQ(b.at(0, 0), 76);  // 0.299 * 255
  EXPECT_EQ(b.at(1, 0), 29);  // 0.114 * 255
  write_text(t / "c.pgm", std::string("P5\n2 1\n65535\n") + std::string("\xff\xff\x80\x00", 4));
  Image8 c = read_gray(t / "c.pgm");
  EXPECT_EQ(c.at(0, 0), 255);
  EXPECT_EQ(c.at(1, 0), 128);
  Image8 im{2, 2, {1, 2, 3, 4}};
  write_pgm8(t / "d.pgm", im);
  EXPECT_EQ(read_gray(t / "d.pgm").pixels, im.pixels);
}

TEST(StereoIo, BadFilesAreInputErrors) {
  evk::testing::TempDir t;
  EXPECT_THROW(read_gray(t / "missing.pgm"), evk::InputError);
  write_text(t / "trunc.pgm", "P5\n10 10\n255\nabc");
  EXPECT_THROW(read_gray(t / "trunc.pgm"), evk::InputError);
  write_text(t / "empty.pgm", "");
  EXPECT_THROW(read_gray(t / "empty.pgm"), evk::InputError);
  write_text(t / "zero.pgm", "P5\n0 0\n255\n");
  EXPECT_THROW(read_gray(t / "zero.pgm"), evk::InputError);
  write_text(t / "bad.pfm", "Pf\n2 2\n-1.0\n1234");
  EXPECT_THROW(read_disparity(t / "bad.pfm", 1), evk::InputError);
  EXPECT_THROW(check_disparity_output(t / "x.tif", 50), evk::InputError);
  EXPECT_THROW(check_disparity_output(t / "x.png", 300, WriteOptions{256}), evk::InputError);
  EXPECT_NO_THROW(check_disparity_output(t / "x.png", 255, WriteOptions{256}));
}

// to_image8 takes a copy (maxval 255) or a table (large images) where it divided a pixel at a time:
// every 16-bit value, on each path, is v * 255 / maxval rounded as before (checked with 64-bit sums).
TEST(StereoIo, ToImage8IsTheRoundedScaleOnEveryPath) {
  for (const int maxval : {255, 7, 1023, 4095, 65535}) {
    for (const int w : {97, 256, 300}) {  // 97 x 1: a pixel at a time; 256 x 256 and 300 x 256: the table
      const int h = w == 97 ? 1 : 256;
      Image16 im{w, h, maxval, std::vector<std::uint16_t>(static_cast<std::size_t>(w) * h)};
      for (std::size_t i = 0; i < im.pixels.size(); ++i) im.pixels[i] = static_cast<std::uint16_t>((i * 40503u) & 0xffffu);
      const Image8 o = to_image8(im);
      ASSERT_EQ(o.pixels.size(), im.pixels.size());
      for (std::size_t i = 0; i < im.pixels.size(); ++i) {
        const std::uint64_t v = im.pixels[i], m = static_cast<std::uint64_t>(maxval);
        ASSERT_EQ(o.pixels[i], static_cast<std::uint8_t>((v * 255 + m / 2) / m)) << "maxval " << maxval << ", value " << v;
      }
    }
  }
}

// write_depth_pfm looks each 16-bit code's depth up in a table on large maps: every code, on both
// paths, is depth_from_disparity of its disparity (code / 16; the invalid code +inf) bit for bit.
TEST(StereoIo, DepthPfmIsDepthFromDisparityOfEveryCode) {
  evk::testing::TempDir t;
  Rig rig;
  rig.Q = {1, 0, 0, -128, 0, 1, 0, -128, 0, 0, 0, 700, 0, 0, 1 / 0.12, 0.3};  // a cx - cx' term: depth not f B / d alone
  for (const int h : {256, 3}) {  // 65,536 pixels: the table; 768: a pixel at a time
    DisparityQ d{256, h, std::vector<std::int16_t>(static_cast<std::size_t>(256) * h)};
    for (std::size_t i = 0; i < d.q.size(); ++i) d.q[i] = static_cast<std::int16_t>(static_cast<std::uint16_t>(i * 7919u));
    rig.width = 256;
    rig.height = h;
    write_depth_pfm(t / "z.pfm", rig, d);
    const FloatMap z = read_disparity(t / "z.pfm", 1);
    ASSERT_EQ(z.v.size(), d.q.size());
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < 256; ++x) {
        const std::int16_t c = d.q[static_cast<std::size_t>(y) * 256 + x];
        const float want = depth_from_disparity(rig, c == kInvalidQ ? std::numeric_limits<float>::infinity() : c / 16.0f);
        const float got = z.at(x, y);
        ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << "code " << c << ": " << got << " vs " << want;
      }
  }
}
