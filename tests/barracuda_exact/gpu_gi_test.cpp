// GPU: both size classes of the GI problem through the tool. `gi validate` of the empty genome runs
// the original (human source) and the searched reference on hold-out cases of the E. coli-sized
// index and of the 1 G-row random BWT (a 500 MB occurrence table), every read's (k, l) compared
// with the CPU matcher on the same index.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "evk_testing.hpp"

TEST(BarracudaGpuGi, EverySizeClassValidatesThroughTheTool) {
  EVK_REQUIRE_GPU();
  if (!std::filesystem::exists(evk::testing::bin_dir() / "barracuda_exact")) GTEST_SKIP() << "the barracuda_exact tool is not in " << evk::testing::bin_dir();
  evk::testing::TempDir t;
  std::ofstream(t / "empty.genome") << "# kernel: barracuda_exact\n";
  const auto r = evk::testing::run_tool("barracuda_exact", "gi validate '" + (t / "empty.genome").string() + "' --cases 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["classes"].size(), 2u) << r.out;
  for (const auto& c : j["classes"]) {
    EXPECT_TRUE(c["blessed"].get<bool>()) << c.dump();
    EXPECT_EQ(c["run"], 2);
    EXPECT_EQ(c["max_error"], 0.0);  // (k, l) of every read identical
    for (const auto& k : c["cases"])
      std::printf("[measured] %s: original %.3f ms, searched reference %.3f ms\n", k["case"].get<std::string>().c_str(),
                  k["original_ms"].get<double>(), k["evolved_ms"].get<double>());
  }
}
