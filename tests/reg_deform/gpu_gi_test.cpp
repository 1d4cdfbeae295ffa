// GPU: every size class of the GI problem through the tool. `gi validate` of the empty genome runs
// the original (human source) and the searched reference on hold-out cases of the paper's random
// case and of the dense 1 mm and 2 mm heads, every voxel of every active tile compared with the CPU
// field (tolerance 1e-3 mm: the paper's, float B-spline sums in another order differ by ~1e-4 mm).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "evk_testing.hpp"

TEST(RegGpuGi, EverySizeClassValidatesThroughTheTool) {
  EVK_REQUIRE_GPU();
  if (!std::filesystem::exists(evk::testing::bin_dir() / "reg_deform")) GTEST_SKIP() << "the reg_deform tool is not in " << evk::testing::bin_dir();
  evk::testing::TempDir t;
  std::ofstream(t / "empty.genome") << "# kernel: reg_deform\n";
  const auto r = evk::testing::run_tool("reg_deform", "gi validate '" + (t / "empty.genome").string() + "' --cases 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["classes"].size(), 3u) << r.out;
  for (const auto& c : j["classes"]) {
    EXPECT_TRUE(c["blessed"].get<bool>()) << c.dump();
    EXPECT_EQ(c["run"], 2);
    EXPECT_LE(c["max_error"].get<double>(), 1e-3);
    for (const auto& k : c["cases"]) {
      const std::string d = k["case"].get<std::string>();
      std::printf("[measured] %s: original %.4f ms, searched reference %.4f ms\n", d.c_str(),
                  k["original_ms"].get<double>(), k["evolved_ms"].get<double>());
      const std::string size = c["class"] == "head1mm" ? "197x233x189" : c["class"] == "head2mm" ? "91x109x91" : "217^3";
      EXPECT_NE(d.find(size), std::string::npos) << d;
    }
  }
}
