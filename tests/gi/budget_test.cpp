// Time budgets on the CPU (`gi evolve --budget`): a stage's share of the budget, and tune and
// minimize stopping when theirs is spent (keeping the best so far, saying how far they got), against
// a fake GPU whose evaluations take known times on a fake clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "evk/gi/budget.hpp"
#include "evk/gi/post.hpp"
#include "evk_testing.hpp"
#include "timed_fake.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

using testing::FakeClock;
using testing::TimedFake;

TEST(GiBudget, StageBudgetCountsOnItsClock) {
  FakeClock clock;
  const StageBudget none;
  EXPECT_FALSE(none.limited());
  EXPECT_FALSE(none.overruns(1e9));
  EXPECT_EQ(none.fits(1, 32), 32);
  const StageBudget b(10, clock.clock());
  EXPECT_TRUE(b.limited());
  EXPECT_FALSE(b.overruns(10));
  EXPECT_TRUE(b.overruns(5, 3));
  EXPECT_EQ(b.fits(3, 32), 3);
  EXPECT_EQ(b.fits(0, 7), 7);  // nothing measured yet: no limit on the count
  clock.advance(8.5);
  EXPECT_DOUBLE_EQ(b.elapsed_s(), 8.5);
  EXPECT_TRUE(b.overruns(2));
  EXPECT_EQ(b.fits(0.5, 32), 3);
  clock.advance(2);
  EXPECT_EQ(b.fits(0.5, 32), 0);
  EXPECT_FALSE(StageBudget(0, clock.clock()).limited());
}

// tune() with a budget stops when it is spent, keeps the best configuration so far and says how
// far it got; without one it tries every planned configuration.
TEST(GiBudget, TuneStopsWhenItsShareIsSpentAndKeepsTheBest) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  TuneOptions to;
  const int planned = tune_planned(g, to);
  EXPECT_EQ(planned, 6 + 10 * 4 * 2 - 1);  // BLOCK_W's 6 values, then the option genes' other combinations
  {
    FakeClock clock;
    TimedFake ev(*p, clock);
    const TuneResult r = tune(g, ev, empty_genome(g), to);
    EXPECT_FALSE(r.budget_stopped);
    EXPECT_TRUE(r.note.empty()) << r.note;
    EXPECT_EQ(static_cast<int>(r.table.size()), planned);
    EXPECT_EQ(r.planned, planned);
    TuneOptions descent = to;  // above max_combinations: each parameter's values, twice over
    descent.max_combinations = 4;
    EXPECT_EQ(tune_planned(g, descent), 2 * 6 + 79);
    EXPECT_EQ(static_cast<int>(tune(g, ev, empty_genome(g), descent).table.size()), 2 * 6 + 79);
  }
  FakeClock clock;
  TimedFake ev(*p, clock);
  to.clock = clock.clock();
  to.budget_s = 3;  // a new case (0.5 s) and ~0.19 s per configuration: ~13 of them
  const double t0 = clock.now();
  std::vector<std::pair<int, int>> progress;
  const TuneResult r = tune(g, ev, empty_genome(g), to, [&](int d, int t) { progress.emplace_back(d, t); });
  const double used = clock.now() - t0;
  ASSERT_TRUE(r.budget_stopped);
  const int tried = static_cast<int>(r.table.size());
  EXPECT_GE(tried, 6) << "every launch width fits in the budget";
  EXPECT_LT(tried, planned);
  EXPECT_EQ(r.planned, planned);
  EXPECT_NE(r.note.find("the budget stopped tuning after " + std::to_string(tried) + " of " + std::to_string(planned) +
                        " configurations"),
            std::string::npos)
      << r.note;
  EXPECT_NE(r.note.find("the best so far is kept"), std::string::npos) << r.note;
  // slack: a set of configurations may take longer than the mean of those before it says; here the
  // fake's costs are even, so the tune ends within its budget
  EXPECT_LE(used, to.budget_s) << r.note;
  EXPECT_EQ(r.output.config.at("BLOCK_W"), "256");  // the fake's fastest launch, found in the grid
  for (const auto& e : r.table) {
    if (e.status != "ok") continue;
    EXPECT_GE(e.score, r.output_score - 1e-12);
  }
  // progress per phase: the launch widths (6) first, in sets as large as the budget has room for
  EXPECT_NE(std::find(progress.begin(), progress.end(), std::make_pair(6, 6)), progress.end());
  EXPECT_LT(progress.front().first, 6) << "the first set is sized by the input's measurement";
}

// minimize() with a budget tries genes left to right until it is spent; the genes not tried stay.
TEST(GiBudget, MinimizeKeepsTheGenesItHadNoTimeFor) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  const std::string del = "<_K_" + std::to_string(testing::line_of(g, "scratch[i] = acc;")) + "> <_K_" +
                          std::to_string(testing::line_of(g, "acc = acc + bias;")) + ">";
  const Genome x = parse_genome(g, "BLOCK_W=256 USE_SHARED=true " + del);
  EXPECT_EQ(minimize_genes(g, x), 4);
  FakeClock clock;
  TimedFake ev(*p, clock);
  MinimizeOptions mo;
  mo.noise_samples = 2;
  mo.min_noise_fraction = 0.001;
  mo.clock = clock.clock();
  mo.budget_s = 2.2;  // the noise (a new case, 2 runs of ~0.28 s) and two knock-outs with the final measurement
  const MinimizeResult r = minimize(g, ev, x, mo);
  ASSERT_TRUE(r.budget_stopped);
  EXPECT_EQ(r.genes, 4);
  EXPECT_GE(r.tried, 1);
  EXPECT_LT(r.tried, 4);
  int not_tried = 0;
  for (const auto& l : r.log) not_tried += l.find(": not tried (the budget ran out)") != std::string::npos;
  EXPECT_EQ(not_tried, 4 - r.tried);
  EXPECT_EQ(r.log.back().rfind("the budget stopped minimize after " + std::to_string(r.tried) + " of 4 genes", 0), 0u)
      << r.log.back();
  // the edits come last and were not tried: both stay
  EXPECT_EQ(r.output.edits.size(), 2u);
  // without a budget every gene is tried
  MinimizeOptions unlimited = mo;
  unlimited.budget_s = 0;
  const MinimizeResult all = minimize(g, ev, x, unlimited);
  EXPECT_FALSE(all.budget_stopped);
  EXPECT_EQ(all.tried, 4);
}

}  // namespace
}  // namespace evk::gi
