// The expert SSD kernel (kernels/original/stereo/ssd_expert.cu) as a GI seed, without a GPU: the
// grammar reader parses it, the empty genome reproduces its source, every configuration and edited
// variants compile with NVRTC, and `stereo gi --seed-kernel expert` (also after
// the subcommand) selects it. The GPU side (zero penalty for the original and config variants, a breaking edit
// caught) is in stereo_gpu_tests (StereoExpertGpuGi.*).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/ssd_expert.hpp"
#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/grammar.hpp"
#include "evk_testing.hpp"
#include "gi/gi_problem.hpp"

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

TEST(StereoExpertGi, GrammarAndEmptyGenome) {
  auto p = make_expert_gi_problem();
  EXPECT_EQ(p->name(), "stereo_expert");
  EXPECT_EQ(p->kernel_entry(), "ssd_expert");
  const std::string src = p->kernel_source();
  ASSERT_NE(src.find("//@gi begin"), std::string::npos);
  const evk::gi::Grammar g = evk::gi::make_grammar(*p);
  const auto counts = evk::gi::rule_counts(g);
  EXPECT_GT(counts.at("line"), 40);
  EXPECT_GT(counts.at("IF"), 3);
  EXPECT_EQ(counts.at("config"), 3);
  // the statements of both phases are evolvable: the prefix step of phase 1, the best update of phase 2
  for (const char* stmt : {"P[4 * q + 4] = __dp4a(w, w, P[4 * q]);", "best[k] = sum;", "__syncthreads();"}) {
    const int n = line_of(src, stmt);
    ASSERT_GT(n, 0) << stmt;
    EXPECT_GE(g.find("_K_" + std::to_string(n)), 0) << stmt;
  }
  const evk::gi::Variant v = evk::gi::apply_genome(*p, "");
  EXPECT_EQ(v.source, src);
  EXPECT_EQ(v.config, p->default_config());
  // the defaults are the tool's (SsdExpertConfig), window 11
  const SsdExpertConfig d;
  EXPECT_EQ(p->compile_options(v.config), d.compile_options(5));
  EXPECT_THROW(p->compile_options({{"EX_TY", "12"}}), evk::InputError);
  EXPECT_THROW(p->compile_options({{"EX_DC", "x"}}), evk::InputError);
  EXPECT_EQ(p->constraints(v.config), std::vector<std::string>{"window == 11"});
}

// The host's shared-memory formula against a hand count for the default configuration, radius 5:
// left 11 words-rows x 74, right 11 x (74 + 127), rounded to 3028 words; V 3 x 32 x 76 words.
TEST(StereoExpertGi, SharedMemoryLayout) {
  EXPECT_EQ(ssd_expert_smem(5), 4u * (3028 + 3 * 32 * 76));
  // radius 8: hw 80 -> V pitch 84 (= 4 mod 8), 12 word-rows
  EXPECT_EQ(ssd_expert_smem(8), 4u * ((12 * (160 + 127) + 3) / 4 * 4 + 3 * 32 * 84));
  const SsdExpertLaunch l = ssd_expert_launch(1920, 1080, 5);
  EXPECT_EQ(l.grid_x, 30u);
  EXPECT_EQ(l.grid_y, 34u);
  EXPECT_EQ(l.threads, 256u);
  EXPECT_THROW(ssd_expert_launch(64, 64, 9), evk::InputError);
}

#if defined(EVK_HAVE_CUDA)
TEST(StereoExpertGi, ConfigurationsAndEditsCompileWithNvrtc) {
  auto p = make_expert_gi_problem();
  const std::string src = p->kernel_source();
  const int best = line_of(src, "best[k] = sum;"), step = line_of(src, "P[4 * q + 2] = __dp4a(w, w & 0xffffu, P[4 * q]);");
  ASSERT_GT(best, 0);
  ASSERT_GT(step, 0);
  std::vector<std::string> genomes = {"", "EX_TY=8 EX_DC=1 EX_DS=64", "EX_TY=64 EX_DC=8 EX_DS=256", "EX_TY=40 EX_DC=4",
                                      "<_K_" + std::to_string(best) + ">",  // a statement deleted
                                      "<_K_" + std::to_string(step) + "><_K_" + std::to_string(best) + ">"};  // replaced
  // an unrolled loop whose variable no longer advances (the staging loop's increment): the loop
  // guard is its trip count; NVRTC crashed unrolling the engine's default 65536 (loop_limit 1024)
  const int win_loop = line_of(src, "for (t = 0; t < EX_WIN; t++) {"),
            stage_loop = line_of(src, "for (i = tid; i < EX_ROWS4 * rw; i += EX_THREADS) {");
  ASSERT_GT(win_loop, 0);
  ASSERT_GT(stage_loop, 0);
  genomes.push_back("EX_TY=8 EX_DC=1 <for3_K_" + std::to_string(win_loop) + "><for3_K_" + std::to_string(stage_loop) + ">");
  EXPECT_EQ(p->loop_limit(), 1024);
  for (const auto& gtext : genomes) {
    const evk::gi::Variant v = evk::gi::apply_genome(*p, gtext);
    evk::NvrtcRequest req;
    req.source = v.source;
    req.options = p->compile_options(v.config);
    for (const auto& o : v.options) req.options.push_back(o);
    req.cc = 90;
    const auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << gtext << ": " << r.log.substr(0, 2000);
  }
}
#endif

TEST(StereoExpertGi, SeedKernelOptionSelectsTheKernel) {
  const std::string bin = "'" + (evk::testing::bin_dir() / "stereo").string() + "'";
  for (const std::string& cmd : {bin + " gi --seed-kernel expert grammar --json", bin + " gi grammar --seed-kernel=expert --json",
                                bin + " gi --seed-kernel=expert grammar --json"}) {
    auto r = evk::testing::run(cmd);
    ASSERT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["entry"], "ssd_expert") << cmd;
  }
  auto s = evk::testing::run(bin + " gi --seed-kernel ssd grammar --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(nlohmann::json::parse(s.out)["entry"], "stereoKernel");
  auto sgm = evk::testing::run(bin + " gi --seed-kernel sgm grammar --json");
  ASSERT_EQ(sgm.exit_code, 0) << sgm.err;
  EXPECT_EQ(nlohmann::json::parse(sgm.out)["entry"], "sgm_aggregate");
  for (const std::string& cmd : {bin + " gi --seed-kernel bm grammar", bin + " gi grammar --seed-kernel",
                                bin + " gi grammar --seed-kernel=bm"}) {
    auto bad = evk::testing::run(cmd);
    EXPECT_EQ(bad.exit_code, 2) << cmd;
    EXPECT_NE(bad.err.find("expert"), std::string::npos) << cmd << ": " << bad.err;  // names the choices
    EXPECT_EQ(bad.out, "") << cmd;
  }
}
