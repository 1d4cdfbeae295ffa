// Sequence edits shared by the genome and read simulators. Bases are ASCII; lower case (soft mask)
// is kept by every edit, N stays N.
#pragma once
#include <cstddef>
#include <string>

#include "sim_rng.hpp"

namespace evk::sim {

char seq_complement(char c);
void seq_revcomp(std::string& s);
void seq_revcomp(char* s, std::size_t n);
// Appends n bases drawn with probabilities comp[A, C, G, T].
void seq_random(std::string& out, std::size_t n, const double comp[4], SimRng& rng);
// Appends n bases of GC share gc (C = G, A = T), four bases per 64-bit draw.
void seq_background(std::string& out, std::size_t n, double gc, SimRng& rng);
// Each CpG of s[0, n) becomes TpG or CpA with probability p (methyl-C deamination: the human
// genome's CpG deficit, and the fast decay of the CpGs in old repeat copies).
void seq_cpg_decay(char* s, std::size_t n, double p, SimRng& rng);
// Mutates s at `div` events per base: 90% substitutions (transitions : transversions = 2 : 1),
// 5% deletions and 5% insertions of 1-4 bases.
void seq_mutate(std::string& s, double div, SimRng& rng);
// Substitutions only, `div` per base.
void seq_substitute(std::string& s, double div, SimRng& rng);
// Appends copies of `unit`, each mutated at copy_div, until len bases were added (the last cut).
void seq_tandem(std::string& out, const std::string& unit, std::size_t len, double copy_div, SimRng& rng);

}  // namespace evk::sim
