// The stereo CLI contract: disparity/eval/batch/devices, and bad input (exit 2, one line, no file).
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include "evk/stereo/io.hpp"
#include "evk/stereo/reference.hpp"
#include "evk/stereo/synthetic.hpp"
#include "evk_testing.hpp"

using namespace evk::stereo;
using evk::testing::run_tool;
namespace fs = std::filesystem;

namespace {
struct Fixture {
  evk::testing::TempDir t;
  SyntheticPair sp = make_synthetic_pair(64, 48, 20, 5);
  Fixture() {
    write_pgm8(t / "L.pgm", sp.left);
    write_pgm8(t / "R.pgm", sp.right);
  }
  std::string p(const std::string& n) const { return "'" + (t / n).string() + "'"; }
};
int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

TEST(StereoCli, DisparityWritesTheReference) {
  Fixture f;
  auto r = run_tool("stereo", "disparity " + f.p("L.pgm") + " " + f.p("R.pgm") + " -o " + f.p("d.pfm") +
                                  " --max-disparity 20 --window 5 --backend cpu --color " + f.p("c.png") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"backend\": \"cpu\""), std::string::npos) << r.out;
  FloatMap m = read_disparity(f.t / "d.pfm", 1);
  DisparityMap ref = disparity_cpu(f.sp.left, f.sp.right, Params{0, 20, 5, 500000});
  EXPECT_EQ(m.v, to_float(ref).v);
  EXPECT_TRUE(fs::exists(f.t / "c.png"));
}

TEST(StereoCli, EvalPrintsRates) {
  Fixture f;
  // Ground truth as 16-bit PGM at scale 4 (0 = unknown), disparity as PFM.
  write_disparity(f.t / "gt.pgm", f.sp.truth, WriteOptions{4});
  write_disparity(f.t / "d.pfm", disparity_cpu(f.sp.left, f.sp.right, Params{0, 20, 5, 500000}));
  auto r = run_tool("stereo", "eval " + f.p("d.pfm") + " " + f.p("gt.pgm") + " --gt-scale 4 --thresholds 1,2,4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"bad-1.0", "bad-2.0", "bad-4.0", "invalid", "rms"}) EXPECT_NE(r.out.find(s), std::string::npos) << s;
  auto j = run_tool("stereo", "eval " + f.p("d.pfm") + " " + f.p("gt.pgm") + " --gt-scale 4 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("\"bad_2.0_percent\""), std::string::npos) << j.out;
}

TEST(StereoCli, BatchDirectoryAndList) {
  Fixture f;
  fs::create_directories(f.t / "in" / "scene");
  fs::create_directories(f.t / "out");
  write_pgm8(f.t / "in" / "aL.pgm", f.sp.left);
  write_pgm8(f.t / "in" / "aR.pgm", f.sp.right);
  write_pgm8(f.t / "in" / "scene" / "imL.pgm", f.sp.left);
  write_pgm8(f.t / "in" / "scene" / "imR.pgm", f.sp.right);
  auto r = run_tool("stereo", "batch " + f.p("in") + " -o " + f.p("out") + " --backend cpu --max-disparity 20");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 pairs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pairs/s"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(f.t / "out" / "a.pfm"));
  EXPECT_TRUE(fs::exists(f.t / "out" / "scene_im.pfm"));
  std::ofstream(f.t / "pairs.txt") << "# left right name\nL.pgm R.pgm one\n";
  auto r2 = run_tool("stereo", "batch " + f.p("pairs.txt") + " -o " + f.p("out") + " --backend cpu --format png");
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_TRUE(fs::exists(f.t / "out" / "one.png"));
}

TEST(StereoCli, DevicesListsTheKernel) {
  auto r = run_tool("stereo", "devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"tool\": \"stereo\""), std::string::npos);
  if (evk::gpu_environment().usable()) {
    EXPECT_NE(r.out.find("\"stereo\""), std::string::npos);
  }
}

TEST(StereoCli, BadInputExits2WithOneLineAndNoOutput) {
  Fixture f;
  write_pgm8(f.t / "small.pgm", Image8{10, 10, std::vector<std::uint8_t>(100, 1)});
  std::ofstream(f.t / "empty.pgm") << "";
  std::ofstream(f.t / "zero.pgm") << "P5\n0 0\n255\n";
  const std::string lr = f.p("L.pgm") + " " + f.p("R.pgm");
  const std::string out = f.p("out.pfm");
  struct Bad {
    std::string args, needle;
  } cases[] = {
      {"disparity " + f.p("missing.pgm") + " " + f.p("R.pgm") + " -o " + out, "missing.pgm"},
      {"disparity " + f.p("L.pgm") + " " + f.p("small.pgm") + " -o " + out, "differ in size"},
      {"disparity " + lr + " -o " + out + " --min-disparity 10 --max-disparity 5", "--max-disparity"},
      {"disparity " + lr + " -o " + out + " --window 10", "--window"},
      {"disparity " + lr + " -o " + out + " --window 1", "--window"},
      {"disparity " + f.p("empty.pgm") + " " + f.p("R.pgm") + " -o " + out, "empty.pgm"},
      {"disparity " + f.p("zero.pgm") + " " + f.p("R.pgm") + " -o " + out, "zero.pgm"},
      {"disparity " + lr + " -o " + f.p("nodir/out.pfm"), "nodir"},
      {"disparity " + lr + " -o " + f.p("out.tif"), "out.tif"},
      {"disparity " + lr + " -o " + f.p("out.png") + " --max-disparity 300", "--png-scale"},
      {"eval " + f.p("missing.pfm") + " " + f.p("L.pgm") + " --gt-scale 1", "missing.pfm"},
      {"eval " + f.p("L.pgm") + " " + f.p("small.pgm") + " --gt-scale 1", "size"},
      {"batch " + f.p("nothere") + " -o " + f.p("."), "nothere"},
  };
  for (const auto& c : cases) {
    auto r = run_tool("stereo", c.args + (c.args.rfind("eval", 0) == 0 ? "" : " --backend cpu"));
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(f.t / "out.pfm")) << c.args;
    EXPECT_FALSE(fs::exists(f.t / "out.png")) << c.args;
    for (const auto& e : fs::directory_iterator(f.t.path()))
      EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
}

TEST(StereoCli, UnwritableOutputExits2) {
  Fixture f;
  fs::create_directories(f.t / "ro");
  fs::permissions(f.t / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  if (::access((f.t / "ro").c_str(), W_OK) == 0) GTEST_SKIP() << "running as root: permissions are not enforced";
  auto r = run_tool("stereo", "disparity " + f.p("L.pgm") + " " + f.p("R.pgm") + " -o " + f.p("ro/d.pfm") + " --backend cpu");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_FALSE(fs::exists(f.t / "ro" / "d.pfm"));
}
