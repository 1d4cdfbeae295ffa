// Search objectives on the CPU (evk/gi/objective.hpp): the fitness arithmetic, the energy ship rule
// at its boundaries, and searches for time, energy and edp against a fake GPU whose power depends on
// the configuration (BLOCK_W=256 is faster and draws twice the power), their run directories and
// reports.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "evk/error.hpp"
#include "evk/gi/objective.hpp"
#include "evk/gi/search.hpp"
#include "evk_testing.hpp"
#include "energy_fake.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

using testing::EnergyFake;
using testing::FakeEvaluator;
using testing::fake_watts;

SearchOptions small(Objective o, const std::string& dir = "") {
  SearchOptions so;
  so.population = 24;
  so.generations = 4;
  so.seed = 5;
  so.objective = o;
  so.run_dir = dir;
  return so;
}

TEST(GiObjective, NamesParsingAndFitnessValues) {
  for (Objective o : {Objective::time, Objective::energy, Objective::edp}) EXPECT_EQ(parse_objective(objective_name(o)), o);
  EXPECT_STREQ(objective_unit(Objective::edp), "J*ms");
  EXPECT_FALSE(needs_energy(Objective::time));
  EXPECT_TRUE(needs_energy(Objective::energy));
  EXPECT_TRUE(needs_energy(Objective::edp));
  try {
    parse_objective("power");
    ADD_FAILURE() << "accepted 'power'";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--objective: must be time, energy or edp (got 'power')");
  }
  EXPECT_THROW(parse_objective("Time"), InputError);
  // 2.5 ms and 0.4 J per launch
  EXPECT_DOUBLE_EQ(objective_value(Objective::time, 2.5, 0.4), 2.5);
  EXPECT_DOUBLE_EQ(objective_value(Objective::energy, 2.5, 0.4), 0.4);
  EXPECT_DOUBLE_EQ(objective_value(Objective::edp, 2.5, 0.4), 1.0);
}

TEST(GiObjective, EnergyShipRuleAtItsBoundaries) {
  // exactly 10% less energy for exactly 5% more time ships, also as ratios of measured values
  EXPECT_TRUE(energy_ship_rule(0.90, 1.05).ships);
  EXPECT_TRUE(energy_ship_rule(0.45 / 0.5, 2.1 / 2.0).ships);
  EXPECT_TRUE(energy_ship_rule(0.9 * 0.37 / 0.37, 1.05 * 3.3 / 3.3).ships);
  // just short of 10% saved: does not ship, and says why
  ShipDecision d = energy_ship_rule(0.9001, 1.0);
  EXPECT_FALSE(d.ships);
  EXPECT_NE(d.why.find("at least 10% energy"), std::string::npos) << d.why;
  EXPECT_NE(d.why.find("-10.0% energy"), std::string::npos) << d.why;  // -9.99% shown to one decimal
  // just over 5% more time: does not ship
  d = energy_ship_rule(0.80, 1.0501);
  EXPECT_FALSE(d.ships);
  EXPECT_NE(d.why.find("at most 5% more time"), std::string::npos) << d.why;
  EXPECT_NE(d.why.find("-20.0% energy, +5.0% time"), std::string::npos) << d.why;
  // inside both limits, and faster too
  d = energy_ship_rule(0.5, 0.9);
  EXPECT_TRUE(d.ships);
  EXPECT_NE(d.why.find("-50.0% energy, -10.0% time vs the pre-tuned original"), std::string::npos) << d.why;
  EXPECT_TRUE(energy_ship_rule(0.8999, 1.0499).ships);
  // both limits missed: the energy one is named
  d = energy_ship_rule(0.95, 1.2);
  EXPECT_FALSE(d.ships);
  EXPECT_NE(d.why.find("at least 10%"), std::string::npos) << d.why;
  // not measured
  d = energy_ship_rule(0, 1.0);
  EXPECT_FALSE(d.ships);
  EXPECT_NE(d.why.find("not measured"), std::string::npos) << d.why;
  EXPECT_FALSE(energy_ship_rule(0.5, 0).ships);
  EXPECT_FALSE(energy_ship_rule(std::nan(""), 1.0).ships);
}

// time ignores joules (even where a GPU reports them) and asks for none: the same search as
// against the plain fake; energy and edp ask for them and rank by them.
TEST(GiObjective, SearchFitnessPerObjective) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  FakeEvaluator plain(*p);
  EnergyFake et(*p);
  const SearchState a = run_search(g, plain, small(Objective::time));
  const SearchState b = run_search(g, et, small(Objective::time));
  EXPECT_EQ(et.asked, 0);
  EXPECT_GT(et.not_asked, 0);
  ASSERT_EQ(a.population.size(), b.population.size());
  for (std::size_t i = 0; i < a.population.size(); ++i) {
    EXPECT_EQ(a.population[i].text, b.population[i].text);
    EXPECT_EQ(a.population[i].fitness, b.population[i].fitness);
    if (b.population[i].correct()) { EXPECT_EQ(b.population[i].fitness, b.population[i].time_ms); }
  }
  EXPECT_EQ(a.best_genome, b.best_genome);
  EXPECT_EQ(a.best_speedup, b.best_speedup);
  EXPECT_EQ(b.best_gain, b.best_speedup);
  // 5% less time: the time search's best has BLOCK_W=256 (so the energy searches below choose otherwise)
  EXPECT_EQ(parse_genome(g, b.best_genome).config.at("BLOCK_W"), "256") << b.best_genome;

  for (Objective o : {Objective::energy, Objective::edp}) {
    EnergyFake ev(*p);
    const SearchState s = run_search(g, ev, small(o));
    EXPECT_EQ(ev.not_asked, 0) << objective_name(o);
    EXPECT_GT(ev.asked, 0);
    double best = std::numeric_limits<double>::infinity();
    for (const auto& ind : s.population) {
      if (!ind.correct()) continue;
      const Config cfg = ind.genome.config;
      EXPECT_DOUBLE_EQ(ind.joules, ind.time_ms * 1e-3 * fake_watts(cfg)) << ind.text;
      EXPECT_EQ(ind.fitness, o == Objective::energy ? ind.joules : ind.joules * ind.time_ms) << ind.text;
      best = std::min(best, ind.fitness);
    }
    const GenerationStats& last = s.history.back();
    EXPECT_EQ(last.objective, objective_name(o));
    EXPECT_GT(last.ref_j, 0);
    EXPECT_DOUBLE_EQ(last.best_gain, objective_value(o, last.ref_ms, last.ref_j) / best);
    // twice the power for 5% less time never pays in energy: the best never has BLOCK_W=256
    ASSERT_FALSE(s.best_genome.empty());
    EXPECT_EQ(parse_genome(g, s.best_genome).config.at("BLOCK_W") == "256", false) << s.best_genome;
    EXPECT_GE(s.best_gain, last.best_gain);
  }
}

TEST(GiObjective, CandidatesWithoutEnergyAreNotRankedAndTheOriginalMustHaveIt) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  EnergyFake ev(*p);
  ev.no_energy_block = "256";
  const SearchState s = run_search(g, ev, small(Objective::energy));
  int no_energy = 0;
  for (const auto& ind : s.population) {
    if (ind.genome.config.at("BLOCK_W") != "256" || ind.penalty > 0) continue;
    ++no_energy;
    EXPECT_EQ(ind.status, "no_energy") << ind.text;
    EXPECT_FALSE(ind.correct());
    EXPECT_TRUE(std::isinf(ind.fitness));
    EXPECT_NE(ind.summary.find("changed 0 time(s)"), std::string::npos) << ind.summary;
  }
  EXPECT_GT(no_energy, 0);
  EnergyFake broken(*p);
  broken.no_energy_ref = true;
  try {
    run_search(g, broken, small(Objective::edp));
    ADD_FAILURE() << "a search without the original's energy";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the original kernel's energy could not be measured"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(run_search(g, broken, small(Objective::time)));  // time does not need it
}

// The run directory of an energy search: the checkpoint keeps the joules and the best gain, the
// generation log and report say which objective and show joules, and a resume goes on from them.
TEST(GiObjective, RunDirectoryRecordsTheObjectiveAndJoules) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  evk::testing::TempDir dir;
  const std::string run = dir.path().string();
  EnergyFake ev(*p);
  SearchOptions so = small(Objective::energy, run);
  so.generations = 2;
  const SearchState s = run_search(g, ev, so);
  write_text_atomic(run + "/config.json", R"({"problem": "toy", "population": 24, "generations": 3, "seed": 5,
                                              "objective": "energy"})");
  const SearchState loaded = load_run(run, g);
  EXPECT_EQ(loaded.best_gain, s.best_gain);
  EXPECT_EQ(loaded.best_j, s.best_j);
  ASSERT_EQ(loaded.population.size(), s.population.size());
  for (std::size_t i = 0; i < s.population.size(); ++i) EXPECT_EQ(loaded.population[i].joules, s.population[i].joules);
  const auto log = read_run_log(run);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].objective, "energy");
  EXPECT_EQ(log[1].ref_j, s.history[1].ref_j);
  EXPECT_EQ(log[1].best_gain, s.history[1].best_gain);
  write_report(run);
  const std::string report = read_text(run + "/report.md");
  EXPECT_NE(report.find("- objective: energy (joules per launch"), std::string::npos) << report;
  EXPECT_NE(report.find("| ref J | best J | energy gain |"), std::string::npos) << report;
  EXPECT_NE(report.find("best energy gain over the original"), std::string::npos) << report;
  EXPECT_NE(read_text(run + "/candidates.jsonl").find("\"joules\":"), std::string::npos);
  EXPECT_NE(read_text(run + "/generations.csv").find(",objective,ref_j,best_j,best_gain"), std::string::npos);
  EXPECT_EQ(read_run_config(run, *p, 7).objective, Objective::energy);
  so.generations = 3;
  so.resume = true;
  EnergyFake again(*p);
  const SearchState r = run_search(g, again, so);
  EXPECT_EQ(r.history.size(), 3u);
  EXPECT_GE(r.best_gain, s.best_gain);
  EXPECT_EQ(again.not_asked, 0);
}

TEST(GiObjective, RunConfigObjectiveAndEnergyWindow) {
  auto p = testing::make_toy_problem();
  evk::testing::TempDir dir;
  const std::string run = dir.path().string();
  const std::string base = R"("problem": "toy", "population": 4, "generations": 2, "seed": 1)";
  write_text_atomic(run + "/config.json", "{" + base + "}");
  EXPECT_EQ(read_run_config(run, *p, 7).objective, Objective::time);  // runs from before objectives
  EXPECT_EQ(read_run_config(run, *p, 7).energy_window_ms, 200);
  write_text_atomic(run + "/config.json", "{" + base + R"(, "objective": "edp", "energy_window_ms": 500})");
  EXPECT_EQ(read_run_config(run, *p, 7).objective, Objective::edp);
  EXPECT_EQ(read_run_config(run, *p, 7).energy_window_ms, 500);
  for (const std::string bad : {R"("objective": "power")", R"("objective": 2)", R"("energy_window_ms": 0)",
                                R"("energy_window_ms": "x")"}) {
    write_text_atomic(run + "/config.json", "{" + base + ", " + bad + "}");
    try {
      read_run_config(run, *p, 7);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(run + "/config.json: damaged run configuration: ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace evk::gi
