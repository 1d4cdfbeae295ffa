// The clock of a time budget and a stage's share of it (evk/gi/budget.hpp).
#include "evk/gi/budget.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

namespace evk::gi {

double now_s(const SecondsClock& clock) {
  if (clock) return clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

StageBudget::StageBudget(double budget_s, SecondsClock clock)
    : budget_s_(budget_s > 0 ? budget_s : 0), clock_(std::move(clock)) {
  start_ = now_s(clock_);
}

double StageBudget::elapsed_s() const { return now_s(clock_) - start_; }

bool StageBudget::overruns(double step_s, int steps) const {
  return limited() && elapsed_s() + std::max(0.0, step_s) * std::max(0, steps) > budget_s_;
}

int StageBudget::fits(double step_s, int most) const {
  if (!limited() || !(step_s > 0)) return most;
  const double left = budget_s_ - elapsed_s();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<double>(most, std::floor(left / step_s)));
}

}  // namespace evk::gi
