// Stereo's second evolvable kernel (SGM path aggregation) as a gi::Problem, without a GPU: its
// grammar, the empty genome, NVRTC compiles of every configuration and of an edited variant, and
// the --seed-kernel option of `stereo gi`. The GPU side (zero penalty for the original, a
// breaking edit caught) is in stereo_gpu_tests (StereoSgmGpuGi.*).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/grammar.hpp"
#include "evk_testing.hpp"
#include "gi/sgm_gi_problem.hpp"

using namespace evk::stereo;

namespace {
// Source line (1-based) of the first line whose trimmed text is `text`; 0 when absent.
int line_of(const std::string& src, const std::string& text) {
  std::istringstream in(src);
  std::string l;
  for (int n = 1; std::getline(in, l); ++n) {
    const auto a = l.find_first_not_of(" \t");
    if (a != std::string::npos && l.substr(a) == text) return n;
  }
  return 0;
}
}  // namespace

TEST(StereoSgmGi, GrammarAndEmptyGenome) {
  auto p = make_sgm_gi_problem();
  EXPECT_EQ(p->kernel_entry(), "sgm_aggregate");
  const evk::gi::Grammar g = evk::gi::make_grammar(*p);
  const auto counts = evk::gi::rule_counts(g);
  EXPECT_GT(counts.at("line"), 50);
  EXPECT_GT(counts.at("IF"), 10);
  EXPECT_EQ(counts.at("config"), 3);  // SGM_K, SGM_MODE, SGM_PREFETCH
  // the update of the line minimum is an evolvable statement
  const int n = line_of(p->kernel_source(), "m = mi;");
  ASSERT_GT(n, 0);
  EXPECT_GE(g.find("_K_" + std::to_string(n)), 0);
  const evk::gi::Variant v = evk::gi::apply_genome(*p, "");
  EXPECT_EQ(v.source, p->kernel_source());
  EXPECT_EQ(v.config, p->default_config());
  EXPECT_THROW(p->compile_options({{"SGM_K", "12"}}), evk::InputError);
}

#if defined(EVK_HAVE_CUDA)
TEST(StereoSgmGi, EveryConfigurationAndAnEditCompileWithNvrtc) {
  auto p = make_sgm_gi_problem();
  const int n = line_of(p->kernel_source(), "m = mi;");
  ASSERT_GT(n, 0);
  std::vector<evk::gi::Variant> vs;
  for (const char* k : {"8", "16", "32"})
    for (const char* m : {"0", "1"}) vs.push_back(evk::gi::apply_genome(*p, std::string("SGM_K=") + k + " SGM_MODE=" + m));
  for (const char* k : {"8", "16", "32"}) vs.push_back(evk::gi::apply_genome(*p, std::string("SGM_K=") + k + " SGM_MODE=0 SGM_PREFETCH=1"));
  vs.push_back(evk::gi::apply_genome(*p, "<_K_" + std::to_string(n) + ">"));  // the statement deleted
  // the first prefetch deleted: still compiles (its codes are value-initialised, so NVRTC's #549 refusal
  // does not apply; the GPU test shows the variant is penalised)
  const int f = line_of(p->kernel_source(),
                        "census_load<SGM_K>(census_left, census_right, right_pitch, right_offset, W, x, y, dmin, cost_lane, pcl, pr);");
  ASSERT_GT(f, 0);
  vs.push_back(evk::gi::apply_genome(*p, "SGM_MODE=0 SGM_PREFETCH=1 <_K_" + std::to_string(f) + ">"));
  for (const auto& v : vs) {
    evk::NvrtcRequest req;
    req.source = v.source;
    req.options = p->compile_options(v.config);
    req.cc = 90;
    const auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << r.log.substr(0, 2000);
  }
}
#endif

TEST(StereoSgmGi, SeedKernelOptionSelectsTheKernel) {
  const std::string bin = "'" + (evk::testing::bin_dir() / "stereo").string() + "'";
  auto r = evk::testing::run(bin + " gi grammar --seed-kernel=sgm --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["entry"], "sgm_aggregate");
  // the environment no longer picks the seed (EVK_STEREO_GI_KERNEL is gone)
  auto d = evk::testing::run("EVK_STEREO_GI_KERNEL=sgm " + bin + " gi grammar --json");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(nlohmann::json::parse(d.out)["entry"], "stereoKernel");
  auto bad = evk::testing::run(bin + " gi --seed-kernel bm grammar");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--seed-kernel"), std::string::npos) << bad.err;
}
