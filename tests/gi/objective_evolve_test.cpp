// Energy after the search, on the CPU: `gi validate` with joules (per-case joules of the three
// kernels and the ratios), the class decision of `gi evolve` per objective (class_wins), and the
// whole pipeline for energy against fake GPUs where deleting lines saves power (ships) or costs time
// (does not ship, and says why).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "energy_fake.hpp"
#include "evk/gi/evolve.hpp"
#include "evk/gi/post.hpp"
#include "evk_testing.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

using testing::EnergyFake;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Deletions of plain statements the fake answers right without: the debug store, then the bias.
std::string deletions(const Grammar& g, int n) {
  std::string t = "<_K_" + std::to_string(testing::line_of(g, "scratch[i] = acc;")) + ">";
  if (n > 1) t += " <_K_" + std::to_string(testing::line_of(g, "acc = acc + bias;")) + ">";
  return t;
}

TEST(GiEnergyValidate, JoulesPerCaseAndRatios) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  EnergyFake ev(*p);
  ev.power_per_deletion = 0.1;
  const Genome evolved = parse_genome(g, deletions(g, 2));
  const Genome pretuned = parse_genome(g, "BLOCK_W=256");
  ValidateOptions vo;
  vo.cases = 4;
  vo.timing.energy = true;
  const ValidateResult r = validate(g, ev, evolved, &pretuned, vo);
  ASSERT_TRUE(r.blessed) << r.reason;
  ASSERT_TRUE(r.energy) << r.energy_note;
  EXPECT_EQ(ev.not_asked, 0);
  std::vector<double> e, ep, tp;
  for (const auto& c : r.cases) {
    // the fake's joules: ms x watts, 100 W (200 W for BLOCK_W=256), 10% less power per deleted line
    EXPECT_DOUBLE_EQ(c.original_j, c.original_ms * 1e-3 * 100);
    EXPECT_DOUBLE_EQ(c.pretuned_j, c.pretuned_ms * 1e-3 * 200);
    EXPECT_DOUBLE_EQ(c.evolved_j, c.evolved_ms * 1e-3 * 100 * 0.8);
    e.push_back(c.evolved_j / c.original_j);
    ep.push_back(c.evolved_j / c.pretuned_j);
    tp.push_back(c.evolved_ms / c.pretuned_ms);
  }
  EXPECT_DOUBLE_EQ(r.energy_ratio_median, median(e));
  EXPECT_DOUBLE_EQ(r.energy_ratio_pretuned_median, median(ep));
  EXPECT_DOUBLE_EQ(r.time_ratio_pretuned_median, median(tp));
  EXPECT_DOUBLE_EQ(r.energy_ratio_min, *std::min_element(e.begin(), e.end()));
  EXPECT_LT(r.energy_ratio_median, 0.8);  // 20% less power and 2% less time
  EXPECT_NE(energy_line(r).find("large cases=4 energy="), std::string::npos) << energy_line(r);

  // without timing.energy: no joules asked, none reported
  EnergyFake quiet(*p);
  const ValidateResult q = validate(g, quiet, evolved, &pretuned, ValidateOptions{});
  EXPECT_FALSE(q.energy);
  EXPECT_EQ(quiet.asked, 0);
  EXPECT_EQ(q.cases[0].evolved_j, 0);
  // a kernel without joules: not measured, and the note names it
  EnergyFake broken(*p);
  broken.no_energy_block = "256";
  const ValidateResult b = validate(g, broken, evolved, &pretuned, vo);
  EXPECT_TRUE(b.blessed);
  EXPECT_FALSE(b.energy);
  EXPECT_NE(b.energy_note.find("pre-tuned original: the energy counter changed 0 time(s)"), std::string::npos)
      << b.energy_note;
}

TEST(GiEnergyEvolve, ClassWinsPerObjective) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  EvolveClass ec;
  ec.size_class = "large";
  ec.pretuned = parse_genome(g, "BLOCK_W=256");
  ec.evolved = parse_genome(g, deletions(g, 1));
  ec.validation.blessed = ec.validation.has_pretuned = ec.validation.energy = true;
  ec.validation.speedup_pretuned_median = 1.02;
  ec.validation.energy_ratio_pretuned_median = 0.90;
  ec.validation.time_ratio_pretuned_median = 1.05;
  EXPECT_TRUE(class_wins(ec, Objective::energy, 0.01)) << ec.why;
  EXPECT_TRUE(class_wins(ec, Objective::edp, 0.01)) << ec.why;
  EXPECT_TRUE(class_wins(ec, Objective::time, 0.01));
  EXPECT_FALSE(class_wins(ec, Objective::time, 0.03));  // time: min_gain on the speed-up only
  ec.validation.energy_ratio_pretuned_median = 0.91;
  EXPECT_FALSE(class_wins(ec, Objective::energy, 0.01));
  EXPECT_NE(ec.why.find("at least 10% energy"), std::string::npos) << ec.why;
  EXPECT_TRUE(class_wins(ec, Objective::time, 0.01));  // time ignores energy
  ec.validation.energy_ratio_pretuned_median = 0.5;
  ec.validation.time_ratio_pretuned_median = 1.06;
  EXPECT_FALSE(class_wins(ec, Objective::energy, 0.01));
  EXPECT_NE(ec.why.find("at most 5% more time"), std::string::npos) << ec.why;
  ec.validation.time_ratio_pretuned_median = 1.0;
  ec.validation.energy = false;
  ec.validation.energy_note = "no readable energy counter";
  EXPECT_FALSE(class_wins(ec, Objective::energy, 0.01));
  EXPECT_NE(ec.why.find("energy not measured on the hold-out cases: no readable energy counter"), std::string::npos) << ec.why;
  ec.validation.energy = true;
  EXPECT_TRUE(class_wins(ec, Objective::energy, 0.01));
  ec.evolved = ec.pretuned;  // nothing evolved
  EXPECT_FALSE(class_wins(ec, Objective::energy, 0.01));
  ec.evolved = parse_genome(g, deletions(g, 1));
  ec.validation.blessed = false;  // a wrong answer on a hold-out case
  EXPECT_FALSE(class_wins(ec, Objective::energy, 0.01));
}

EvolveOptions energy_options(const std::string& dir) {
  EvolveOptions o;
  o.objective = Objective::energy;
  o.classes = {"large"};
  o.population = 20;
  o.generations = 4;
  o.cases = 3;
  o.seed = 3;
  o.work_dir = dir;
  o.minimize.noise_samples = 2;
  o.minimize.min_noise_fraction = 0.001;
  o.tune.options = false;
  return o;
}

// Deleting a line saves 12% of the power for 1% less time: the evolved kernel ships, its file says
// energy, and every measurement after the search asked for joules.
TEST(GiEnergyEvolve, PipelineShipsAVariantThatSavesEnergy) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  evk::testing::TempDir dir;
  std::vector<EnergyFake*> made;
  EvaluatorFactory factory = [&](bool, int) -> std::unique_ptr<Evaluator> {
    auto e = std::make_unique<EnergyFake>(*p);
    e->power_per_deletion = 0.12;
    made.push_back(e.get());
    return e;
  };
  const EvolveResult r = evolve(*p, g, factory, energy_options(dir.path().string()));
  for (auto* e : made) EXPECT_EQ(e->not_asked, 0);
  ASSERT_EQ(r.classes.size(), 1u);
  const EvolveClass& c = r.classes[0];
  ASSERT_TRUE(c.validation.energy) << c.validation.energy_note;
  EXPECT_NE(c.pretuned.config.at("BLOCK_W"), "256") << "energy-tuned: the 200 W launch never pays";
  EXPECT_TRUE(c.wins) << c.why << " / " << c.validation.reason;
  EXPECT_LE(c.validation.energy_ratio_pretuned_median, 0.9);
  ASSERT_EQ(r.variants.size(), 1u) << r.refusal;
  const std::string file = variant_file(*p, {"NVIDIA H100", 90, 132, 1980000, 0, 1, "580.0", "13.0"}, r, r.variants[0],
                                        "energy-test", 3);
  std::map<std::string, std::vector<std::string>> keys;
  for (const auto& [k, v] : genome_header(file)) keys[k].push_back(v);
  EXPECT_EQ(keys["objective"], std::vector<std::string>{"energy"});
  ASSERT_EQ(keys["energy"].size(), 1u) << file;
  EXPECT_EQ(keys["energy"][0].rfind("large cases=3 energy=", 0), 0u) << file;
  EXPECT_EQ(keys["classes"], std::vector<std::string>{"large"});
  const std::string cfg = read_text((dir / "run/config.json").string());
  EXPECT_NE(cfg.find("\"objective\": \"energy\""), std::string::npos) << cfg;
}

// Deleting a line saves 15% of the power but takes 8% more time: more than 5% slower, no variant,
// and the refusal says so per class. A time evolve on a GPU with a counter reports the joules and
// decides by speed-up alone.
TEST(GiEnergyEvolve, PipelineRefusesAVariantThatCostsTooMuchTime) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  evk::testing::TempDir dir;
  EvaluatorFactory factory = [&](bool, int) -> std::unique_ptr<Evaluator> {
    auto e = std::make_unique<EnergyFake>(*p);
    e->power_per_deletion = 0.15;
    e->time_per_deletion = 0.08;
    return e;
  };
  EvolveResult r = evolve(*p, g, factory, energy_options(dir.path().string()));
  ASSERT_EQ(r.classes.size(), 1u);
  EXPECT_FALSE(r.classes[0].wins);
  EXPECT_TRUE(r.variants.empty());
  EXPECT_EQ(r.refusal.rfind("no energy variant ships", 0), 0u) << r.refusal;
  EXPECT_NE(r.refusal.find("large: "), std::string::npos) << r.refusal;
  const EvolveClass& c = r.classes[0];
  ASSERT_FALSE(c.evolved == c.pretuned) << "the search kept no deletion";  // each costs 8% more time
  EXPECT_GT(c.validation.time_ratio_pretuned_median, 1.05);
  EXPECT_LT(c.validation.energy_ratio_pretuned_median, 0.9);
  EXPECT_NE(r.refusal.find("at most 5% more time"), std::string::npos) << r.refusal;

  EvolveOptions t = energy_options((dir / "time").string());
  t.objective = Objective::time;
  t.measure_energy = true;
  EvaluatorFactory plain = [&](bool, int) -> std::unique_ptr<Evaluator> { return std::make_unique<EnergyFake>(*p); };
  r = evolve(*p, g, plain, t);
  ASSERT_EQ(r.classes.size(), 1u);
  EXPECT_TRUE(r.classes[0].validation.energy);
  EXPECT_TRUE(r.classes[0].why.empty());
  EXPECT_EQ(r.classes[0].wins, r.classes[0].validation.blessed && !(r.classes[0].evolved == r.classes[0].pretuned) &&
                                   r.classes[0].validation.speedup_pretuned_median > 1.01);
  if (!r.variants.empty()) {
    const std::string file = variant_file(*p, {"NVIDIA H100", 90, 132, 1980000, 0, 1, "580.0", "13.0"}, r,
                                          r.variants[0], "time-test", 3);
    EXPECT_EQ(file.find("# objective:"), std::string::npos) << file;
  }
}

}  // namespace
}  // namespace evk::gi
