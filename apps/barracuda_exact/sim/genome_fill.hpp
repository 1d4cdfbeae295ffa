// Filling one contig left to right (genome_fill.cpp): euchromatin as an alternation of isochore
// background and elements (repeat copies, tandem repeats, islands, duplications, gaps) drawn at
// rates that make each kind cover its kKindShare; centromeric alpha-satellite HOR arrays; N runs.
#pragma once
#include <cstdint>
#include <string>

#include "genome_model.hpp"

namespace evk::sim {

struct Fill {
  Fill(const GenomeModel& model, std::uint64_t seed, std::string& out, ContigStats& stats, std::uint64_t contig_length,
       bool pool_mode)
      : m(model), rng(seed), seq(out), st(stats), contig_len(contig_length), pool(pool_mode) {}
  const GenomeModel& m;
  SimRng rng;
  std::string& seq;
  ContigStats& st;
  std::uint64_t contig_len;
  bool pool;  // building the duplication pool: no duplications, no gaps
  double gc = 0.41, gc_drawn = 0.45;  // the isochore's GC share; drawn before the CpG decay
  std::uint64_t iso_left = 0;  // bases left in the current isochore
  double prob[kKinds] = {};    // probability of each kind per element
  double bg_mean = 300;        // mean background stretch between elements
  std::string tmp;
};

void fill_euchromatin(Fill& f, std::uint64_t len);
void fill_n(Fill& f, std::uint64_t len);
void fill_alpha_hor(Fill& f, std::uint64_t len);
// An element length of a kind not made from a family (simple .. gap), capped by the contig's length.
std::size_t kind_length(Kind k, SimRng& rng, std::uint64_t contig_len);

}  // namespace evk::sim
