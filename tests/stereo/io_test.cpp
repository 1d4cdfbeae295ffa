// File formats: round trips, conventions (PFM bottom-to-top, +inf invalid; 16-bit scale; 0 invalid).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "io/io.hpp"

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
