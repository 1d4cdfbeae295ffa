// GI under faults, on the GPU: a search on the toy problem whose first generation is seeded with
// candidates that crash (illegal address), trap, hang, write far out of bounds and leak device
// memory (device-side malloc without free), or skip their work when the previous launch's answer
// is still in the output. The run must complete, every planted fault must be classified (crash /
// hang; the leak and the stale one run, the stale one timed doing its work), and after the run no
// worker process may be left and the GPU's memory must be back at its baseline.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "evk/gi/evaluate.hpp"
#include "evk/gi/search.hpp"
#include "evk_testing.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

const std::map<std::string, std::string> kFaults = {
    {"crash", "((float*)0x10)[threadIdx.x] = 1.0f;"},
    {"trap", "if (threadIdx.x == 0 && blockIdx.x == 0) __trap();"},
    {"hang", "while (((volatile const float*)in)[0] < 1e30f) {}"},
    {"oob", "out[(size_t)n * 4096 + threadIdx.x] = 1.0f;"},
    {"leak", "if (threadIdx.x == 0) { float* q = (float*)malloc(1 << 20); if (q) q[0] = 1.0f; }"},
    // right answers, but no work when the previous launch's answer is still in `out` (the poison
    // is NaN): must be timed doing the work, since every timed launch starts from a poisoned output
    {"stale", "if (blockIdx.x * BLOCK_W + threadIdx.x < n && out[blockIdx.x * BLOCK_W + threadIdx.x] == "
              "out[blockIdx.x * BLOCK_W + threadIdx.x]) return;"},
};
const std::map<std::string, std::string> kExpected = {
    {"crash", "crash"}, {"trap", "crash"}, {"hang", "hang"}, {"oob", "crash"}, {"leak", "ok"}, {"stale", "ok"}};

// The real GPU evaluator, with the planted faults put into candidates 1, 3, 5, 7 and 9 of the first
// compile stream (the statement goes first in the evolvable region of the applied source).
class PlantingEvaluator : public Evaluator {
 public:
  explicit PlantingEvaluator(Evaluator& inner) : in_(inner) {}
  DeviceSummary device() override { return in_.device(); }
  CaseInfo set_case(std::uint64_t seed, bool holdout, const std::string& size_class) override {
    return in_.set_case(seed, holdout, size_class);
  }
  std::vector<std::string> options(const Config& c) const override { return in_.options(c); }
  // the reference is compiled alone through compile(); the candidates are streamed
  std::vector<Compiled> compile(const std::vector<Variant>& vs) override { return in_.compile(vs); }
  void compile_stream(const std::vector<Variant>& vs, const std::function<void(std::size_t, Compiled&&)>& done) override {
    const std::vector<Variant> planted = plant(vs);
    in_.compile_stream(planted, [&](std::size_t i, Compiled&& c) {
      {
        std::lock_guard<std::mutex> l(mu_);
        if (auto it = pending_.find(planted[i].source); it != pending_.end()) by_code_[c.code_hash] = it->second;
      }
      done(i, std::move(c));
    });
  }
  RunResult run(const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout_s) override {
    RunResult r = in_.run(c, cfg, t, timeout_s);
    std::lock_guard<std::mutex> l(mu_);
    if (auto it = by_code_.find(c.code_hash); it != by_code_.end()) {
      seen_[it->second] = status_name(r.status);
      ms_[it->second] = r.median_ms;
      penalty_[it->second] = r.check.penalty;
    }
    return r;
  }
  std::map<std::string, double> ms() const { return ms_; }
  std::map<std::string, double> penalty() const { return penalty_; }
  int restarts() const override { return in_.restarts(); }
  std::map<std::string, std::string> seen() const { return seen_; }

 private:
  std::vector<Variant> plant(std::vector<Variant> vs) {
    if (planted_ || vs.size() < 2 * kFaults.size()) return vs;
    planted_ = true;
    std::size_t k = 1;
    for (const auto& [name, stmt] : kFaults) {
      if (k >= vs.size()) break;
      std::string& s = vs[k].source;
      const auto at = s.find("//@gi begin");
      if (at != std::string::npos) {
        s.insert(s.find('\n', at) + 1, stmt + "\n");
        std::lock_guard<std::mutex> l(mu_);
        pending_[s] = name;
      }
      k += 2;
    }
    return vs;
  }
  Evaluator& in_;
  bool planted_ = false;
  std::mutex mu_;
  std::map<std::string, std::string> pending_;
  std::map<std::uint64_t, std::string> by_code_;
  std::map<std::string, std::string> seen_;
  std::map<std::string, double> ms_, penalty_;
};

int children_of_this_process() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == ::getpid()) ++n;
  }
  return n;
}

long gpu_memory_used_mib() {
  auto r = evk::testing::run("nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0");
  if (r.exit_code != 0) return -1;
  return std::atol(r.out.c_str());
}

TEST(GiFaults, PlantedFaultsAreClassifiedAndWorkersAndMemoryReturn) {
  EVK_REQUIRE_GPU();
  const long base_mib = gpu_memory_used_mib();
  if (base_mib < 0) GTEST_SKIP() << "nvidia-smi not available: GPU memory cannot be checked";
  const int base_children = children_of_this_process();
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  evk::testing::TempDir dir;
  std::map<std::string, std::string> seen;
  std::map<std::string, double> fault_ms, fault_penalty;
  SearchState s;
  int restarts = 0;
  {
    Worker::Options wo;
    wo.argv = {"/proc/self/exe", "gi", "worker", "--device", "0"};
    wo.stderr_path = (dir / "worker.log").string();
    Worker w(wo);
    auto real = make_gpu_evaluator(*p, w);
    PlantingEvaluator ev(*real);
    SearchOptions o;
    o.population = 16;
    o.generations = 2;
    o.seed = 4;
    o.run_dir = dir.path().string();
    s = run_search(g, ev, o);
    seen = ev.seen();
    fault_ms = ev.ms();
    fault_penalty = ev.penalty();
    restarts = w.restarts();
    EXPECT_GE(children_of_this_process(), base_children + 1) << "the workers should be running here";
  }
  ASSERT_EQ(s.history.size(), 2u) << "the run did not complete";
  EXPECT_GT(s.history[0].correct, 0);
  for (const auto& [name, want] : kExpected) {
    ASSERT_TRUE(seen.count(name)) << name << " was not run";
    EXPECT_EQ(seen[name], want) << name;
  }
  // the stale candidate is right and is timed doing the work: not far below the reference (without
  // a poison before each timed launch it returned at once: a few microseconds)
  EXPECT_EQ(fault_penalty["stale"], 0.0);
  EXPECT_GE(fault_ms["stale"], 0.5 * s.history[0].ref_ms)
      << "stale " << fault_ms["stale"] << " ms, reference " << s.history[0].ref_ms << " ms";
  EXPECT_GE(s.history[0].crashes, 3);
  EXPECT_GE(s.history[0].hangs, 1);
  EXPECT_GE(restarts, 4) << "each crash and hang costs a worker";
  for (const auto& ind : s.population)
    EXPECT_TRUE(ind.status == "ok" || ind.status == "compile_error" || ind.status == "illegal_config" ||
                ind.status == "launch_error" || ind.status == "crash" || ind.status == "hang")
        << ind.status;
  // workers gone, memory back (killed contexts are torn down by the driver: give it time)
  EXPECT_EQ(children_of_this_process(), base_children);
  long used = gpu_memory_used_mib();
  for (int i = 0; i < 60 && used > base_mib + 64; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    used = gpu_memory_used_mib();
  }
  EXPECT_LE(used, base_mib + 64) << "GPU memory: " << base_mib << " MiB before, " << used << " MiB after";
  RecordProperty("gpu_mib_before", std::to_string(base_mib));
  RecordProperty("gpu_mib_after", std::to_string(used));
  RecordProperty("worker_restarts", std::to_string(restarts));
  std::printf("planted faults:");
  for (const auto& [k, v] : seen) std::printf(" %s->%s", k.c_str(), v.c_str());
  std::printf("; restarts %d; GPU memory %ld -> %ld MiB\n", restarts, base_mib, used);
}

}  // namespace
}  // namespace evk::gi
