// The stereo CLI with --method sgm and the shared post-processing: outputs equal the library's
// CPU results, the right map, 16-bit input, video/batch through the stream engine, bad input
// (exit 2, one line, no output).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/sgm.hpp"
#include "core/ssd.hpp"
#include "core/synthetic.hpp"
#include "evk_testing.hpp"
#include "io/io.hpp"

using namespace evk::stereo;
using evk::testing::run_tool;
namespace fs = std::filesystem;

namespace {
struct Fx {
  evk::testing::TempDir t;
  SyntheticPair sp = make_synthetic_pair(61, 37, 12, 8);
  Fx() {
    write_pgm8(t / "L.pgm", sp.left);
    write_pgm8(t / "R.pgm", sp.right);
  }
  std::string p(const std::string& n) const { return "'" + (t / n).string() + "'"; }
  std::string lr() const { return p("L.pgm") + " " + p("R.pgm"); }
};
std::vector<float> pfm(const fs::path& p) { return read_disparity(p, 1).v; }
int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

TEST(StereoSgmCli, DisparityEqualsTheLibrary) {
  Fx f;
  auto r = run_tool("stereo", "disparity " + f.lr() + " -o " + f.p("d.pfm") + " --method sgm --max-disparity 15 "
                    "--subpixel parabola --median 3 --uniqueness 5 --lr-check 1 --right-output " + f.p("r.pfm") +
                    " --backend cpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"method\": \"sgm\""), std::string::npos) << r.out;
  SgmParams p;
  p.max_disparity = 15;
  p.post.subpixel = Subpixel::parabola;
  p.post.median = 3;
  p.post.uniqueness = 5;
  p.post.lr_check = 1;
  p.post.right = true;
  const StereoResult ref = sgm_cpu(f.sp.left, f.sp.right, p);
  // PFM keeps the 1/16 fractions; reading treats negative values as unknown, none here
  EXPECT_EQ(pfm(f.t / "d.pfm"), to_float(ref.left).v);
  EXPECT_EQ(pfm(f.t / "r.pfm"), to_float(ref.right).v);
  bool fraction = false;
  for (float v : pfm(f.t / "d.pfm")) fraction = fraction || (std::isfinite(v) && v != std::floor(v));
  EXPECT_TRUE(fraction) << "sub-pixel values expected";
}

TEST(StereoSgmCli, SsdWithPostProcessingEqualsTheLibrary) {
  Fx f;
  auto r = run_tool("stereo", "disparity " + f.lr() + " -o " + f.p("d.pfm") + " --max-disparity 15 --window 5 "
                    "--subpixel equiangular --lr-check 1 --median 3 --speckle-size 4 --backend cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  PostParams post;
  post.subpixel = Subpixel::equiangular;
  post.lr_check = 1;
  post.median = 3;
  post.speckle_size = 4;
  EXPECT_EQ(pfm(f.t / "d.pfm"), to_float(ssd_cpu(f.sp.left, f.sp.right, Params{0, 15, 5, 500000}, post).left).v);
}

TEST(StereoSgmCli, SixteenBitPgmAndNegativeRange) {
  Fx f;
  Image16 l = to_image16(f.sp.left), r = to_image16(f.sp.right);
  for (auto* im : {&l, &r}) {
    im->maxval = 4095;
    for (auto& v : im->pixels) v = static_cast<std::uint16_t>(v * 16 + 3);
  }
  auto w16 = [](const fs::path& p, const Image16& im) {
    std::ofstream o(p, std::ios::binary);
    o << "P5\n" << im.width << " " << im.height << "\n" << im.maxval << "\n";
    for (auto v : im.pixels) o.put(static_cast<char>(v >> 8)).put(static_cast<char>(v & 255));
  };
  w16(f.t / "L16.pgm", l);
  w16(f.t / "R16.pgm", r);
  auto res = run_tool("stereo", "disparity " + f.p("L16.pgm") + " " + f.p("R16.pgm") + " -o " + f.p("d.pfm") +
                      " --method sgm --min-disparity -4 --max-disparity 15 --backend cpu");
  ASSERT_EQ(res.exit_code, 0) << res.err;
  SgmParams p;
  p.min_disparity = -4;
  p.max_disparity = 15;
  EXPECT_EQ(pfm(f.t / "d.pfm"), to_float(sgm_cpu(l, r, p).left).v);
}

TEST(StereoSgmCli, VideoAndBatchThroughTheStreamEngine) {
  Fx f;
  fs::create_directories(f.t / "l");
  fs::create_directories(f.t / "r");
  fs::create_directories(f.t / "out");
  for (int i = 1; i <= 3; ++i) {
    char n[32];
    std::snprintf(n, sizeof n, "%04d.pgm", i);
    write_pgm8(f.t / "l" / n, f.sp.left);
    write_pgm8(f.t / "r" / n, f.sp.right);
  }
  SgmParams p;
  p.max_disparity = 15;
  const auto ref = to_float(sgm_cpu(f.sp.left, f.sp.right, p).left).v;
  // numbered frames: no frame 0, so from 1
  auto a = run_tool("stereo", "video " + f.p("l/%04d.pgm") + " " + f.p("r/%04d.pgm") + " -o " + f.p("out") +
                    " --method sgm --max-disparity 15 --backend cpu");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("3 frames"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("frames/s"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("bound by"), std::string::npos) << a.out;
  for (const char* n : {"0001.pfm", "0002.pfm", "0003.pfm"}) EXPECT_EQ(pfm(f.t / "out" / n), ref) << n;
  // two directories, --count
  fs::remove_all(f.t / "out");
  fs::create_directories(f.t / "out");
  auto b = run_tool("stereo", "video " + f.p("l") + " " + f.p("r") + " -o " + f.p("out") +
                    " --method sgm --max-disparity 15 --backend cpu --count 2 --format png --json");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_TRUE(fs::exists(f.t / "out" / "0001.png"));
  EXPECT_TRUE(fs::exists(f.t / "out" / "0002.png"));
  EXPECT_FALSE(fs::exists(f.t / "out" / "0003.png"));
  // batch with sgm
  std::ofstream(f.t / "pairs.txt") << "L.pgm R.pgm one\n";
  auto c = run_tool("stereo", "batch " + f.p("pairs.txt") + " -o " + f.p("out") + " --method sgm --max-disparity 15 --backend cpu");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(pfm(f.t / "out" / "one.pfm"), ref);
}

TEST(StereoSgmCli, BadInputExits2WithOneLineAndNoOutput) {
  Fx f;
  fs::create_directories(f.t / "l");
  const std::string o = " -o " + f.p("out.pfm");
  struct Bad {
    std::string args, needle;
  } cases[] = {
      {"disparity " + f.lr() + o + " --method sgm --paths 6", "--paths"},
      {"disparity " + f.lr() + o + " --method sgm --p1 20 --p2 10", "--p2"},
      {"disparity " + f.lr() + o + " --method sgm --max-disparity 2000", "--max-disparity"},
      {"disparity " + f.lr() + o + " --method sgm --median 5", "--median"},
      {"disparity " + f.lr() + o + " --subpixel cubic", "--subpixel"},
      {"disparity " + f.lr() + o + " --method bm", "--method"},
      {"disparity " + f.lr() + " -o " + f.p("out.png") + " --method sgm --min-disparity -3", "negative"},
      {"disparity " + f.lr() + o + " --method sgm --kernel evolved", "--kernel"},
      {"disparity " + f.lr() + o + " --kernel expert", "GPU"},
      {"video " + f.p("l/%d%d.pgm") + " " + f.p("r/%d.pgm") + " -o " + f.p("."), "%d"},
      {"video " + f.p("l") + " " + f.p("nothere") + " -o " + f.p("."), "nothere"},
      {"video " + f.p("l/%04d.pgm") + " " + f.p("r/%04d.pgm") + " -o " + f.p("."), "no such frame"},
  };
  for (const auto& c : cases) {
    auto r = run_tool("stereo", c.args + " --backend cpu");
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(f.t / "out.pfm")) << c.args;
    EXPECT_FALSE(fs::exists(f.t / "out.png")) << c.args;
  }
}
