// Size classes, several GPUs (lanes), per-class minimize/tune/validate and `gi evolve`, all against
// the fake evaluator of fake_evaluator.hpp (no GPU needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "evk/error.hpp"
#include "evk/gi/evolve.hpp"
#include "evk/gi/post.hpp"
#include "evk/gi/search.hpp"
#include "evk_testing.hpp"
#include "fake_evaluator.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

using testing::FakeEvaluator;

std::string K(const Grammar& g, const std::string& prefix, const std::string& needle) {
  const int l = testing::line_of(g, needle);
  return l > 0 ? prefix + std::to_string(l) : "";
}

TEST(GiProblemContract, ConstraintsParseAndHold) {
  const Constraint c = parse_constraint("max_disparity <= 253");
  EXPECT_EQ(c.name, "max_disparity");
  EXPECT_EQ(c.op, "<=");
  EXPECT_EQ(c.value, 253);
  EXPECT_EQ(c.text(), "max_disparity <= 253");
  EXPECT_TRUE(constraint_holds(c, {{"max_disparity", 253}}));
  EXPECT_FALSE(constraint_holds(c, {{"max_disparity", 255}}));
  EXPECT_TRUE(constraint_holds(c, {{"width", 4000}}));  // nothing to check
  EXPECT_TRUE(constraint_holds(parse_constraint("spacing == 5"), {{"spacing", 5}}));
  EXPECT_FALSE(constraint_holds(parse_constraint("spacing != 5"), {{"spacing", 5}}));
  EXPECT_TRUE(constraint_holds(parse_constraint("n >= 1e6"), {{"n", 2e6}}));
  EXPECT_EQ(violated_constraint({"n >= 10", "n <= 20"}, {{"n", 25}}), "n <= 20");
  EXPECT_EQ(violated_constraint({"n >= 10", "n <= 20"}, {{"n", 15}}), "");
  for (const char* bad : {"max_disparity < 253", "max_disparity <= x", "<= 3", "a b <= 3", "max-d <= 3", "n <= inf"})
    EXPECT_THROW(parse_constraint(bad), InputError) << bad;
}

TEST(GiProblemContract, SizeClassesOfTheToy) {
  auto p = testing::make_toy_problem();
  EXPECT_EQ(p->class_names(), (std::vector<std::string>{"large", "small"}));
  EXPECT_NO_THROW(p->check_class("small"));
  EXPECT_THROW(p->check_class("huge"), InputError);
  EXPECT_EQ(p->probe_cases("large"), 1);
  EXPECT_TRUE(p->constraints(p->default_config()).empty());
  const auto probes = probe_cases({"a", "b"}, {1, 3}, 100);
  ASSERT_EQ(probes.size(), 4u);
  EXPECT_EQ(probes[0].size_class, "a");
  EXPECT_EQ(probes[1].size_class, "b");
  EXPECT_EQ(probes[1].seed, 100u);
  EXPECT_EQ(probes[3].seed, 102u);
}

TEST(GiSearch, GenerationsCycleThroughTheClasses) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  FakeEvaluator ev(*p);
  SearchOptions o;
  o.population = 12;
  o.generations = 5;
  o.classes = {"large", "small"};
  SearchState s = run_search(g, ev, o);
  ASSERT_EQ(s.history.size(), 5u);
  for (std::size_t i = 0; i < s.history.size(); ++i) {
    EXPECT_EQ(s.history[i].size_class, i % 2 ? "small" : "large");
    EXPECT_EQ(s.history[i].case_describe.find(s.history[i].size_class), 5u) << s.history[i].case_describe;
  }
  // every training case was set with its class; none was a hold-out case
  std::vector<std::string> want;
  for (int gen = 0; gen < 5; ++gen) want.push_back(std::string(gen % 2 ? "small" : "large") + "/t" + std::to_string((1ull << 20) + gen));
  EXPECT_EQ(ev.cases, want);
  // one class: every generation on it
  FakeEvaluator one(*p);
  o.classes = {"small"};
  SearchState t = run_search(g, one, o);
  for (const auto& h : t.history) EXPECT_EQ(h.size_class, "small");
}

// Two lanes (GPUs of one kind) of different speeds must select exactly as one lane: every
// candidate's time is scaled by its own lane's reference.
// `scale`: a's lane 0 is that much slower than b's (times are on lane 0's scale).
void expect_same_run(const SearchState& a, const SearchState& b, bool exact, double scale = 1) {
  ASSERT_EQ(a.population.size(), b.population.size());
  for (std::size_t i = 0; i < a.population.size(); ++i) {
    EXPECT_EQ(a.population[i].text, b.population[i].text) << i;
    EXPECT_EQ(a.population[i].status, b.population[i].status) << i;
    EXPECT_EQ(a.population[i].penalty, b.population[i].penalty) << i;
    if (exact) {
      EXPECT_EQ(a.population[i].time_ms, scale * b.population[i].time_ms) << i;
    } else {
      EXPECT_NEAR(a.population[i].time_ms, scale * b.population[i].time_ms, 1e-9) << i;
    }
  }
  ASSERT_EQ(a.history.size(), b.history.size());
  for (std::size_t i = 0; i < a.history.size(); ++i) {
    EXPECT_EQ(a.history[i].parents, b.history[i].parents) << i;
    EXPECT_EQ(a.history[i].best_genome, b.history[i].best_genome) << i;
    EXPECT_EQ(a.history[i].tabu_code, b.history[i].tabu_code) << i;
    EXPECT_EQ(a.history[i].faster, b.history[i].faster) << i;
  }
  EXPECT_EQ(a.best_genome, b.best_genome);
  EXPECT_EQ(a.tabu_genotype, b.tabu_genotype);
  EXPECT_EQ(a.tabu_phenotype, b.tabu_phenotype);
  EXPECT_EQ(a.rng, b.rng);
}

TEST(GiLanes, TwoFakeGpusOfDifferentSpeedsSelectLikeOne) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  SearchOptions o;
  o.population = 24;
  o.generations = 4;
  o.seed = 7;
  o.classes = {"large", "small"};
  FakeEvaluator single(*p);
  const SearchState one = run_search(g, single, o);
  for (double speed : {2.0, 1.37}) {
    SCOPED_TRACE(speed);
    std::vector<std::unique_ptr<Evaluator>> lanes;
    lanes.push_back(std::make_unique<FakeEvaluator>(*p, 1.0));
    lanes.push_back(std::make_unique<FakeEvaluator>(*p, speed));
    auto* fast = static_cast<FakeEvaluator*>(lanes[0].get());
    auto* slow = static_cast<FakeEvaluator*>(lanes[1].get());
    fast->delay_us = 30;  // runs overlap and finish out of order
    slow->delay_us = 45;
    auto ev = make_lane_evaluator(std::move(lanes));
    EXPECT_EQ(ev->lanes(), 2);
    const SearchState two = run_search(g, *ev, o);
    expect_same_run(two, one, speed == 2.0);
    EXPECT_GT(fast->runs.load(), 0);
    EXPECT_GT(slow->runs.load(), 0) << "the second GPU got no candidate";
    std::set<int> used;
    for (const auto& ind : two.population)
      if (ind.status == "ok") used.insert(ind.lane);
    EXPECT_EQ(used.size(), 2u);
    for (const auto& h : two.history) {
      ASSERT_EQ(h.lane_ref_ms.size(), 2u);
      EXPECT_NEAR(h.lane_ref_ms[1], speed * h.lane_ref_ms[0], 1e-12);
    }
    for (const auto& ind : two.population) {
      if (ind.status == "ok" && ind.lane == 1) {
        EXPECT_NEAR(ind.raw_ms, speed * ind.time_ms, 1e-9);
      }
    }
  }
}

TEST(GiLanes, MixedGpusAreRefused) {
  auto p = testing::make_toy_problem();
  std::vector<std::unique_ptr<Evaluator>> lanes;
  lanes.push_back(std::make_unique<FakeEvaluator>(*p, 1.0, "NVIDIA H100 80GB HBM3"));
  lanes.push_back(std::make_unique<FakeEvaluator>(*p, 1.0, "NVIDIA H200"));
  auto ev = make_lane_evaluator(std::move(lanes));
  try {
    ev->device();
    FAIL() << "mixed GPUs accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("NVIDIA H200"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--devices"), std::string::npos) << e.what();
  }
}

TEST(GiLanes, ResumeOnOtherGpusEqualsAnUninterruptedRun) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  evk::testing::TempDir a, b;
  SearchOptions o;
  o.population = 16;
  o.generations = 4;
  o.seed = 5;
  o.classes = {"large", "small"};
  o.run_dir = a.path().string();
  FakeEvaluator ev1(*p);
  const SearchState full = run_search(g, ev1, o);
  // two generations on two lanes, then the rest on one (slower) GPU
  SearchOptions o2 = o;
  o2.run_dir = b.path().string();
  o2.generations = 2;
  {
    std::vector<std::unique_ptr<Evaluator>> lanes;
    lanes.push_back(std::make_unique<FakeEvaluator>(*p, 1.0));
    lanes.push_back(std::make_unique<FakeEvaluator>(*p, 2.0));
    auto ev = make_lane_evaluator(std::move(lanes));
    run_search(g, *ev, o2);
  }
  o2.generations = 4;
  o2.resume = true;
  FakeEvaluator ev3(*p, 4.0);
  const SearchState resumed = run_search(g, ev3, o2);
  expect_same_run(resumed, full, true, 4.0);
  EXPECT_EQ(read_generation_log(b.path().string()).size(), 4u);
}

TEST(GiSearch, BudgetStopsBeforeAGenerationThatWouldOverrun) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  FakeEvaluator ev(*p);
  ev.delay_us = 2000;  // ~2-6 ms per candidate: ~0.1 s per generation of 24
  SearchOptions o;
  o.population = 24;
  o.generations = 50;
  o.budget_s = 0.35;
  const auto t0 = std::chrono::steady_clock::now();
  SearchState s = run_search(g, ev, o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(s.history.size(), 1u);
  EXPECT_LT(s.history.size(), 50u);
  EXPECT_LT(wall, 0.35 + 0.5) << "ran past the budget by more than a generation";
}

// Minimize measures only cases the variant may run: a class whose cases all lie outside the genome's
// constraints is refused with the reason (before: "the input genome fails on case ..." when the
// 1080p probe had more disparities than a uchar-output stereo genome allows).
TEST(GiMinimize, ProbeCasesOutsideTheConstraintsAreNotUsed) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  FakeEvaluator ev(*p);
  const Genome x = parse_genome(g, "BLOCK_W=256");
  MinimizeOptions mo;
  mo.noise_samples = 2;
  mo.constraints = {"n <= 2000000"};
  mo.cases = {{"large", 11}};
  try {
    minimize(g, ev, x, mo);
    ADD_FAILURE() << "minimize ran a large case outside n <= 2000000";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no case of class large within the genome's constraints"), std::string::npos)
        << e.what();
  }
  ev.cases.clear();  // the set_case calls of the refused attempt
  mo.cases = {{"small", 11}};
  const MinimizeResult r = minimize(g, ev, x, mo);
  for (const auto& c : ev.cases) EXPECT_EQ(c.substr(0, 5), "small") << c;
  ASSERT_EQ(r.case_base_ms.size(), 1u);
  EXPECT_GT(r.case_base_ms[0], 0.0);
}

// Validate per class: cases outside the variant's constraints are skipped, not failed.
TEST(GiValidate, PerClassWithConstraintsAndPenalties) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  FakeEvaluator ev(*p);
  const std::string del = "<" + K(g, "_K_", "scratch[i] = acc;") + ">";
  Genome good = parse_genome(g, "BLOCK_W=256 " + del), pre = parse_genome(g, "BLOCK_W=256");
  ValidateOptions vo;
  vo.cases = 4;
  vo.size_class = "small";
  ValidateResult r = validate(g, ev, good, &pre, vo);
  EXPECT_TRUE(r.blessed) << r.reason;
  EXPECT_EQ(r.size_class, "small");
  EXPECT_EQ(r.run, 4);
  EXPECT_GT(r.speedup_pretuned_median, 1.0);
  EXPECT_TRUE(r.beats_pretuned);
  for (const auto& c : r.cases) EXPECT_EQ(c.describe.find("fake small case"), 0u) << c.describe;
  for (const auto& c : ev.cases) EXPECT_EQ(c.substr(0, 7), "small/h") << c;  // hold-out cases only
  // the validated line of docs/FORMATS.md
  const std::string line = validated_line(r);
  EXPECT_EQ(line.rfind("small cases=4 speedup=", 0), 0u) << line;
  EXPECT_NE(line.find(" pretuned="), std::string::npos) << line;
  EXPECT_NE(line.find(" max_error=0"), std::string::npos) << line;
  // a constraint the class's cases violate: every case skipped, the class is not applicable
  vo.constraints = {"n <= 1000"};
  r = validate(g, ev, good, &pre, vo);
  EXPECT_EQ(r.skipped, 4);
  EXPECT_EQ(r.run, 0);
  EXPECT_FALSE(r.applicable);
  EXPECT_FALSE(r.blessed);
  // one that only the large class violates
  vo.constraints = {"n <= 2000000"};
  EXPECT_TRUE(validate(g, ev, good, &pre, vo).blessed);
  vo.size_class = "large";
  EXPECT_FALSE(validate(g, ev, good, &pre, vo).applicable);
  // a wrong answer is refused with its penalty
  vo.constraints.clear();
  Genome bad = parse_genome(g, "<" + K(g, "IF_K_", "if (acc > limit)") + ">");
  r = validate(g, ev, bad, &pre, vo);
  EXPECT_FALSE(r.blessed);
  EXPECT_TRUE(r.applicable);
  EXPECT_EQ(r.max_penalty, 100);
  EXPECT_NE(r.reason.find("penalty"), std::string::npos) << r.reason;
}

// Validation checks 24 more launches per kernel and case (TimingSpec::race_checks), so a race that
// shows on one launch in dozens is caught; the search's own runs keep the first-and-last check.
TEST(GiValidate, ChecksMoreLaunchesOfEveryKernel) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  class Recording : public FakeEvaluator {
   public:
    using FakeEvaluator::FakeEvaluator;
    RunResult run(const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout) override {
      (t.race_checks >= 24 ? every : not_every)++;
      return FakeEvaluator::run(c, cfg, t, timeout);
    }
    int every = 0, not_every = 0;
  } ev(*p);
  Genome pre = parse_genome(g, "BLOCK_W=256");
  ValidateOptions vo;
  vo.cases = 3;
  vo.size_class = "small";
  ASSERT_TRUE(validate(g, ev, pre, &pre, vo).applicable);
  EXPECT_EQ(ev.every, 9);  // original, pre-tuned and evolved on each of 3 cases
  EXPECT_EQ(ev.not_every, 0);
}

// A fake whose genes help on one class only: minimize over both classes keeps what helps anywhere.
class ClassFake : public FakeEvaluator {
 public:
  using FakeEvaluator::FakeEvaluator;
  RunResult run(const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout) override {
    RunResult r = FakeEvaluator::run(c, cfg, t, timeout);
    // BLOCK_W=256 helps only on the large class (5%); on the small class it costs 10%
    if (class_ == "small" && cfg.at("BLOCK_W") == "256") r.median_ms = (r.median_ms + 0.25 * 0.05 * speed_) * 1.1;
    return r;
  }
};

TEST(GiMinimize, OverSeveralClassesKeepsGenesThatHelpAnywhere) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  const std::string del = "<" + K(g, "_K_", "scratch[i] = acc;") + ">";
  const std::string pragma = "<" + K(g, "pragma_K_", "for (int k") + "><pragma_K3>";
  Genome x = parse_genome(g, "BLOCK_W=256 " + del + " " + pragma);
  ClassFake ev(*p);
  MinimizeOptions mo;
  mo.noise_samples = 2;
  mo.min_noise_fraction = 0.001;  // the fake has no noise: a deleted line's 1% counts
  mo.cases = {{"large", 7777}, {"small", 7777}};
  MinimizeResult r = minimize(g, ev, x, mo);
  // the pragma changes no code (the fake ignores pragmas): removed; the deletion helps on both
  // classes: kept; BLOCK_W=256 helps on large only: kept
  EXPECT_EQ(format_genome(g, r.output), "BLOCK_W=256 " + del);
  ASSERT_EQ(r.case_base_ms.size(), 2u);
  EXPECT_LT(r.case_base_ms[1], r.case_base_ms[0]);
  // on the small class alone, BLOCK_W=256 goes
  mo.cases = {{"small", 7777}};
  EXPECT_EQ(minimize(g, ev, x, mo).output.config.at("BLOCK_W"), "128");
}

TEST(GiTune, OverSeveralClassesUsesTheGeometricMean) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  ClassFake ev(*p);
  TuneOptions to;
  to.options = false;
  to.cases = {{"large", 7778}};
  EXPECT_EQ(tune(g, ev, empty_genome(g), to).output.config.at("BLOCK_W"), "256");
  to.cases = {{"small", 7778}};
  EXPECT_NE(tune(g, ev, empty_genome(g), to).output.config.at("BLOCK_W"), "256");
  // both: 256 is 5% faster on large and 10% slower on small, so its geometric mean is worse
  to.cases = {{"large", 7778}, {"small", 7778}};
  TuneResult r = tune(g, ev, empty_genome(g), to);
  EXPECT_NE(r.output.config.at("BLOCK_W"), "256");
  for (const auto& e : r.table) {
    if (e.status == "ok" && e.config.at("BLOCK_W") == "256" && e.config.at("USE_SHARED") == "false") {
      EXPECT_NEAR(e.score, std::sqrt(0.95 * 1.1), 1e-3);
    }
  }
}

// A problem around the toy with a constraint per config (USE_SHARED=true -> n <= 2000000) and a
// fake evaluator factory: the whole `gi evolve` pipeline on the CPU.
class ConstrainedToy : public Problem {
 public:
  ConstrainedToy() : toy_(testing::make_toy_problem()) {}
  std::string name() const override { return "toy"; }
  std::string kernel_source() const override { return toy_->kernel_source(); }
  std::string kernel_entry() const override { return toy_->kernel_entry(); }
  std::vector<ConfigParam> config_params() const override { return toy_->config_params(); }
  std::vector<std::string> compile_options(const Config& c) const override { return toy_->compile_options(c); }
  std::unique_ptr<Evaluation> make_evaluation(std::uint64_t s, bool h, const std::string& c) const override {
    return toy_->make_evaluation(s, h, c);
  }
  int default_population() const override { return 40; }
  int default_generations() const override { return 5; }
  std::string launch_bounds_threads() const override { return "BLOCK_W"; }
  std::vector<SizeClass> size_classes() const override { return toy_->size_classes(); }
  std::vector<std::string> property_names() const override { return {"n"}; }
  std::vector<std::string> constraints(const Config& c) const override {
    if (c.at("USE_SHARED") == "true") return {"n <= 2000000"};
    return {};
  }

 private:
  std::unique_ptr<Problem> toy_;
};

TEST(GiEvolve, PipelineOnFakesInstallsWhatBeatsThePretunedOriginal) {
  ConstrainedToy p;
  Grammar g = make_grammar(p);
  evk::testing::TempDir dir;
  std::vector<std::pair<bool, int>> made;
  EvaluatorFactory factory = [&](bool search, int keep) -> std::unique_ptr<Evaluator> {
    made.emplace_back(search, keep);
    if (!search) return std::make_unique<FakeEvaluator>(p);
    std::vector<std::unique_ptr<Evaluator>> lanes;
    lanes.push_back(std::make_unique<FakeEvaluator>(p, 1.0));
    lanes.push_back(std::make_unique<FakeEvaluator>(p, 1.5));
    return make_lane_evaluator(std::move(lanes));
  };
  EvolveOptions o;
  o.budget_s = 60;
  o.population = 16;
  o.generations = 4;
  o.cases = 3;
  o.work_dir = dir.path().string();
  o.minimize.noise_samples = 2;
  o.minimize.min_noise_fraction = 0.001;  // the fake has no noise: a deleted line's 1% counts
  o.min_gain = 0.005;
  o.tune.options = false;
  std::vector<std::string> stages;
  EvolveResult r = evolve(p, g, factory, o, [&](const EvolveProgress& e) {
    if (stages.empty() || stages.back() != e.stage) stages.push_back(e.stage);
    EXPECT_EQ(e.budget_s, 60);
  });
  ASSERT_EQ(made.size(), 2u);
  EXPECT_TRUE(made[0].first);
  EXPECT_FALSE(made[1].first);
  EXPECT_GE(made[1].second, 2);  // a probe case per class stays resident
  EXPECT_EQ(r.generations, 4);
  EXPECT_EQ(r.population, 16);
  const std::vector<std::string> want = {"search", "minimize", "tune original (large)", "tune evolved (large)",
                                         "validate (large)", "tune original (small)", "tune evolved (small)",
                                         "validate (small)", "done"};
  EXPECT_EQ(stages, want);
  ASSERT_EQ(r.classes.size(), 2u);
  for (const auto& c : r.classes) {
    EXPECT_EQ(c.pretuned.config.at("BLOCK_W"), "256") << c.size_class;  // the fake's fastest launch
    EXPECT_TRUE(c.validation.blessed) << c.validation.reason;
    EXPECT_EQ(c.validation.run, 3);
    EXPECT_TRUE(c.wins) << c.size_class << " " << c.validation.speedup_pretuned_median;
  }
  ASSERT_FALSE(r.variants.empty()) << r.refusal;
  std::set<std::string> won;
  for (const auto& v : r.variants)
    for (const auto& c : v.classes) won.insert(c);
  EXPECT_EQ(won, (std::set<std::string>{"large", "small"}));
  for (const char* f : {"best.genome", "min.genome", "pretuned-large.genome", "evolved-small.genome", "run/config.json",
                        "run/checkpoint.json", "run/report.md"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  // the file to install: docs/FORMATS.md header
  const std::string file = variant_file(p, {"NVIDIA H200", 90, 132, 1980000, 0, 2, "580.159.04", "13.0"}, r,
                                        r.variants[0], "evolved-test", 1);
  const auto h = genome_header(file);
  std::map<std::string, std::vector<std::string>> keys;
  for (const auto& [k, v] : h) keys[k].push_back(v);
  EXPECT_EQ(keys["kernel"], std::vector<std::string>{"toy"});
  EXPECT_EQ(keys["cc"], std::vector<std::string>{"9.0"});
  EXPECT_EQ(keys["device"], std::vector<std::string>{"NVIDIA H200"});
  EXPECT_EQ(keys["driver"], std::vector<std::string>{"580.159.04"});
  EXPECT_EQ(keys["population"], std::vector<std::string>{"16"});
  EXPECT_EQ(keys["generations"], std::vector<std::string>{"4"});
  for (const char* k : {"cuda", "nvrtc", "date", "seed", "search_wall_s", "classes", "source"})
    EXPECT_EQ(keys[k].size(), 1u) << k;
  EXPECT_EQ(keys["validated"].size(), r.variants[0].validated.size());
  EXPECT_FALSE(keys["validated"].empty());
  EXPECT_EQ(file.rfind("# evokernels genome v1\n", 0), 0u);
  EXPECT_NO_THROW(parse_genome(g, file));
  if (r.variants[0].genome.config.at("USE_SHARED") == "true") {
    EXPECT_EQ(keys["requires"], std::vector<std::string>{"n <= 2000000"});
  } else {
    EXPECT_TRUE(keys["requires"].empty());
  }
}

TEST(GiEvolve, RefusesWhenNothingBeatsThePretunedOriginal) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  // a fake where no edit changes the time: only the launch configuration matters
  class Flat : public FakeEvaluator {
   public:
    using FakeEvaluator::FakeEvaluator;
    RunResult run(const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout) override {
      RunResult r = FakeEvaluator::run(c, cfg, t, timeout);
      if (r.check.penalty == 0) r.median_ms = (cfg.at("BLOCK_W") == "256" ? 0.9 : 1.0) * (class_ == "small" ? 0.25 : 1.0);
      return r;
    }
  };
  EvaluatorFactory factory = [&](bool, int) -> std::unique_ptr<Evaluator> { return std::make_unique<Flat>(*p); };
  EvolveOptions o;
  o.population = 12;
  o.generations = 2;
  o.cases = 2;
  o.minimize.noise_samples = 2;
  o.tune.options = false;
  EvolveResult r = evolve(*p, g, factory, o);
  EXPECT_TRUE(r.variants.empty());
  EXPECT_NE(r.refusal.find("beats the pre-tuned original in no size class"), std::string::npos) << r.refusal;
  EXPECT_NE(r.refusal.find("large: "), std::string::npos) << r.refusal;
}

TEST(GiEvolve, SizeFollowsTheBudget) {
  auto p = testing::make_toy_problem();  // paper: 40 x 5
  EvolveOptions o;
  o.budget_s = 3600;
  EXPECT_EQ(evolve_size(*p, o, 1), std::make_pair(40, 5));
  o.budget_s = 10;  // 15 candidates/s x 5 s = 75 candidates: 20 per generation at least
  EXPECT_EQ(evolve_size(*p, o, 1), std::make_pair(20, 5));
  o.budget_s = 40;  // 300 candidates over 5 generations
  EXPECT_EQ(evolve_size(*p, o, 1).first, 40);
  o.budget_s = 20;
  EXPECT_EQ(evolve_size(*p, o, 1).first, 30);
  EXPECT_EQ(evolve_size(*p, o, 2).first, 40);  // two GPUs evaluate twice as many
  o.population = 7;
  EXPECT_EQ(evolve_size(*p, o, 1).first, 7);
}

}  // namespace
}  // namespace evk::gi
