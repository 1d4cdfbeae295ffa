// The kernel's 15 fixed parameters: defaults agree with the kernel source, legality rules, compile
// options, the GI problem's contract, the paper's penalties; NVRTC accepts configurations (PTX only).
#include <gtest/gtest.h>

#include <regex>

#include "gi/gi_problem.hpp"
#include "core/kernel_config.hpp"
#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk_kernels/barracuda_exact_kernel.hpp"

namespace bc = evk::barracuda_exact;

TEST(BarracudaConfig, FifteenParamsWithSourceDefaults) {
  const auto params = bc::kernel_params();
  ASSERT_EQ(params.size(), 15u);
  const std::string src(barracuda_exact_kernel().text());
  for (const auto& p : params) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(src, m, std::regex("#define " + p.name + " (\\S+)"))) << p.name;
    std::string v = p.default_value == "true" ? "1" : p.default_value == "false" || p.default_value == "off" ? "0" : p.default_value;
    EXPECT_EQ(m[1].str(), v) << p.name;
  }
}

TEST(BarracudaConfig, IllegalCombinationsRejected) {
  auto with = [](std::initializer_list<std::pair<const std::string, std::string>> kv) {
    evk::gi::Config c = bc::default_kernel_config();
    for (const auto& [k, v] : kv) c[k] = v;
    return c;
  };
  EXPECT_NO_THROW(bc::validate_kernel_config(bc::default_kernel_config()));
  EXPECT_THROW(bc::kernel_compile_options(with({{"sequence_shift81", "false"}})), evk::InputError);
  EXPECT_THROW(bc::kernel_compile_options(with({{"sequence_stride", "false"}})), evk::InputError);
  EXPECT_THROW(bc::kernel_compile_options(with({{"occ_par", "true"}})), evk::InputError);
  EXPECT_NO_THROW(bc::kernel_compile_options(with({{"occ_par", "true"}, {"cache_threads", "4"}})));
  EXPECT_THROW(bc::kernel_compile_options(with({{"cache_threads", "2"}, {"cache_global_bwt", "false"}})), evk::InputError);
  EXPECT_THROW(bc::kernel_compile_options(with({{"scache_global_bwt", "true"}, {"cache_global_bwt", "false"}})), evk::InputError);
  EXPECT_THROW(bc::kernel_compile_options(with({{"cache_threads", "32"}, {"kl_par", "true"}})), evk::InputError);
  EXPECT_THROW(bc::kernel_compile_options(with({{"cache_threads", "8"}, {"BLOCK_W", "4"}})), evk::InputError);
  EXPECT_THROW(bc::kernel_compile_options(with({{"BLOCK_W", "48"}})), evk::InputError);
  EXPECT_THROW(bc::kernel_compile_options(with({{"no_such", "1"}})), evk::InputError);
  const auto o = bc::kernel_compile_options(with({{"cache_threads", "4"}, {"BLOCK_W", "128"}}));
  EXPECT_NE(std::find(o.begin(), o.end(), "-Dcache_threads=4"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "-DBLOCK_W=128"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "-Dmycache4=1"), o.end());
  const auto g = bc::kernel_geometry(with({{"cache_threads", "4"}, {"kl_par", "true"}}));
  EXPECT_EQ(g.threads_per_seq, 8);
}

TEST(BarracudaConfig, GiProblemContract) {
  auto p = bc::make_gi_problem();
  EXPECT_EQ(p->name(), "barracuda_exact");
  EXPECT_EQ(p->kernel_entry(), "cuda_find_exact_matches");
  EXPECT_NE(p->kernel_source().find("//@gi begin"), std::string::npos);
  EXPECT_NE(p->kernel_source().find("//@gi end"), std::string::npos);
  EXPECT_NE(p->kernel_source().find("extern \"C\" __global__ void cuda_find_exact_matches"), std::string::npos);
  EXPECT_EQ(p->config_params().size(), 15u);
  EXPECT_EQ(p->default_population(), 1000);
  EXPECT_EQ(p->default_generations(), 50);
  auto c = p->default_config();
  c["occ_par"] = "true";
  EXPECT_THROW(p->compile_options(c), evk::InputError);
}

TEST(BarracudaConfig, PaperPenalties) {
  using bc::KL;
  // k = 0 (N in the query)
  EXPECT_EQ(bc::kl_penalty({0, 0}, {0, 0}), 0);
  EXPECT_EQ(bc::kl_penalty({0, 0}, {5, 3}), 100);
  EXPECT_EQ(bc::kl_penalty({0, 0}, {5, 7}), 200);
  // no match
  EXPECT_EQ(bc::kl_penalty({9, 3}, {7, 2}), 0);
  EXPECT_EQ(bc::kl_penalty({9, 3}, {0, 0}), 0);
  EXPECT_EQ(bc::kl_penalty({9, 3}, {4, 4}), 100);
  // unique
  EXPECT_EQ(bc::kl_penalty({50, 50}, {51, 50}), 100);
  EXPECT_EQ(bc::kl_penalty({50, 50}, {0, 0}), 100);
  EXPECT_EQ(bc::kl_penalty({50, 50}, {50, 53}), 3);
  EXPECT_EQ(bc::kl_penalty({50, 50}, {50, 500}), 100);
  EXPECT_EQ(bc::kl_penalty({50, 50}, {52, 52}), 4);
  EXPECT_EQ(bc::kl_penalty({50, 50}, {90, 90}), 20);
  // repeat
  EXPECT_EQ(bc::kl_penalty({50, 59}, {60, 50}), 100);
  EXPECT_EQ(bc::kl_penalty({50, 59}, {50, 61}), 2);
  EXPECT_EQ(bc::kl_penalty({50, 59}, {50, 200}), 50);
  EXPECT_EQ(bc::kl_penalty({50, 59}, {55, 55}), 5 + 4);
  EXPECT_EQ(bc::kl_penalty({50, 59}, {51, 60}), 2);  // same count, shifted (our extension)
  EXPECT_EQ(bc::kl_penalty({50, 59}, {50, 59}), 0);
}

TEST(BarracudaConfig, NvrtcAcceptsDefaultAndFeatureRichConfigs) {
  if (evk::nvrtc_version().empty()) GTEST_SKIP() << "built without CUDA";
  evk::gi::Config rich = bc::default_kernel_config();
  rich["cache_threads"] = "4";
  rich["kl_par"] = "true";
  rich["occ_par"] = "true";
  rich["scache_global_bwt"] = "true";
  rich["direct_sequence"] = "false";
  rich["direct_index"] = "false";
  rich["sequence_global"] = "false";
  rich["many_blocks"] = "true";
  rich["mycache4"] = "false";
  rich["mycache2"] = "true";
  for (const auto& cfg : {bc::default_kernel_config(), rich}) {
    evk::NvrtcRequest req;
    req.source = std::string(barracuda_exact_kernel().text());
    req.options = bc::kernel_compile_options(cfg);
    req.want_cubin = false;
    req.want_ptx = true;
    const auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << r.log;
    EXPECT_NE(std::string(r.ptx.begin(), r.ptx.end()).find("cuda_find_exact_matches"), std::string::npos);
  }
}
