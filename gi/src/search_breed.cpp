// Breeding: children by mutation and crossover of the parents, random single mutants where they are
// missing, every child new to the genotypic tabu list.
#include <random>

#include "search_engine.hpp"

namespace evk::gi::detail {

bool Search::unique_push(std::vector<Genome>& out, Genome c, GenerationStats& st) {
  if (is_empty(g_, c)) return false;
  auto h = genome_hash(g_, c);
  if (s_.tabu_genotype.count(h)) {
    ++st.tabu_genotype;
    return false;
  }
  s_.tabu_genotype.insert(h);
  out.push_back(std::move(c));
  return true;
}

// a new child: mutation of a random parent, else a random single mutant
bool Search::fresh_into(std::vector<Genome>& out, GenerationStats& st, int tries) {
  Genome base = empty_genome(g_);
  for (int t = 0; t < tries; ++t) {
    const Genome& p = parents_.empty() ? base : parents_[std::uniform_int_distribution<std::size_t>(0, parents_.size() - 1)(rng_)];
    if (unique_push(out, mutate(g_, p, rng_), st)) return true;
  }
  return false;
}

// Small grammars run out of unique single mutants: fill up with mutants of the children so far.
void Search::fill_from(std::vector<Genome>& kids, GenerationStats& st) {
  for (int t = 0; t < 20 * o_.population && !kids.empty() && static_cast<int>(kids.size()) < o_.population; ++t) {
    Genome b = kids[std::uniform_int_distribution<std::size_t>(0, kids.size() - 1)(rng_)];
    unique_push(kids, mutate(g_, b, rng_), st);
  }
}

// Generation 0: unique random single mutants.
std::vector<Genome> Search::first_generation(GenerationStats& st) {
  std::vector<Genome> kids;
  parents_.clear();
  while (static_cast<int>(kids.size()) < o_.population && fresh_into(kids, st, 200)) {
  }
  fill_from(kids, st);
  return kids;
}

std::vector<Genome> Search::breed(GenerationStats& st) {
  const auto& prev = s_.population;
  double ref = s_.history.empty() ? 0 : s_.history.back().ref_ms;
  auto idx = select_parents(prev, ref, o_.tolerance, o_.population / 2);
  parents_.clear();
  for (int i : idx) parents_.push_back(prev[i].genome);
  std::vector<Genome> kids;
  std::uniform_int_distribution<std::size_t> any(0, parents_.empty() ? 0 : parents_.size() - 1);
  for (const auto& p : parents_) {
    bool ok = false;
    for (int t = 0; t < 10 && !ok; ++t) ok = unique_push(kids, mutate(g_, p, rng_), st);
    ok = false;
    for (int t = 0; t < 5 && !ok; ++t) ok = unique_push(kids, crossover(p, parents_[any(rng_)], rng_), st);
    for (int t = 0; t < 10 && !ok; ++t) ok = unique_push(kids, mutate(g_, p, rng_), st);
  }
  std::vector<Genome> keep = parents_;
  parents_.clear();  // missing children: random single mutants
  while (static_cast<int>(kids.size()) < o_.population && fresh_into(kids, st, 200)) {
  }
  parents_ = keep;
  fill_from(kids, st);
  if (static_cast<int>(kids.size()) > o_.population) kids.resize(o_.population);
  return kids;
}

}  // namespace evk::gi::detail
