// A fake clock and a fake GPU that spends time on it (the engine's CPU tests of budgets): FakeEvaluator's
// answers, and every call advances the clock by a known cost: a new case case_s, a compile call
// compile_s per variant, a run run_s per launch and per check against the reference (the checked
// launch, warm-up, timed and race-check launches; the first, last and race checks) plus
// run_overhead_s. Nothing sleeps: budget decisions on this clock are the same on every machine.
#pragma once
#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "fake_evaluator.hpp"

namespace evk::gi::testing {

class FakeClock {
 public:
  double now() const { return static_cast<double>(us_.load()) * 1e-6; }
  void advance(double s) { us_ += static_cast<long long>(s * 1e6 + 0.5); }
  SecondsClock clock() {
    return [this] { return now(); };
  }

 private:
  std::atomic<long long> us_{1000000000};  // any origin
};

class TimedFake : public FakeEvaluator {
 public:
  TimedFake(const Problem& p, FakeClock& clock) : FakeEvaluator(p), clock_(clock) {}
  CaseInfo set_case(std::uint64_t seed, bool holdout, const std::string& size_class) override {
    const std::string key = size_class + "/" + std::to_string(seed) + (holdout ? "/h" : "/t");
    if (made_.insert(key).second) clock_.advance(case_s);  // the worker keeps a case it made
    return FakeEvaluator::set_case(seed, holdout, size_class);
  }
  std::vector<Compiled> compile(const std::vector<Variant>& vs) override {
    clock_.advance(compile_s * static_cast<double>(vs.size()));
    return FakeEvaluator::compile(vs);
  }
  RunResult run(const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout) override {
    RunResult r = FakeEvaluator::run(c, cfg, t, timeout);
    r.repeats = t.repeats;
    const double launches = 1 + t.warmup + t.repeats + t.race_checks, checks = 2 + t.race_checks;
    const double s = run_overhead_s + run_s * (launches + checks);
    clock_.advance(s);
    spent_in_runs += s;
    ++timed_runs;
    if (t.race_checks > 0) ++validation_runs;
    return r;
  }
  double case_s = 0.5, compile_s = 0.02, run_s = 0.01, run_overhead_s = 0.005;
  double spent_in_runs = 0;
  int timed_runs = 0, validation_runs = 0;

 private:
  FakeClock& clock_;
  std::set<std::string> made_;
};

}  // namespace evk::gi::testing
