// Time budgets (`gi evolve --budget`, docs/GI.md "gi evolve"): the clock a budget is kept on, which
// tests may replace by a fake one that their fake evaluators advance (so that every budget decision
// is deterministic), and one stage's share of the budget.
#pragma once
#include <functional>

namespace evk::gi {

// Monotonic seconds from any origin. Empty: std::chrono::steady_clock.
using SecondsClock = std::function<double()>;
double now_s(const SecondsClock& clock);

// A stage's share of the budget, counted from its construction: a stage asks before each step
// whether the step, at its expected length (the mean of its steps so far), would end after it.
class StageBudget {
 public:
  StageBudget() = default;                         // unlimited
  StageBudget(double budget_s, SecondsClock clock);  // budget_s <= 0: unlimited
  bool limited() const { return budget_s_ > 0; }
  double budget_s() const { return budget_s_; }
  double elapsed_s() const;
  // Whether `steps` more steps of `step_s` seconds each would end after the budget (never when
  // unlimited).
  bool overruns(double step_s, int steps = 1) const;
  // How many steps of `step_s` seconds fit in what is left, at most `most` (`most` when unlimited or
  // step_s <= 0).
  int fits(double step_s, int most) const;

 private:
  double budget_s_ = 0, start_ = 0;
  SecondsClock clock_;
};

}  // namespace evk::gi
