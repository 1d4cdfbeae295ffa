// GPU: for every shipped stereo variant that `--kernel auto` may pick on this GPU (compute
// capability up to the GPU's; the chain prefers one evolved on this very device), `auto` picks an
// evolved variant for a job of each of its size classes, loads it from the embedded fatbin (no
// NVRTC), and the disparity maps equal the CPU reference on every pixel (output poisoned by the
// backend; sizes of each class, odd sizes too). A job outside its constraints falls back and stays
// exact. Also through the CLI: `stereo disparity -v --json`.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/ssd_gpu.hpp"
#include "core/reference.hpp"
#include "core/synthetic.hpp"
#include "evk_testing.hpp"
#include "test_util.hpp"

using namespace evk::stereo;

namespace {
const std::map<std::string, std::vector<std::pair<int, int>>> kClassSizes = {
    {"paper", {{320, 240}, {301, 217}}},
    {"middlebury", {{450, 375}, {434, 383}}},
    {"kitti", {{1242, 375}, {1001, 333}}},
    {"1080p", {{1920, 1080}, {1282, 1110}}}};

std::vector<evk::Variant> shipped_for_this_gpu() {
  const auto& d = evk::gpu_environment().devices[0];
  std::vector<evk::Variant> out;
  const evk::Registry reg = make_registry();
  for (const auto& v : reg.variants())
    if (v.source == evk::VariantSource::builtin && !v.is_original() && v.cc <= d.cc())  // auto may pick it here
      out.push_back(v);
  return out;
}

void write_pgm(const std::filesystem::path& p, const Image8& im) {
  std::ofstream f(p, std::ios::binary);
  f << "P5\n" << im.width << " " << im.height << "\n255\n";
  f.write(reinterpret_cast<const char*>(im.pixels.data()), static_cast<std::streamsize>(im.pixels.size()));
}
}  // namespace

TEST(ShippedStereoGpu, AutoPicksItLoadsTheFatbinAndMatchesTheCpu) {
  EVK_REQUIRE_GPU();
  const auto& dev = evk::gpu_environment().devices[0];
  const auto variants = shipped_for_this_gpu();
  if (variants.empty()) GTEST_SKIP() << "no shipped stereo variant for " << dev.name;
  std::uint64_t seed = 4100;
  for (const auto& v : variants) {
    std::vector<std::string> classes = v.classes;
    if (classes.empty()) classes = {"paper", "middlebury", "kitti", "1080p"};
    for (const auto& cls : classes) {
      for (auto [w, h] : kClassSizes.at(cls)) {
        Params p;  // the default job: window 11, disparities 0..50
        const evk::Request req = make_request(p, w, h);
        ASSERT_EQ(req.size_class, cls) << w << "x" << h;
        evk::Selection s = select_variant("auto", dev, req);
        // it, or another shipped variant of this GPU that fits the job equally
        EXPECT_FALSE(s.variant.is_original()) << v.id << " " << cls << ": " << s.rule;
        GpuBackend gpu(0, make_kernel_variant(s.variant));
        SyntheticPair sp = make_synthetic_pair(w, h, p.max_disparity, seed++);
        DisparityMap g;
        ASSERT_NO_THROW(g = gpu.run(sp.left, sp.right, p)) << s.variant.id;
        EXPECT_EQ(stereo_test::first_difference(g, disparity_cpu(sp.left, sp.right, p)), "")
            << s.variant.id << " on " << w << "x" << h;
        EXPECT_NE(gpu.describe().find("embedded fatbin (" + s.variant.id + ")"), std::string::npos) << gpu.describe();
      }
    }
    // a job that breaks a constraint falls back (here: more disparities than an 8-bit output holds)
    Params wide;
    wide.max_disparity = 255;
    evk::Selection s = select_variant("auto", dev, make_request(wide, 320, 240));
    const evk::Registry reg = make_registry();
    for (const auto& c : reg.constraints_of(v)) {
      if (c.name == "max_disparity" && !c.holds(255)) {
        EXPECT_NE(s.variant.id, v.id);
      }
    }
    GpuBackend gpu(0, make_kernel_variant(s.variant));
    SyntheticPair sp = make_synthetic_pair(320, 240, 200, seed++);
    EXPECT_EQ(stereo_test::first_difference(gpu.run(sp.left, sp.right, wide), disparity_cpu(sp.left, sp.right, wide)), "");
  }
}

TEST(ShippedStereoGpu, TheToolRunsItWithKernelAuto) {
  EVK_REQUIRE_GPU();
  const auto variants = shipped_for_this_gpu();
  if (variants.empty()) GTEST_SKIP() << "no shipped stereo variant for this GPU";
  evk::testing::TempDir t;
  for (const auto& v : variants) {
    const std::string cls = v.classes.empty() ? "paper" : v.classes[0];
    auto [w, h] = kClassSizes.at(cls)[0];
    SyntheticPair sp = make_synthetic_pair(w, h, 50, 77);
    write_pgm(t / "l.pgm", sp.left);
    write_pgm(t / "r.pgm", sp.right);
    auto r = evk::testing::run_tool("stereo", "disparity " + (t / "l.pgm").string() + " " + (t / "r.pgm").string() +
                                                  " -o " + (t / "d.pfm").string() + " --backend gpu -v --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_FALSE(j["kernel"].get<std::string>().empty());
    EXPECT_NE(j["kernel"].get<std::string>(), "original") << r.err;
    EXPECT_NE(r.err.find("embedded fatbin"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("NVRTC"), std::string::npos) << r.err;
  }
}
