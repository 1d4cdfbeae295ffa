// GI under faults, on the CPU: a search process is SIGKILLed at random points ten times and
// resumed each time; with a deterministic evaluator the final state must equal an uninterrupted
// run with the same seed, no kill may lose more than the generation in progress, and the run
// directory's logs must hold every generation exactly once. (The same on the GPU, through
// `gi run`, is bench/gi/kill_resume.sh.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/search.hpp"
#include "evk_testing.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

// Deterministic fake "GPU": the time falls with each deleted line and depends on the config; a
// candidate takes ~1 ms so that kills land in the middle of generations.
class SlowFakeEvaluator : public Evaluator {
 public:
  explicit SlowFakeEvaluator(const Problem& p) : p_(p) {}
  DeviceSummary device() override { return {"fake", 90, 1, 1}; }
  CaseInfo set_case(std::uint64_t seed, bool, const std::string& size_class) override {
    case_ = seed;
    return {"fake case " + std::to_string(seed), 1, size_class};
  }
  std::vector<std::string> options(const Config& c) const override { return p_.compile_options(c); }
  std::vector<Compiled> compile(const std::vector<Variant>& vs) override {
    std::vector<Compiled> out;
    for (const auto& v : vs) {
      Compiled c;
      std::string code = preprocess(v.source, defines_of(p_.compile_options(v.config), nullptr));
      c.ok = true;
      c.cubin.assign(code.begin(), code.end());
      c.code_hash = fnv1a64(code.data(), code.size());
      out.push_back(c);
    }
    return out;
  }
  RunResult run(const Compiled& c, const Config& cfg, const TimingSpec&, double) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const std::string s(c.cubin.begin(), c.cubin.end());
    RunResult r;
    r.status = RunResult::Status::ok;
    int deleted = 0;
    for (std::size_t p = s.find("\n;\n"); p != std::string::npos; p = s.find("\n;\n", p + 1)) ++deleted;
    r.median_ms = 1.0 - 0.01 * deleted + (cfg.at("BLOCK_W") == "256" ? -0.05 : 0.0) +
                  1e-6 * static_cast<double>(case_ % 7) + 1e-9 * static_cast<double>(c.code_hash % 1000);
    r.check.penalty = s.find("if (false)") != std::string::npos ? 100 : 0;
    return r;
  }

 private:
  const Problem& p_;
  std::uint64_t case_ = 0;
};

SearchOptions options(const std::string& dir) {
  SearchOptions o;
  o.population = 14;
  o.generations = 16;
  o.seed = 11;
  o.run_dir = dir;
  return o;
}

int checkpoint_generations(const std::filesystem::path& dir) {
  std::ifstream in(dir / "checkpoint.json");
  if (!in) return 0;
  std::stringstream ss;
  ss << in.rdbuf();
  std::smatch m;
  const std::string t = ss.str();
  return std::regex_search(t, m, std::regex("\"next_generation\": *([0-9]+)")) ? std::stoi(m[1]) : -1;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(GiKillResume, TenSigkillsThenResumeEqualsAnUninterruptedRun) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  evk::testing::TempDir full_dir, dir;
  SlowFakeEvaluator ev(*p);
  const SearchState full = run_search(g, ev, options(full_dir.path().string()));

  std::mt19937_64 rng(2024);
  int kills = 0, resumed_runs = 0;
  for (int attempt = 0; kills < 10 && attempt < 60; ++attempt) {
    const bool resume = std::filesystem::exists(dir / "checkpoint.json");
    int pfd[2];
    ASSERT_EQ(::pipe(pfd), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // the search process: reports each completed (checkpointed) generation
      ::close(pfd[0]);
      try {
        SlowFakeEvaluator cev(*p);
        SearchOptions o = options(dir.path().string());
        o.resume = resume;
        run_search(g, cev, o, [&](const GenerationStats& st, const SearchState&) {
          const int n = st.generation + 1;
          if (::write(pfd[1], &n, sizeof n) != sizeof n) ::_exit(3);
        });
      } catch (...) {
        ::_exit(2);
      }
      ::_exit(0);
    }
    ::close(pfd[1]);
    const int before = checkpoint_generations(dir.path());
    // the kill point: after 0 or 1 generations of this run (however slow the machine), then
    // 0..14 ms into the next one
    int reported = before, n = 0;
    for (int wait_for = static_cast<int>(rng() % 2); wait_for > 0; --wait_for)
      if (::read(pfd[0], &n, sizeof n) == sizeof n) reported = std::max(reported, n);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 15));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    while (::read(pfd[0], &n, sizeof n) == sizeof n) reported = std::max(reported, n);
    ::close(pfd[0]);
    const int after = checkpoint_generations(dir.path());
    if (WIFEXITED(status)) {  // finished before the signal: the run is complete
      ASSERT_EQ(WEXITSTATUS(status), 0) << "search process failed";
      EXPECT_EQ(after, 16);
      break;
    }
    ASSERT_TRUE(WIFSIGNALED(status));
    ++kills;
    resumed_runs += resume;
    // every generation the process had reported survives the kill: only the one in progress is lost
    EXPECT_GE(after, reported) << "kill " << kills << " lost a checkpointed generation";
    EXPECT_GE(after, before);
    EXPECT_LE(after, reported + 1);
    // whatever the moment of the kill, the checkpoint is a whole one
    if (after > 0) {
      EXPECT_NO_THROW(load_checkpoint(dir.path().string(), g)) << "kill " << kills;
    }
  }
  EXPECT_EQ(kills, 10) << "the runs kept finishing before the signal";
  EXPECT_GT(resumed_runs, 0);

  // resume to the end in this process and compare with the uninterrupted run
  SlowFakeEvaluator ev2(*p);
  SearchOptions o = options(dir.path().string());
  o.resume = std::filesystem::exists(dir / "checkpoint.json");
  const SearchState done = run_search(g, ev2, o);
  ASSERT_EQ(done.population.size(), full.population.size());
  for (std::size_t i = 0; i < full.population.size(); ++i) {
    EXPECT_EQ(done.population[i].text, full.population[i].text) << i;
    EXPECT_EQ(done.population[i].fitness, full.population[i].fitness) << i;
  }
  EXPECT_EQ(done.rng, full.rng);
  EXPECT_EQ(done.best_genome, full.best_genome);
  EXPECT_EQ(done.best_speedup, full.best_speedup);
  EXPECT_EQ(done.tabu_genotype, full.tabu_genotype);
  EXPECT_EQ(done.tabu_phenotype, full.tabu_phenotype);
  EXPECT_EQ(done.tabu_code, full.tabu_code);
  ASSERT_EQ(done.history.size(), full.history.size());
  for (std::size_t i = 0; i < full.history.size(); ++i) {
    EXPECT_EQ(done.history[i].generation, static_cast<int>(i));
    EXPECT_EQ(done.history[i].case_seed, full.history[i].case_seed);
    EXPECT_EQ(done.history[i].best_genome, full.history[i].best_genome);
  }
  // the logs hold every generation exactly once, as in the uninterrupted run
  EXPECT_EQ(slurp(dir / "candidates.jsonl"), slurp(full_dir / "candidates.jsonl"));
  EXPECT_EQ(slurp(dir / "failures.log"), slurp(full_dir / "failures.log"));
  EXPECT_EQ(read_generation_log(dir.path().string()).size(), full.history.size());
}

TEST(GiKillResume, DamagedCheckpointIsAnInputError) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  evk::testing::TempDir dir;
  auto expect_input_error = [&](const std::string& text) {
    std::ofstream(dir / "checkpoint.json") << text;
    EXPECT_THROW(load_checkpoint(dir.path().string(), g), evk::InputError) << text;
  };
  expect_input_error("{\"population\": 5}");                         // not an array of objects
  expect_input_error("{\"population\": [{\"genome\": 7}]}");          // a number as genome text
  expect_input_error("{\"tabu\": {\"genotype\": [\"zz\"]}}");          // not a hex hash
  expect_input_error("{\"tabu\": \"x\"}");                             // not an object
  expect_input_error("[1, 2]");                                        // not an object at all
  expect_input_error("{\"next_generation\": -3}");
  expect_input_error("{\"population\": [{\"genome\": \"<no_such_rule>\"}]}");
  expect_input_error("{\"history\": [{\"generation\": \"one\"}]}");
}

}  // namespace
}  // namespace evk::gi
