// The search's engine (internal to evk_gi), one job per file: search.cpp (the generation loop and
// selection), search_breed.cpp (children, genotypic tabu), search_evaluate.cpp (compile and run
// the children on every lane, phenotypic tabu), search_logs.cpp (candidates.jsonl, failures.log).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "evk/gi/search.hpp"

namespace evk::gi::detail {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A config's contribution to the tier-2 (compiled code) tabu key.
std::uint64_t config_hash(const Config& c);

class Search {
 public:
  Search(const Grammar& g, Evaluator& ev, const SearchOptions& o) : g_(g), ev_(ev), o_(o) {}
  SearchState run(const GenerationCallback& cb);

 private:
  struct Batch;  // one generation's candidates while they are evaluated (search_evaluate.cpp)

  // search.cpp
  void start();                                       // fresh or resumed state, the reference compiled
  GenerationStats generation(int gen);                // breed, re-time the reference, evaluate, select
  void time_reference(GenerationStats& st);           // the training case's reference on every lane
  void score(GenerationStats& st, const std::vector<Individual>& pop);  // statistics of a generation
  // search_breed.cpp
  bool unique_push(std::vector<Genome>& out, Genome c, GenerationStats& st);
  bool fresh_into(std::vector<Genome>& out, GenerationStats& st, int tries);
  void fill_from(std::vector<Genome>& kids, GenerationStats& st);
  std::vector<Genome> first_generation(GenerationStats& st);
  std::vector<Genome> breed(GenerationStats& st);
  // search_evaluate.cpp
  std::vector<Individual> evaluate(std::vector<Genome>& kids, GenerationStats& st);
  std::vector<std::size_t> phenotype_round(Batch& b, std::vector<Genome>& kids, const std::vector<std::size_t>& pending,
                                           GenerationStats& st);
  std::vector<std::size_t> compile_round(Batch& b, std::vector<Genome>& kids, const std::vector<std::size_t>& to_compile,
                                         bool last, GenerationStats& st);
  void run_candidate(Batch& b, std::size_t i, int lane, double ref_ms);
  // search_logs.cpp
  void drop_logs_from(int gen);
  void write_failures(const GenerationStats& st);

  const Grammar& g_;
  Evaluator& ev_;
  SearchOptions o_;
  SearchState s_;
  Rng rng_;
  std::vector<Genome> parents_;
  std::vector<Compiled> ref_compiled_;
  Config ref_cfg_;
};

}  // namespace evk::gi::detail
