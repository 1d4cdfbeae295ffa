// gi evolve's budget (docs/GI.md "gi evolve"), internal to evk_gi: what evaluations have cost so far,
// measured on the pipeline's clock through a wrapper around its evaluators, and the estimates from
// it that split the budget between minimize, tune and validation.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "evk/gi/budget.hpp"
#include "evk/gi/evaluate.hpp"

namespace evk::gi::detail {

// Units of work of one run with timing t and `repeats` timed launches: its launches (the checked
// one, the warm-up, the timed ones and the race checks) plus its checks against the CPU reference
// (the first, the last timed launch's, each race check's). A run's fixed costs are spread over its
// units, which overestimates runs of more units than those measured (validation's): on the safe side.
double run_units(const TimingSpec& t, int repeats);

// Costs measured per size class: making a new case, seconds per unit of a run (less its energy
// burst), the energy bursts, compilations.
class CostMeter {
 public:
  explicit CostMeter(SecondsClock clock) : clock_(std::move(clock)) {}
  const SecondsClock& clock() const { return clock_; }
  // A set_case of `key` (class, seed, hold-out) that took s seconds; only a key's first counts
  // (later ones find the case kept by the worker).
  void case_set(const std::string& cls, const std::string& key, double s);
  void ran(const std::string& cls, const TimingSpec& t, const RunResult& r, double s);
  void compiled(double s);

  // Estimates (0 where nothing was measured): a new case of class cls; one run with timing t on a
  // case of class cls (its energy burst included when t.energy: the mean burst measured, else the
  // window); one compile call.
  double case_s(const std::string& cls) const;
  double run_s(const std::string& cls, const TimingSpec& t) const;
  double compile_s() const;

 private:
  struct Sums {
    double case_s = 0, cases = 0, run_s = 0, units = 0;
  };
  Sums of(const std::string& cls) const;  // the class's, else every class's together
  SecondsClock clock_;
  mutable std::mutex m_;
  std::map<std::string, Sums> by_class_;
  std::set<std::string> keys_;
  double burst_s_ = 0, bursts_ = 0, compile_s_ = 0, compiles_ = 0;
};

// An evaluator that passes every call through to `inner` and times set_case, run, run_on and
// compile on the meter's clock into the meter (runs count for the class of the last set_case).
class MeteredEvaluator : public Evaluator {
 public:
  MeteredEvaluator(Evaluator& inner, CostMeter& meter) : in_(inner), m_(meter) {}
  DeviceSummary device() override { return in_.device(); }
  CaseInfo set_case(std::uint64_t seed, bool holdout, const std::string& size_class) override;
  std::vector<std::string> options(const Config& c) const override { return in_.options(c); }
  std::vector<Compiled> compile(const std::vector<Variant>& vs) override;
  void compile_stream(const std::vector<Variant>& vs, const std::function<void(std::size_t, Compiled&&)>& done) override {
    in_.compile_stream(vs, done);
  }
  RunResult run(const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout_s) override;
  int restarts() const override { return in_.restarts(); }
  int lanes() const override { return in_.lanes(); }
  RunResult run_on(int lane, const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout_s) override;
  DeviceSummary lane_device(int lane) override { return in_.lane_device(lane); }

 private:
  Evaluator& in_;
  CostMeter& m_;
  std::string class_;  // of the current case
};

}  // namespace evk::gi::detail
