// Selection, tabu tiers and checkpoint/resume of the search, against a deterministic fake evaluator.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/post.hpp"
#include "evk/gi/search.hpp"
#include "evk_testing.hpp"
#include "fake_evaluator.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

using testing::FakeEvaluator;

Individual ind(double t, double pen, const std::string& status = "ok") {
  Individual i;
  i.status = status;
  i.time_ms = t;
  i.penalty = pen;
  i.fitness = t + pen;
  return i;
}

TEST(GiSelection, TruncationWithToleranceAndZeroPenalty) {
  std::vector<Individual> pop = {ind(1.05, 0), ind(0.9, 0), ind(1.10, 0), ind(1.11, 0), ind(0.5, 1),
                                 ind(0.4, 0, "crash"), ind(0.95, 0), ind(0.97, 0)};
  auto p = select_parents(pop, 1.0, 0.10, 4);
  EXPECT_EQ(p, (std::vector<int>{1, 6, 7, 0}));  // best first, at most 4
  auto all = select_parents(pop, 1.0, 0.10, 100);
  EXPECT_EQ(all.size(), 5u);  // 1.11 too slow, penalty, crash excluded; 1.10 is within 10%
  EXPECT_EQ(select_parents(pop, 1.0, 0.0, 100).size(), 3u);
}

TEST(GiTabu, PhenotypeTier1SeesThroughConditionalCompilation) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  Genome e = empty_genome(g);
  auto ph = [&](const Genome& x) {
    Variant v = apply(g, x);
    return phenotype_hash(v, p->compile_options(v.config));
  };
  int tile = 0, tap = 0;
  for (std::size_t i = 0; i < g.lines.size(); ++i) {
    if (g.lines[i].text.find("tile[j] = in[g];") != std::string::npos) tile = static_cast<int>(i) + 1;
    if (g.lines[i].text.find("acc += w[k + RADIUS] * in[g];") != std::string::npos) tap = static_cast<int>(i) + 1;
  }
  Genome hidden = parse_genome(g, "<_K_" + std::to_string(tile) + ">");  // inside #if USE_SHARED (off)
  Genome visible = parse_genome(g, "<_K_" + std::to_string(tap) + ">");
  EXPECT_EQ(ph(hidden), ph(e));
  EXPECT_NE(ph(visible), ph(e));
  hidden.config["USE_SHARED"] = "true";
  Genome shared = e;
  shared.config["USE_SHARED"] = "true";
  EXPECT_NE(ph(hidden), ph(shared));  // now the deleted line is compiled
  Genome comment_only = parse_genome(g, "BLOCK_W=256");
  EXPECT_NE(ph(comment_only), ph(e));
}

TEST(GiSearch, RunKeepsTabuAndNeverCompilesAPhenotypeTwice) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  FakeEvaluator ev(*p);
  SearchOptions o;
  o.population = 24;
  o.generations = 5;
  o.seed = 11;
  SearchState s = run_search(g, ev, o);
  ASSERT_EQ(s.history.size(), 5u);
  int code_hits = 0, geno_hits = 0, evaluated = 0;
  for (const auto& h : s.history) {
    EXPECT_EQ(h.evaluated, 24);
    code_hits += h.tabu_code;
    geno_hits += h.tabu_genotype;
    evaluated += h.evaluated;
    EXPECT_GT(h.parents, 0);
  }
  EXPECT_GT(code_hits, 0) << "pragma-only variants should hit the tier-2 tabu";
  // the genotypic tabu: children of the same parents repeat genomes, and every repeat is refused, so
  // no genome is evaluated twice in the run: the tabu list holds the original and every child
  // evaluated (more where tier 1 or 2 replaced a child), each once
  EXPECT_GT(geno_hits, 0) << "mutants of the same parents should hit the genotypic tabu";
  EXPECT_GE(s.tabu_genotype.size(), static_cast<std::size_t>(evaluated) + 1);
  std::set<std::string> seen;
  for (const auto& ph : ev.compiled_phenotypes) EXPECT_TRUE(seen.insert(ph).second) << "compiled twice:\n" << ph;
  std::set<std::string> texts;
  for (const auto& i : s.population) EXPECT_TRUE(texts.insert(i.text).second) << "duplicate genome " << i.text;
  EXPECT_GT(s.best_speedup, 1.0);
  EXPECT_FALSE(s.best_genome.empty());
}

// Compile results arriving out of order, from several threads, with delays (as NVRTC threads deliver
// them) give exactly the run that in-order batch compilation gives: the search runs candidates in
// their order whatever the arrival order, so runs stay reproducible.
class StreamingFake : public FakeEvaluator {
 public:
  using FakeEvaluator::FakeEvaluator;
  void compile_stream(const std::vector<Variant>& vs, const std::function<void(std::size_t, Compiled&&)>& done) override {
    auto r = compile(vs);
    ++streams;
    std::vector<std::thread> ts;
    for (int t = 0; t < 3; ++t)
      ts.emplace_back([&, t] {
        for (std::size_t k = r.size(); k-- > 0;)
          if (static_cast<int>(k % 3) == t) {
            if (k % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
            done(k, std::move(r[k]));
          }
      });
    for (auto& th : ts) th.join();
  }
  int streams = 0;
};

TEST(GiSearch, StreamedCompilesGiveTheSameRunAsOneBatch) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  SearchOptions o;
  o.population = 24;
  o.generations = 4;
  o.seed = 3;
  FakeEvaluator plain(*p);
  StreamingFake streamed(*p);
  SearchState a = run_search(g, streamed, o), b = run_search(g, plain, o);
  EXPECT_GE(streamed.streams, o.generations);  // the streaming path was taken
  ASSERT_EQ(a.population.size(), b.population.size());
  for (std::size_t i = 0; i < a.population.size(); ++i) {
    EXPECT_EQ(a.population[i].text, b.population[i].text);
    EXPECT_EQ(a.population[i].fitness, b.population[i].fitness);
  }
  ASSERT_EQ(a.history.size(), b.history.size());
  for (std::size_t i = 0; i < a.history.size(); ++i) {
    EXPECT_EQ(a.history[i].best_genome, b.history[i].best_genome);
    EXPECT_EQ(a.history[i].tabu_code, b.history[i].tabu_code);
    EXPECT_GE(a.history[i].wall_s, a.history[i].run_s);
  }
  EXPECT_EQ(a.tabu_code, b.tabu_code);
}

TEST(GiTune, CoversLaunchParametersThenEveryNvrtcOptionCombination) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  FakeEvaluator ev(*p);
  TuneResult r = tune(g, ev, empty_genome(g));
  std::size_t combos = 1;
  for (const auto& prm : g.option_params) {
    combos *= prm.values.size();
    EXPECT_NE(std::find(r.tuned.begin(), r.tuned.end(), prm.name), r.tuned.end()) << prm.name;
  }
  std::set<std::string> seen;
  for (const auto& e : r.table) {
    if (!e.config.count("nvrtc:maxrregcount")) continue;
    std::string k;
    for (const auto& prm : g.option_params) k += e.config.at(prm.name) + ";";
    if (k != "0;3;false;") {
      EXPECT_TRUE(seen.insert(k).second) << "tried twice: " << k;
    }
  }
  EXPECT_EQ(seen.size(), combos - 1);  // every combination but the starting point
  EXPECT_EQ(r.output.config.at("BLOCK_W"), "256");  // the fake's fastest launch configuration
}

TEST(GiSearch, ResumeFromCheckpointEqualsAnUninterruptedRun) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  evk::testing::TempDir a, b;
  SearchOptions o;
  o.population = 16;
  o.generations = 4;
  o.seed = 5;
  o.run_dir = a.path().string();
  FakeEvaluator ev1(*p);
  SearchState full = run_search(g, ev1, o);

  SearchOptions o2 = o;
  o2.run_dir = b.path().string();
  o2.generations = 2;
  FakeEvaluator ev2(*p);
  run_search(g, ev2, o2);
  EXPECT_TRUE(std::filesystem::exists(b / "checkpoint.json"));
  o2.generations = 4;
  o2.resume = true;
  FakeEvaluator ev3(*p);
  SearchState resumed = run_search(g, ev3, o2);

  ASSERT_EQ(full.population.size(), resumed.population.size());
  for (std::size_t i = 0; i < full.population.size(); ++i) {
    EXPECT_EQ(full.population[i].text, resumed.population[i].text);
    EXPECT_EQ(full.population[i].fitness, resumed.population[i].fitness);
  }
  EXPECT_EQ(full.tabu_genotype, resumed.tabu_genotype);
  EXPECT_EQ(full.tabu_phenotype, resumed.tabu_phenotype);
  EXPECT_EQ(full.tabu_code, resumed.tabu_code);
  EXPECT_EQ(full.best_genome, resumed.best_genome);
  EXPECT_EQ(full.rng, resumed.rng);
  EXPECT_EQ(resumed.history.size(), 4u);
  auto log = read_generation_log(b.path().string());
  EXPECT_EQ(log.size(), 4u);
  // the report is written from the log
  write_report(b.path().string());
  std::string md = read_text((b / "report.md").string());
  EXPECT_NE(md.find("| 3 |"), std::string::npos);
  EXPECT_NE(read_text((b / "fitness.svg").string()).find("<polyline"), std::string::npos);
}

// A run directory a person edited (or a fuzzer wrote): integer fields that are not integers of
// their type's range are bad input, not undefined behaviour (fuzz_checkpoint found 1.04e36 given
// for an int field); whole floats such as 3.0 are accepted.
TEST(GiSearch, OutOfRangeIntegersInARunDirectoryAreInputErrors) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  evk::testing::TempDir d;
  const auto put = [&](const char* f, const std::string& s) { write_text_atomic((d / f).string(), s); };
  for (const std::string bad : {"1.04e36", "-1e300", "2.5", "4294967296", "\"7\"", "true"}) {
    put("generations.jsonl", "{\"generation\": 0, \"evaluated\": " + bad + "}\n");
    EXPECT_THROW(read_generation_log(d.path().string()), evk::InputError) << bad;
    put("checkpoint.json", "{\"next_generation\": " + bad + ", \"population\": [], \"tabu\": {\"genotype\": [], "
        "\"phenotype\": [], \"code\": []}, \"best\": {}, \"history\": []}");
    EXPECT_THROW(load_checkpoint(d.path().string(), g), evk::InputError) << bad;
  }
  put("generations.jsonl", "{\"generation\": 3.0, \"case_seed\": 18446744073709551615, \"evaluated\": 7}\n");
  const auto log = read_generation_log(d.path().string());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].generation, 3);
  EXPECT_EQ(log[0].case_seed, 18446744073709551615ull);
  EXPECT_EQ(log[0].evaluated, 7);
}

}  // namespace
}  // namespace evk::gi
