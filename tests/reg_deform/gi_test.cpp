// The GI problem's host side: parameters, compile options, the paper's penalties, and that every
// configuration of the original kernel compiles with NVRTC (PTX only; no GPU needed).
#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "gi_problem.hpp"
#include "kernel_config.hpp"

namespace rd = evk::reg_deform;

TEST(RegGi, ProblemDescribesThePaperKernel) {
  auto p = rd::make_gi_problem();
  EXPECT_EQ(p->name(), "reg_deform");
  EXPECT_EQ(p->kernel_entry(), "reg_deform_tile5");
  const std::string src = p->kernel_source();
  EXPECT_NE(src.find("//@gi begin"), std::string::npos);
  EXPECT_NE(src.find("//@gi end"), std::string::npos);
  EXPECT_NE(src.find("if ((threadIdx.x & 31) < 16) {"), std::string::npos);
  EXPECT_NE(src.find("extern \"C\" __global__ void reg_deform_tile5"), std::string::npos);
  const auto params = p->config_params();
  ASSERT_EQ(params.size(), 7u);
  EXPECT_EQ(params.back().name, "BLOCK_SIZE");
  EXPECT_EQ(params.back().values.front(), "32");
  EXPECT_EQ(params.back().values.back(), "1024");
  auto cfg = p->default_config();
  EXPECT_EQ(cfg["BLOCK_SIZE"], "192");
  EXPECT_TRUE(p->compile_options(cfg).empty());  // the human-written defaults
  cfg["constantBasis"] = "true";
  cfg["c_controlPointVoxelSpacing"] = "true";
  const auto opts = p->compile_options(cfg);
  EXPECT_EQ(opts, (std::vector<std::string>{"-Dc_controlPointVoxelSpacing=5", "-DconstantBasis=1"}));
  cfg["BLOCK_SIZE"] = "100";
  EXPECT_THROW(p->compile_options(cfg), evk::InputError);
  EXPECT_EQ(p->default_population(), 300);
  EXPECT_EQ(p->default_generations(), 50);
}

TEST(RegGi, PaperPenalties) {
  EXPECT_EQ(rd::penalize(1e-5, 0, 0, 0, 1000).penalty, 0.0);
  const double K = rd::kPenaltyScale;
  EXPECT_NEAR(rd::penalize(0.002, 0, 0, 10, 1000).penalty, K * 0.102, 1);
  EXPECT_NEAR(rd::penalize(0.05, 100, 0, 10, 1000).penalty, K * 0.15 + K * 0.1, 1);
  // capped worst-error term, plus the wrong fraction
  EXPECT_NEAR(rd::penalize(5.0, 0, 250, 250, 1000).penalty, K + K * 0.25, 1);
  EXPECT_NEAR(rd::penalize(5.0, 0, 250, 250, 1000).bad_fraction, 0.25, 1e-12);
}

TEST(RegGi, GenomeVariantsAreNotYetSupported) {
  evk::Variant v;
  v.kernel = "reg_deform";
  v.id = "sm90-x";
  v.genome = "<_K_1>";
  EXPECT_THROW(rd::config_for_variant(v), evk::InputError);
  v.id = "original";
  v.genome.clear();
  EXPECT_TRUE(rd::config_for_variant(v).macros_default());
}

TEST(RegGi, EveryMacroCompilesWithNvrtc) {
  if (evk::nvrtc_version().empty()) GTEST_SKIP() << "built without CUDA";
  auto p = rd::make_gi_problem();
  // default, all on, and each switch alone (PTX only: quick syntax/type check)
  std::vector<rd::KernelConfig> cfgs = {rd::KernelConfig{}};
  for (const auto& c : rd::KernelConfig::all_combinations())
    if (c.defines().size() == 1 || c.defines().size() == 6) cfgs.push_back(c);
  ASSERT_EQ(cfgs.size(), 8u);
  for (const auto& c : cfgs) {
    evk::NvrtcRequest req;
    req.source = p->kernel_source();
    req.options = c.defines();
    req.want_cubin = false;
    req.want_ptx = true;
    const auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << c.describe() << "\n" << r.log;
  }
}
