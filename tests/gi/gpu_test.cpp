// GPU tests of the GI engine: worker isolation (slow, crashing and hanging candidates do not stop
// the evaluation) and short real runs on the toy problem, through the library and the CLI.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "evk/gi/evaluate.hpp"
#include "evk/gi/post.hpp"
#include "evk/gi/search.hpp"
#include "evk_testing.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

Worker::Options self_worker() {
  Worker::Options o;
  o.argv = {"/proc/self/exe", "gi", "worker", "--device", "0"};
  return o;
}

std::string with_body_prefix(const std::string& src, const std::string& stmt) {
  std::string s = src;
  auto p = s.find("//@gi begin\n");
  s.insert(p + 12, stmt + "\n");
  return s;
}
std::string with_body_suffix(const std::string& src, const std::string& stmt) {
  std::string s = src;
  s.insert(s.find("//@gi end\n"), stmt + "\n");
  return s;
}

TEST(GiWorker, SlowCrashingAndHangingCandidatesAreIsolated) {
  EVK_REQUIRE_GPU();
  auto p = testing::make_toy_problem();
  Worker w(self_worker());
  DeviceSummary d = w.device();
  ASSERT_GT(d.cc, 0);
  w.set_case(1, false);
  std::string src = p->kernel_source();
  std::vector<std::string> sources = {
      src,
      with_body_prefix(src, "{ long long t0 = clock64(); while (clock64() - t0 < 20000000) {} }"),  // ~10 ms: slow
      with_body_prefix(src, "((float*)0x10)[threadIdx.x] = 1.0f;"),                                  // illegal address
      with_body_prefix(src, "while (((volatile const float*)in)[0] < 1e30f) {}"),                    // hangs
      src,                                                                                           // fine again
      with_body_suffix(src, "if (threadIdx.x == 0) out[blockIdx.x * BLOCK_W] = 7.0f;"),              // wrong answer
  };
  std::vector<CompileRequest> reqs;
  for (auto& s : sources) reqs.push_back({s, p->compile_options(p->default_config()), true, ""});
  auto comp = compile_parallel(reqs, d.cc, true, 4, "", false);
  for (auto& c : comp) ASSERT_TRUE(c.ok) << c.log;
  Config cfg = p->default_config();
  TimingSpec t{1, 3, true};
  RunResult good = w.run(comp[0].cubin, "toy_filter", cfg, t, 20);
  ASSERT_TRUE(good.ok()) << good.message;
  EXPECT_EQ(good.check.penalty, 0) << good.check.summary;
  RunResult slow = w.run(comp[1].cubin, "toy_filter", cfg, t, 20);
  ASSERT_TRUE(slow.ok()) << slow.message;
  EXPECT_GT(slow.median_ms, good.median_ms);
  RunResult crash = w.run(comp[2].cubin, "toy_filter", cfg, t, 20);
  EXPECT_EQ(crash.status, RunResult::Status::crash) << crash.message;
  RunResult hang = w.run(comp[3].cubin, "toy_filter", cfg, t, 3);
  EXPECT_EQ(hang.status, RunResult::Status::hang) << hang.message;
  RunResult again = w.run(comp[4].cubin, "toy_filter", cfg, t, 20);
  ASSERT_TRUE(again.ok()) << again.message;
  EXPECT_EQ(again.check.penalty, 0);
  EXPECT_GE(w.restarts(), 2);
  RunResult wrong = w.run(comp[5].cubin, "toy_filter", cfg, t, 20);
  ASSERT_TRUE(wrong.ok()) << wrong.message;
  EXPECT_GT(wrong.check.penalty, 0) << wrong.check.summary;
}

TEST(GiRun, ShortRunOnToyProblemFindsAValidVariant) {
  EVK_REQUIRE_GPU();
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  Worker w(self_worker());
  auto ev = make_gpu_evaluator(*p, w);
  evk::testing::TempDir dir;
  SearchOptions o;
  o.population = 24;
  o.generations = 3;
  o.seed = 3;
  o.run_dir = dir.path().string();
  SearchState s = run_search(g, *ev, o);
  ASSERT_EQ(s.history.size(), 3u);
  for (const auto& h : s.history) {
    EXPECT_GT(h.ref_ms, 0);
    EXPECT_GT(h.correct, 0);
  }
  ASSERT_FALSE(s.best_genome.empty());
  RecordProperty("best_speedup_training", std::to_string(s.best_speedup));
  Genome best = parse_genome(g, s.best_genome);
  ValidateOptions vo;
  vo.cases = 2;
  auto r = validate(g, *ev, best, nullptr, vo);
  EXPECT_TRUE(r.blessed) << r.reason;
  EXPECT_EQ(r.cases.size(), 2u);
  RecordProperty("holdout_speedup_median", std::to_string(r.speedup_median));
}

TEST(GiCli, RunValidateAndReportThroughTheCommandLine) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir dir;
  std::string run = (dir / "run").string();
  auto r = evk::testing::run("/proc/" + std::to_string(::getpid()) + "/exe gi run --pop 12 --generations 2 --seed 9 --out " +
                             run + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["generations"], 2);
  for (const char* f : {"config.json", "checkpoint.json", "generations.csv", "generations.jsonl", "best.genome",
                        "report.md", "fitness.svg"})
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(run) / f)) << f;
  // resume for one more generation
  r = evk::testing::run("/proc/" + std::to_string(::getpid()) + "/exe gi run --resume " + run + " --generations 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_generation_log(run).size(), 3u);
  r = evk::testing::run("/proc/" + std::to_string(::getpid()) + "/exe gi validate " + run + "/best.genome --cases 2 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  // a missing genome file is an input error
  r = evk::testing::run("/proc/" + std::to_string(::getpid()) + "/exe gi validate " + run + "/nope.genome");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace evk::gi
