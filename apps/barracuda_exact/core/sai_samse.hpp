// bwa samse's reading of a read's alignments (bwa 0.7.17 bwa_aln2seq_core + bwa_cal_pac_pos), for
// alignments in SA coordinates as a .sai file holds them: the primary occurrence drawn with bwa's
// drand48 sequence (so the choice among a repeat's occurrences is bwa's own), the best and
// second-best counts, the strand/position through the sampled SA, and the XA list of the other
// occurrences when there are at most n_occ + 1. Exact alignments only (no mismatches or gaps: their
// CIGAR/MD need the inexact work); InputError otherwise.
#pragma once
#include <cstdint>
#include <vector>

#include "core/hits.hpp"
#include "core/index.hpp"
#include "core/rand48.hpp"

namespace evk::barracuda_exact {

// One alignment of a read: SA interval [k, l] and its differences (bwa's bwt_aln1_t).
struct SaiAln {
  std::uint64_t k = 0, l = 0;
  std::uint32_t n_mm = 0, n_gapo = 0, n_gape = 0, score = 0, n_ins = 0, n_del = 0;
  bool exact() const { return n_mm == 0 && n_gapo == 0 && n_gape == 0 && n_ins == 0 && n_del == 0; }
  bool operator==(const SaiAln&) const = default;
};

// The alignment bwa aln -n 0 writes for an exact-match interval (none when kl has no hit).
std::vector<SaiAln> exact_alns(const KL& kl);

// bwa samse's hit for a read of length len with these alignments; rng is the run's one drand48
// stream (seeded with the index's seed, consumed read by read in input order).
Hit samse_hit(const BwtIndex& idx, const std::vector<SaiAln>& alns, std::uint32_t len, Rand48& rng, int n_occ = 3);

}  // namespace evk::barracuda_exact
