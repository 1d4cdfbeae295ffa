// What gi evolve's evaluations cost (evolve_budget.hpp).
#include "evolve_budget.hpp"

#include <algorithm>

namespace evk::gi::detail {

double run_units(const TimingSpec& t, int repeats) {
  const int race = std::max(0, t.race_checks);
  const double launches = 1 + std::max(0, t.warmup) + std::max(0, repeats) + race;
  const double checks = 2 + race;
  return launches + checks;
}

void CostMeter::case_set(const std::string& cls, const std::string& key, double s) {
  std::lock_guard<std::mutex> lk(m_);
  if (!keys_.insert(key).second) return;
  Sums& x = by_class_[cls];
  x.case_s += s;
  x.cases += 1;
}

void CostMeter::ran(const std::string& cls, const TimingSpec& t, const RunResult& r, double s) {
  if (!r.ok()) return;  // a crash or a hang costs the watchdog, not what a run costs
  std::lock_guard<std::mutex> lk(m_);
  double burst = 0;
  if (r.joules > 0 && r.energy_s > 0) {
    burst = std::min(s, r.energy_s);
    burst_s_ += burst;
    bursts_ += 1;
  }
  Sums& x = by_class_[cls];
  x.run_s += s - burst;
  x.units += run_units(t, r.repeats > 0 ? r.repeats : t.repeats);
}

void CostMeter::compiled(double s) {
  std::lock_guard<std::mutex> lk(m_);
  compile_s_ += s;
  compiles_ += 1;
}

CostMeter::Sums CostMeter::of(const std::string& cls) const {
  std::lock_guard<std::mutex> lk(m_);
  Sums all, own;
  if (auto it = by_class_.find(cls); it != by_class_.end()) own = it->second;
  for (const auto& [k, x] : by_class_) {
    all.case_s += x.case_s;
    all.cases += x.cases;
    all.run_s += x.run_s;
    all.units += x.units;
  }
  if (own.cases == 0) own.case_s = all.case_s, own.cases = all.cases;
  if (own.units == 0) own.run_s = all.run_s, own.units = all.units;
  return own;
}

double CostMeter::case_s(const std::string& cls) const {
  const Sums x = of(cls);
  return x.cases > 0 ? x.case_s / x.cases : 0;
}

double CostMeter::run_s(const std::string& cls, const TimingSpec& t) const {
  const Sums x = of(cls);
  double s = x.units > 0 ? x.run_s / x.units * run_units(t, t.repeats) : 0;
  if (t.energy) {
    std::lock_guard<std::mutex> lk(m_);
    s += bursts_ > 0 ? burst_s_ / bursts_ : t.energy_window_ms / 1000.0;
  }
  return s;
}

double CostMeter::compile_s() const {
  std::lock_guard<std::mutex> lk(m_);
  return compiles_ > 0 ? compile_s_ / compiles_ : 0;
}

CaseInfo MeteredEvaluator::set_case(std::uint64_t seed, bool holdout, const std::string& size_class) {
  const double t = now_s(m_.clock());
  CaseInfo ci = in_.set_case(seed, holdout, size_class);
  class_ = size_class.empty() ? ci.size_class : size_class;
  m_.case_set(class_, class_ + "/" + std::to_string(seed) + (holdout ? "/h" : "/t"), now_s(m_.clock()) - t);
  return ci;
}

std::vector<Compiled> MeteredEvaluator::compile(const std::vector<Variant>& vs) {
  const double t = now_s(m_.clock());
  auto r = in_.compile(vs);
  m_.compiled(now_s(m_.clock()) - t);
  return r;
}

RunResult MeteredEvaluator::run(const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout_s) {
  const double t0 = now_s(m_.clock());
  RunResult r = in_.run(c, cfg, t, timeout_s);
  m_.ran(class_, t, r, now_s(m_.clock()) - t0);
  return r;
}

RunResult MeteredEvaluator::run_on(int lane, const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout_s) {
  const double t0 = now_s(m_.clock());
  RunResult r = in_.run_on(lane, c, cfg, t, timeout_s);
  m_.ran(class_, t, r, now_s(m_.clock()) - t0);
  return r;
}

}  // namespace evk::gi::detail
