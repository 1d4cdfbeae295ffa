// Time budgets on the CPU (`gi evolve --budget`): a stage's share of the budget, tune and minimize
// stopping when theirs is spent (keeping the best so far, saying how far they got), and the whole
// pipeline against a fake GPU whose evaluations take known times on a fake clock: the search, then
// minimize and tune within what is left after validation's reserve, and validation always.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "evk/gi/budget.hpp"
#include "evk/gi/evolve.hpp"
#include "evk/gi/post.hpp"
#include "evk_testing.hpp"
#include "timed_fake.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

using testing::FakeClock;
using testing::TimedFake;

// The stages as run, for a failure's message.
std::string stages_text(const EvolveResult& r) {
  std::string t;
  char b[400];
  for (const auto& s : r.stages) {
    std::snprintf(b, sizeof b, "%s: budget %.2f s, used %.2f s, %d/%d%s %s\n", s.name.c_str(), s.budget_s, s.used_s,
                  s.done, s.total, s.budget_stopped ? " stopped" : "", s.note.c_str());
    t += b;
  }
  std::snprintf(b, sizeof b, "elapsed %.2f s, validation reserve %.2f s\n", r.elapsed_s, r.validation_reserve_s);
  return t + b;
}

const EvolveStage* stage(const EvolveResult& r, const std::string& name) {
  for (const auto& s : r.stages)
    if (s.name == name) return &s;
  return nullptr;
}

// "large" and "small", 3 hold-out cases each, a population of 16 for 4 generations: on the fake
// GPU of timed_fake.hpp the search takes ~11 s, minimize ~4.5 s, each tune ~15 s for all 85
// configurations (6 launch widths, then 79 combinations of the option genes) and each class's
// validation ~8.4 s.
EvolveOptions timed_options(FakeClock& clock, double budget_s) {
  EvolveOptions o;
  o.clock = clock.clock();
  o.budget_s = budget_s;
  o.population = 16;
  o.generations = 4;
  o.cases = 3;
  o.minimize.noise_samples = 2;
  o.minimize.min_noise_fraction = 0.001;  // the fake has no noise: a deleted line's 1% counts
  return o;
}

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

// The run of the report (gi evolve --budget 3 on an H200: the search stopped in time, the tune
// after it ran far past the budget and validation never ran), on the fake clock: every stage keeps
// to the budget, each tune stops when its share is spent and says how far it got, and each class is
// validated on all its hold-out cases.
TEST(GiBudget, EvolveKeepsEveryStageWithinTheBudget) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  FakeClock clock;
  std::vector<TimedFake*> made;
  EvaluatorFactory factory = [&](bool, int) -> std::unique_ptr<Evaluator> {
    auto e = std::make_unique<TimedFake>(*p, clock);
    made.push_back(e.get());
    return e;
  };
  const double budget = 60;
  const EvolveOptions o = timed_options(clock, budget);
  const double t0 = clock.now();
  std::vector<std::string> order;
  const EvolveResult r = evolve(*p, g, factory, o, [&](const EvolveProgress& e) {
    if (order.empty() || order.back() != e.stage) order.push_back(e.stage);
  });
  const double used = clock.now() - t0;
  const std::string all = stages_text(r);
  // slack: a step (a generation, a knock-out, a set of configurations) may take longer than the
  // mean of those before it; the fake's steps are even and validation's estimate is on the safe side
  EXPECT_LE(used, budget) << all;
  EXPECT_DOUBLE_EQ(r.elapsed_s, used);
  EXPECT_GT(r.validation_reserve_s, 0) << all;
  const std::vector<std::string> want = {"search", "minimize", "tune original (large)", "tune evolved (large)",
                                         "validate (large)", "tune original (small)", "tune evolved (small)",
                                         "validate (small)"};
  ASSERT_EQ(r.stages.size(), want.size()) << all;
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(r.stages[i].name, want[i]) << all;
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(order[i], want[i]);
  EXPECT_FALSE(r.stages[0].budget_stopped) << all;  // the search's 4 generations fit in its half
  EXPECT_EQ(r.stages[0].done, 4);
  EXPECT_FALSE(r.stages[1].budget_stopped) << all;  // minimize's few genes fit
  EXPECT_EQ(r.stages[1].done, r.stages[1].total);
  const int planned = tune_planned(g, o.tune);
  for (const char* t : {"tune original (large)", "tune evolved (large)", "tune original (small)", "tune evolved (small)"}) {
    const EvolveStage* s = stage(r, t);
    ASSERT_NE(s, nullptr) << t;
    EXPECT_TRUE(s->budget_stopped) << all;
    EXPECT_EQ(s->total, planned);
    EXPECT_GT(s->done, 0) << all;
    EXPECT_LT(s->done, planned) << all;
    EXPECT_LE(s->used_s, s->budget_s) << all;
    EXPECT_NE(s->note.find("after " + std::to_string(s->done) + " of " + std::to_string(planned) + " configurations"),
              std::string::npos)
        << all;
  }
  ASSERT_EQ(r.classes.size(), 2u);
  for (const auto& c : r.classes) {
    EXPECT_EQ(c.validation.run, 3) << c.size_class;
    EXPECT_TRUE(c.validation.blessed) << c.validation.reason;
    EXPECT_EQ(c.pretuned.config.at("BLOCK_W"), "256") << "the launch widths come first in the tune";
    const EvolveStage* v = stage(r, "validate (" + c.size_class + ")");
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->done, 3);
    EXPECT_LE(v->used_s, v->budget_s) << "validation took more than its reserve: " << all;
  }
  ASSERT_EQ(made.size(), 2u);
  EXPECT_EQ(made[1]->validation_runs, 2 * 3 * 3);  // per class, case: the original, pre-tuned and evolved kernel

  // without a budget the same pipeline tunes every configuration and takes much longer
  FakeClock free_clock;
  EvaluatorFactory free_factory = [&](bool, int) -> std::unique_ptr<Evaluator> {
    return std::make_unique<TimedFake>(*p, free_clock);
  };
  EvolveOptions unlimited = timed_options(free_clock, 0);
  const double f0 = free_clock.now();
  const EvolveResult u = evolve(*p, g, free_factory, unlimited);
  for (const auto& s : u.stages) EXPECT_FALSE(s.budget_stopped) << stages_text(u);
  EXPECT_EQ(stage(u, "tune evolved (small)")->done, planned);
  EXPECT_GT(free_clock.now() - f0, 1.5 * budget) << stages_text(u);
}

// A budget with no time for minimize or tune after the search and validation's reserve: they are
// skipped with the reason, the search stops before a generation that would eat into the reserve,
// and validation still runs on every hold-out case. (What the first class's validation leaves of
// its reserve goes to the second class's tunes.)
TEST(GiBudget, ValidationRunsWhenNothingElseFits) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  FakeClock clock;
  EvaluatorFactory factory = [&](bool, int) -> std::unique_ptr<Evaluator> {
    return std::make_unique<TimedFake>(*p, clock);
  };
  EvolveOptions o = timed_options(clock, 24);
  o.search_share = 0.9;  // the search may take most of it, but not validation's reserve
  o.generations = 50;
  const EvolveResult r = evolve(*p, g, factory, o);
  const std::string all = stages_text(r);
  const EvolveStage* search = stage(r, "search");
  ASSERT_NE(search, nullptr);
  EXPECT_TRUE(search->budget_stopped) << all;
  EXPECT_LT(search->done, 50);
  EXPECT_NE(search->note.find("eaten into the time reserved for validation"), std::string::npos) << all;
  for (const char* s : {"minimize", "tune original (large)", "tune evolved (large)"}) {
    const EvolveStage* st = stage(r, s);
    ASSERT_NE(st, nullptr) << s << "\n" << all;
    EXPECT_TRUE(st->budget_stopped);
    EXPECT_EQ(st->done, 0);
    EXPECT_EQ(st->note.rfind("skipped: ", 0), 0u) << all;
  }
  ASSERT_EQ(r.classes.size(), 2u) << all;
  for (const auto& c : r.classes) EXPECT_EQ(c.validation.run, 3) << c.size_class;
  EXPECT_TRUE(r.classes[0].pretuned == empty_genome(g)) << "not tuned: the original's defaults";
  EXPECT_TRUE(r.classes[0].evolved == r.best) << "neither minimized nor tuned";
  EXPECT_TRUE(r.minimized == r.best);
  // the search's generations and the validation fit: the budget is overrun only by what the
  // estimates missed, at most the margin of the reserve
  EXPECT_LE(r.elapsed_s, o.budget_s) << all;
}

}  // namespace
}  // namespace evk::gi
