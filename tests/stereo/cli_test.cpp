// The stereo CLI contract: disparity/eval/batch/devices, and bad input (exit 2, one line, no file).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "io/io.hpp"
#include "core/ssd_gpu.hpp"
#include "core/reference.hpp"
#include "core/synthetic.hpp"
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
  // A hand-made 4x2 case: ground truth at scale 4 in a 16-bit PGM (-1: unknown, stored 0), the map
  // in 1/16 pixel as PFM (invalid +inf). Errors 0, 1.5, 3, invalid, 0, 2.5, (no truth), 0.
  const std::vector<int> gt = {10, 10, 10, 10, 20, 20, -1, 5};
  const std::vector<double> disp = {10, 11.5, 13, -1, 20, 17.5, 3, 5};  // -1: invalid
  write_disparity(f.t / "gt.pgm", DisparityMap{4, 2, gt}, WriteOptions{4});
  DisparityQ q{4, 2, {}};
  for (double d : disp) q.q.push_back(d < 0 ? kInvalidQ : static_cast<std::int16_t>(d * kDispScale));
  write_disparity(f.t / "d.pfm", q);
  // The rates, computed here from the two lists.
  const std::vector<double> th = {1, 2, 4};
  long long pixels = 0, invalid = 0;
  std::vector<long long> bad(th.size(), 0);
  double sum2 = 0;
  for (std::size_t i = 0; i < gt.size(); ++i) {
    if (gt[i] <= 0) continue;
    ++pixels;
    if (disp[i] < 0) {
      ++invalid;
      for (auto& b : bad) ++b;
      continue;
    }
    const double e = std::fabs(disp[i] - gt[i]);
    for (std::size_t k = 0; k < th.size(); ++k) bad[k] += e > th[k];
    sum2 += e * e;
  }
  ASSERT_EQ(pixels, 7);
  ASSERT_EQ(bad, (std::vector<long long>{4, 3, 1}));  // by hand: 1.5, 3, 2.5 and the invalid one; 3, 2.5, inv.; inv.
  const double rms = std::sqrt(sum2 / static_cast<double>(pixels - invalid));
  auto pc = [&](long long n) { return 100.0 * static_cast<double>(n) / static_cast<double>(pixels); };
  auto r = run_tool("stereo", "eval " + f.p("d.pfm") + " " + f.p("gt.pgm") + " --gt-scale 4 --thresholds 1,2,4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  char want[256];
  for (std::size_t k = 0; k < th.size(); ++k) {
    std::snprintf(want, sizeof want, "  bad-%.1f  %6.2f %%\n", th[k], pc(bad[k]));
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
  std::snprintf(want, sizeof want, "  invalid  %6.2f %%\n  rms      %6.3f px\n", pc(invalid), rms);
  EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  EXPECT_NE(r.out.find(": 7 pixels with ground truth"), std::string::npos) << r.out;
  auto j = run_tool("stereo", "eval " + f.p("d.pfm") + " " + f.p("gt.pgm") + " --gt-scale 4 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json v = nlohmann::json::parse(j.out);
  EXPECT_EQ(v.at("pixels").get<long long>(), pixels);
  EXPECT_NEAR(v.at("bad_1.0_percent").get<double>(), pc(bad[0]), 1e-9);
  EXPECT_NEAR(v.at("bad_2.0_percent").get<double>(), pc(bad[1]), 1e-9);
  EXPECT_NEAR(v.at("invalid_percent").get<double>(), pc(invalid), 1e-9);
  EXPECT_NEAR(v.at("rms").get<double>(), rms, 1e-6);
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
  // No overlay variants: the tool lists exactly the registry's (the variants built in).
  evk::testing::TempDir overlay;
  ::setenv("EVK_OVERLAY_DIR", overlay.path().c_str(), 1);
  auto r = run_tool("stereo", "devices --json");
  auto t = run_tool("stereo", "devices");
  ::unsetenv("EVK_OVERLAY_DIR");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("tool"), "stereo");
  const evk::Registry reg = make_registry();
  std::vector<std::string> want, got;
  for (const auto& v : reg.variants())
    if (!v.is_original()) want.push_back(v.kernel + "/" + v.id);
  for (const auto& v : j.at("variants")) got.push_back(v.at("kernel").get<std::string>() + "/" + v.at("id").get<std::string>());
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_FALSE(want.empty()) << "stereo ships evolved variants (kernels/evolved/stereo)";
  EXPECT_EQ(got, want);
  for (const auto& w : want) EXPECT_NE(t.out.find("  variant " + w + " ["), std::string::npos) << w << "\n" << t.out;
  const auto& env = evk::gpu_environment();
  if (!env.usable()) {
    // Why no GPU, in both forms, and the CPU backend named.
    EXPECT_EQ(j.at("backend"), "cpu");
    EXPECT_TRUE(j.at("devices").empty());
    EXPECT_EQ(j.at("status"), env.status);
    EXPECT_FALSE(env.status.empty());
    EXPECT_NE(t.out.find("No usable GPU: " + env.status + ".\nThe CPU backend will be used.\n"), std::string::npos)
        << t.out;
    return;
  }
  // With a GPU: per device, the variant the registry picks for the stereo kernel.
  EXPECT_EQ(j.at("backend"), "gpu");
  ASSERT_EQ(j.at("devices").size(), env.devices.size());
  for (std::size_t i = 0; i < env.devices.size(); ++i) {
    const auto& d = env.devices[i];
    const evk::Selection s = reg.select("stereo", evk::DeviceKey{d.cc(), d.name}, "auto");
    EXPECT_EQ(j["devices"][i]["kernels"]["stereo"]["variant"], s.variant.id) << d.name;
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
      {"disparity " + lr + " -o " + out + " --method sgm --bands -1", "--bands"},
      {"disparity " + lr + " -o " + out + " --copy-threads -1", "--copy-threads"},
      {"batch " + f.p(".") + " -o " + f.p(".") + " --copy-chunk -4", "--copy-chunk"},
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
