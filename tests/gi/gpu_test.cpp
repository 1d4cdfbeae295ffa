// GPU tests of the GI engine: worker isolation (slow, crashing and hanging candidates do not stop
// the evaluation) and short real runs on the toy problem, through the library and the CLI.
#include <fstream>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <nlohmann/json.hpp>

#include "evk/gi/evaluate.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/grammar.hpp"
#include "evk/gi/post.hpp"
#include "evk/gi/search.hpp"
#include "evk/device.hpp"
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
  w.set_case(1, false, "large");
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

// A kernel that is wrong on one launch only (the seventh: after the checked first launch, one
// warm-up and three timed ones) passes the search's checks and fails validation's extra checked
// launches (TimingSpec::race_checks).
TEST(GiWorker, RaceChecksCatchALaterWrongLaunch) {
  EVK_REQUIRE_GPU();
  auto p = testing::make_toy_problem();
  Worker w(self_worker());
  DeviceSummary d = w.device();
  w.set_case(1, false, "large");
  // each block counts itself; launch k (from 0) sees counts k * gridDim.x .. (k + 1) * gridDim.x - 1
  const std::string src = "__device__ unsigned evk_test_blocks;\n" +
      with_body_suffix(p->kernel_source(),
                       "{ __shared__ unsigned evk_k; if (threadIdx.x == 0) evk_k = atomicAdd(&evk_test_blocks, 1u) / gridDim.x;"
                       " __syncthreads(); if (evk_k == 6 && i == 0) out[0] = 7.0f; }");
  auto comp = compile_parallel({{src, p->compile_options(p->default_config()), true, ""}}, d.cc, true, 1, "", false);
  ASSERT_TRUE(comp[0].ok) << comp[0].log;
  Config cfg = p->default_config();
  TimingSpec t{1, 3, true};  // launches 0 (checked), 1 (warm-up), 2..4 (timed; 4 checked)
  RunResult two_checks = w.run(comp[0].cubin, "toy_filter", cfg, t, 20);
  ASSERT_TRUE(two_checks.ok()) << two_checks.message;
  EXPECT_EQ(two_checks.check.penalty, 0) << two_checks.check.summary;
  t.race_checks = 3;  // launches 5..7, each checked
  RunResult more = w.run(comp[0].cubin, "toy_filter", cfg, t, 20);
  ASSERT_TRUE(more.ok()) << more.message;
  EXPECT_GT(more.check.penalty, 0);
  EXPECT_EQ(more.check.summary.rfind("extra checked launch 2 of 3 differs from the first", 0), 0u) << more.check.summary;
  // the extra launches are not timed: as many timings as without them
  EXPECT_EQ(more.repeats, two_checks.repeats);
}

// The engine's prelude (apply.cpp): per-SM clock ticks are recorded and agree with the CUDA-event
// time; a runaway loop under a loop guard ends itself at the deadline instead of hanging.
TEST(GiWorker, TicksArePlausibleAndRunawayLoopsEndAtTheDeadline) {
  EVK_REQUIRE_GPU();
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  Worker w(self_worker());
  DeviceSummary d = w.device();
  ASSERT_GT(d.clock_khz, 0);
  w.set_case(1, false, "large");
  const std::string src = apply(g, empty_genome(g)).source;  // instrumented, guards
  // ~1 us per iteration, 65536 iterations per thread allowed by the guard: seconds without a deadline
  const std::string runaway = with_body_suffix(
      src, "{ unsigned evk_gi_guard_x = 0; for (int q = 0; EVK_GI_OK(evk_gi_guard_x) && q >= 0; q = q + 0) {"
           " long long t0 = clock64(); while (clock64() - t0 < 2000) {} } }");
  std::vector<CompileRequest> reqs;
  auto opts = p->compile_options(p->default_config());
  opts.push_back("-DEVK_GI_TICKS=1");     // ticks are opt-in (gi run --ticks)
  opts.push_back("-DEVK_GI_DEADLINE=1");  // as `gi run` compiles its candidates
  for (auto& s : {src, runaway}) reqs.push_back({s, opts, true, ""});
  auto comp = compile_parallel(reqs, d.cc, true, 2, "", false);
  for (auto& c : comp) ASSERT_TRUE(c.ok) << c.log;
  Config cfg = p->default_config();
  TimingSpec t{1, 5, true};
  RunResult good = w.run(comp[0].cubin, "toy_filter", cfg, t, 20);
  ASSERT_TRUE(good.ok()) << good.message;
  EXPECT_EQ(good.check.penalty, 0);
  EXPECT_GT(good.sms, d.sm_count / 2);
  EXPECT_LE(good.sms, d.sm_count);
  const double tick_ms = good.ticks / d.clock_khz;  // at the rated clock
  std::printf("toy: %.4f ms (CUDA events), %.0f ticks on %d SMs = %.4f ms at %d kHz\n", good.median_ms, good.ticks,
              good.sms, tick_ms, d.clock_khz);
  EXPECT_GT(tick_ms, 0.25 * good.median_ms);  // the SMs are busy most of the event interval
  EXPECT_LT(tick_ms, 2.0 * good.median_ms);   // and not longer than it (clock at most ~2x below rated)
  t.budget_ms = 5;
  auto t0 = std::chrono::steady_clock::now();
  RunResult cut = w.run(comp[1].cubin, "toy_filter", cfg, t, 20);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(cut.ok()) << cut.message << " (a hang here means the deadline did not stop the loop)";
  std::printf("runaway loop, 5 ms deadline: %.2f ms (events), %.0f ticks, %.2f s wall\n", cut.median_ms, cut.ticks, wall);
  EXPECT_GE(cut.median_ms, 4.0);
  EXPECT_LT(cut.median_ms, 100.0);
  EXPECT_GT(cut.ticks, good.ticks);
  EXPECT_EQ(w.restarts(), 0);
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
  // The best training genome may over-fit (a deleted bounds line that the training case never
  // needed): validate either blesses it (exit 0) or refuses it with a reason (exit 1, one line, not an
  // "internal error"); the JSON says which.
  r = evk::testing::run("/proc/" + std::to_string(::getpid()) + "/exe gi validate " + run + "/best.genome --cases 2 --json");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err << r.out;
  auto v = nlohmann::json::parse(r.out);
  EXPECT_EQ(v["blessed"].get<bool>(), r.exit_code == 0) << r.out;
  if (r.exit_code == 1) {
    EXPECT_NE(r.err.find("validate: refused: "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
  // the empty genome (the original with the engine's loop guards) must be blessed
  {
    std::ofstream f(dir / "empty.genome");
    f << "# the original\n";
  }
  r = evk::testing::run("/proc/" + std::to_string(::getpid()) + "/exe gi validate " + (dir / "empty.genome").string() +
                        " --cases 2 --json");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["blessed"].get<bool>()) << r.out;
  // a missing genome file is an input error
  r = evk::testing::run("/proc/" + std::to_string(::getpid()) + "/exe gi validate " + run + "/nope.genome");
  EXPECT_EQ(r.exit_code, 2);
}

// Two lanes on the first GPU (two workers): the mechanics of `gi run --devices` on any host. Both
// lanes run candidates, every correct candidate is timed on lane 0's scale, the run is valid.
TEST(GiLanes, TwoWorkersOnOneGpuShareTheGeneration) {
  EVK_REQUIRE_GPU();
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  std::vector<std::unique_ptr<Evaluator>> lanes;
  for (int k = 0; k < 2; ++k) lanes.push_back(make_gpu_evaluator(*p, std::make_unique<Worker>(self_worker())));
  auto ev = make_lane_evaluator(std::move(lanes));
  SearchOptions o;
  o.population = 24;
  o.generations = 3;
  o.seed = 4;
  o.classes = {"large", "small"};
  SearchState s = run_search(g, *ev, o);
  ASSERT_EQ(s.history.size(), 3u);
  std::set<int> used;
  for (const auto& ind : s.population)
    if (ind.correct()) used.insert(ind.lane);
  EXPECT_EQ(used, (std::set<int>{0, 1}));
  for (const auto& h : s.history) {
    ASSERT_EQ(h.lane_ref_ms.size(), 2u);
    EXPECT_GT(h.correct, 0);
    std::printf("generation %d (%s): reference %.4f ms on lane 0, %.4f ms on lane 1\n", h.generation,
                h.size_class.c_str(), h.lane_ref_ms[0], h.lane_ref_ms[1]);
  }
  EXPECT_EQ(s.history[1].size_class, "small");
}

// `gi run --devices all` (one worker per GPU: the lead runs this on a 2-GPU host too), per-class
// `gi validate`, and `gi evolve` installing into an overlay directory, through the toy tool.
TEST(GiCli, DevicesAllValidatePerClassAndEvolve) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir dir;
  const std::string self = "/proc/" + std::to_string(::getpid()) + "/exe";
  const std::string run = (dir / "run").string();
  auto r = evk::testing::run(self + " gi run --devices all --pop 16 --generations 2 --seed 2 --out " + run + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["devices"].size(), evk::gpu_environment().devices.size()) << r.out;
  EXPECT_EQ(j["classes"], nlohmann::json::array({"large", "small"}));
  auto cfg = nlohmann::json::parse(read_text(run + "/config.json"));
  EXPECT_EQ(cfg["devices"].size(), evk::gpu_environment().devices.size());
  const auto log = read_generation_log(run);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].size_class, "large");
  EXPECT_EQ(log[1].size_class, "small");
  EXPECT_EQ(log[0].lane_ref_ms.size(), evk::gpu_environment().devices.size());
  // resume on one GPU
  r = evk::testing::run(self + " gi run --resume " + run + " --generations 3 --device 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_generation_log(run).size(), 3u);
  // validate the empty genome per class: both classes run, zero error
  {
    std::ofstream f(dir / "empty.genome");
    f << "# the original\n";
  }
  r = evk::testing::run(self + " gi validate " + (dir / "empty.genome").string() + " --cases 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["classes"].size(), 2u);
  for (const auto& c : j["classes"]) {
    EXPECT_TRUE(c["blessed"].get<bool>()) << c.dump();
    EXPECT_EQ(c["run"], 2);
  }
  // evolve: the toy's planted inefficiencies make a variant that beats the pre-tuned original
  const std::string overlay = (dir / "overlay").string();
  r = evk::testing::run(self + " gi evolve --budget 3 --pop 40 --generations 4 --cases 3 --devices all --out " +
                        (dir / "evolve").string() + " --overlay " + overlay + " --id toy-test --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  j = nlohmann::json::parse(r.out);
  // one variant when it wins every class, else one per class (toy-test-<class>), each validated on its class
  const auto& installed = j["installed"];
  ASSERT_GE(installed.size(), 1u) << r.out;
  ASSERT_LE(installed.size(), 2u) << r.out;
  std::set<std::string> ids;
  for (const auto& f : installed) {
    const std::string file = f.get<std::string>();
    const std::string id = std::filesystem::path(file).stem().string();
    ids.insert(id);
    EXPECT_EQ(file, overlay + "/toy/" + id + ".genome");
    if (installed.size() == 1) EXPECT_EQ(id, "toy-test");
    else EXPECT_TRUE(id == "toy-test-large" || id == "toy-test-small") << id;
    const std::string text = read_text(file);
    for (const char* key : {"# kernel: toy", "# cc: ", "# device: ", "# driver: ", "# cuda: ", "# nvrtc: ", "# date: ",
                            "# seed: 1", "# population: 40", "# generations: ", "# search_wall_s: ", "# classes: ",
                            "# validated: ", "# source: gi evolve"})
      EXPECT_NE(text.find(key), std::string::npos) << key << "\n" << text;
    std::printf("%s\n", text.c_str());
    // the installed genome validates on its classes
    r = evk::testing::run(self + " gi validate " + file + " --cases 2 --json");
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  }
  r = evk::testing::run(self + " gi list --overlay " + overlay + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> listed;
  const nlohmann::json listing = nlohmann::json::parse(r.out);
  for (const auto& v : listing["variants"]) listed.insert(v["id"].get<std::string>());
  EXPECT_EQ(listed, ids) << r.out;
}

// gi evolve with a short budget through the toy tool: every stage reports against the budget, each
// class is validated on all its hold-out cases, and the pipeline ends near the budget. The slack (a
// step longer than those before it, starting the second worker, validation's estimate) is loose: twice
// the budget, where the unbounded tunes alone took minutes.
TEST(GiCli, EvolveKeepsToAShortBudget) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir dir;
  const std::string self = "/proc/" + std::to_string(::getpid()) + "/exe";
  const auto r = evk::testing::run(self + " gi evolve --budget 0.5 --cases 3 --out " + (dir / "evolve").string() +
                                   " --overlay " + (dir / "overlay").string() + " --json");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err << r.out;  // 1: nothing won
  const auto j = nlohmann::json::parse(r.out);
  std::printf("elapsed %.1f s of %.1f s, %.1f s reserved for validation\n", j["elapsed_s"].get<double>(),
              j["budget_s"].get<double>(), j["validation_reserve_s"].get<double>());
  for (const auto& s : j["stages"])
    std::printf("  %-24s %6.1f s of %6.1f s  %d of %d %s  %s\n", s["stage"].get<std::string>().c_str(),
                s["used_s"].get<double>(), s["budget_s"].get<double>(), s["done"].get<int>(), s["total"].get<int>(),
                s["unit"].get<std::string>().c_str(), s["note"].get<std::string>().c_str());
  EXPECT_EQ(j["budget_s"], 30.0);
  EXPECT_GT(j["validation_reserve_s"].get<double>(), 0);
  EXPECT_LT(j["elapsed_s"].get<double>(), 2 * 30) << r.out;
  ASSERT_EQ(j["classes"].size(), 2u) << r.out;
  for (const auto& c : j["classes"]) EXPECT_EQ(c["run"], 3) << c.dump();
  int validated = 0;
  for (const auto& s : j["stages"]) {
    const std::string name = s["stage"];
    if (name.rfind("validate", 0) == 0) ++validated;
    if (name.rfind("tune", 0) == 0 && s["budget_stopped"].get<bool>() && s["done"].get<int>() > 0) {
      EXPECT_NE(s["note"].get<std::string>().find("of " + std::to_string(s["total"].get<int>()) + " configurations"),
                std::string::npos)
          << s.dump();
    }
  }
  EXPECT_EQ(validated, 2);
}

}  // namespace
}  // namespace evk::gi
