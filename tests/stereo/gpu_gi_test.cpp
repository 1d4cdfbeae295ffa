// GPU: evolved genome variants through the tool's path (genome file -> select_variant ->
// make_kernel_variant -> GpuBackend: apply_genome, NVRTC, the original's launch with the genome's
// config) bit-identical to the CPU reference on every pixel (the backend poisons the output and
// refuses unset pixels). A genome that breaks the kernel must be caught (the test can fail).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/ssd_gpu.hpp"
#include "core/reference.hpp"
#include "core/synthetic.hpp"
#include "evk_testing.hpp"
#include "test_util.hpp"

using namespace evk::stereo;

namespace {
KernelVariant from_file(const evk::testing::TempDir& t, const std::string& body) {
  const auto path = t / "v.genome";
  std::ofstream(path) << "# evokernels genome v1\n# kernel: stereo\n# cc: 9.0\n" << body << "\n";
  evk::Selection s = select_variant(path.string(), evk::gpu_environment().devices[0]);
  return make_kernel_variant(s.variant);
}

// Synthetic pairs (odd sizes, partial tiles), random noise with no threshold, two windows.
void expect_identical(const KernelVariant& v) {
  GpuBackend gpu(0, v);
  struct C {
    int w, h;
    Params p;
    bool noise;
  } cases[] = {{320, 240, {}, false}, {333, 97, {0, 50, 11, 500000}, false}, {211, 67, {2, 40, 7, 200000}, false},
               {157, 121, {0, 60, 11, 2000000000}, true}};
  std::uint64_t seed = 900;
  for (const auto& c : cases) {
    Image8 l, r;
    if (c.noise) {
      l = random_image(c.w, c.h, seed);
      r = random_image(c.w, c.h, seed + 1);
    } else {
      SyntheticPair sp = make_synthetic_pair(c.w, c.h, c.p.max_disparity, seed);
      l = sp.left;
      r = sp.right;
    }
    seed += 2;
    DisparityMap g;
    ASSERT_NO_THROW(g = gpu.run(l, r, c.p)) << v.genome;
    EXPECT_EQ(stereo_test::first_difference(g, disparity_cpu(l, r, c.p)), "")
        << v.genome << " on " << c.w << "x" << c.h << " window " << c.p.window;
  }
  EXPECT_NE(gpu.describe().find("NVRTC"), std::string::npos) << gpu.describe();
}
}  // namespace

TEST(StereoGpuGi, ConfigOnlyGenomeBitIdentical) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir t;
  // The paper's evolved K20c fixed part, plus a cache preference and plain loads.
  KernelVariant v = from_file(t, "cache=L1 STORE_disparityPixel=SHARED STORE_disparityMinSSD=SHARED DPER=2 XHALO=true "
                                 "GPtexturereadmode=NoTextures ROWSperTHREAD=5");
  ASSERT_FALSE(v.is_original());
  // a config-only genome edits no loop: no loop guard, the human kernel's text (docs/GI.md, loop guards)
  EXPECT_EQ(v.source.find("evk_gi_guard_"), std::string::npos);
  expect_identical(v);
}

TEST(StereoGpuGi, CodeEditGenomeBitIdentical) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir t;
  // Correctness-preserving edits: a copy of "ssd = 0;" before line 202's own, the DPER>1 barrier
  // deleted (dead code at DPER=1), the window loop unrolled, launch bounds, a different tiling.
  KernelVariant v = from_file(t, "BLOCK_W=128 ROWSperTHREAD=20 <_K_202>+<_K_179> <_K_216> <pragma_K_205><pragma_K0> "
                                 "<launchbounds_K_130><launchbounds_K0>");
  ASSERT_FALSE(v.is_original());
  ASSERT_NE(v.source.find("<_K_216> deleted"), std::string::npos);
  expect_identical(v);
}

TEST(StereoGpuGi, BreakingEditIsCaught) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir t;
  // Without "MINSSD(row) = ssd;" every disparity under min_ssd overwrites the best one: the
  // answers differ from the reference (the comparison above is not vacuous).
  KernelVariant v = from_file(t, "<_K_231>");
  GpuBackend gpu(0, v);
  SyntheticPair sp = make_synthetic_pair(320, 240, 50, 77);
  DisparityMap g = gpu.run(sp.left, sp.right, Params{});
  EXPECT_GT(stereo_test::count_differences(g, disparity_cpu(sp.left, sp.right, Params{})), 1000);
}

#include <nlohmann/json.hpp>

// Every size class through the tool: `gi validate` of the empty genome runs the original (human
// source, no guards) and the searched reference on hold-out cases of each class, checks every pixel
// against the CPU and reports per class. A uchar-output variant skips the 0..255 cases (its
// `requires: max_disparity <= 253`) and runs the others.
TEST(StereoGpuGi, EverySizeClassValidatesThroughTheTool) {
  EVK_REQUIRE_GPU();
  if (!std::filesystem::exists(evk::testing::bin_dir() / "stereo")) GTEST_SKIP() << "the stereo tool is not in " << evk::testing::bin_dir();
  evk::testing::TempDir t;
  std::ofstream(t / "empty.genome") << "# kernel: stereo\n";
  auto r = evk::testing::run_tool("stereo", "gi validate '" + (t / "empty.genome").string() + "' --cases 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["classes"].size(), 4u) << r.out;
  for (const auto& c : j["classes"]) {
    EXPECT_TRUE(c["blessed"].get<bool>()) << c.dump();
    EXPECT_EQ(c["run"], 3);
    EXPECT_EQ(c["max_error"], 0.0);
    for (const auto& k : c["cases"])
      std::printf("[measured] %-52s original %.4f ms, searched reference %.4f ms\n", k["case"].get<std::string>().c_str(),
                  k["original_ms"].get<double>(), k["evolved_ms"].get<double>());
  }
  std::ofstream(t / "uchar.genome") << "# kernel: stereo\nOUT_TYPE=uchar\n";
  r = evk::testing::run_tool("stereo", "gi validate '" + (t / "uchar.genome").string() + "' --class 1080p --cases 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["requires"], nlohmann::json::array({"max_disparity <= 253"}));
  ASSERT_EQ(j["classes"].size(), 1u);
  EXPECT_EQ(j["classes"][0]["run"], 2);      // 0..63 and 0..127
  EXPECT_EQ(j["classes"][0]["skipped"], 1);  // 0..255
  EXPECT_EQ(j["classes"][0]["max_error"], 0.0);
}
