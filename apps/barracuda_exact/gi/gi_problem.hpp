// The exact-match kernel as a problem for the GI engine (gi/include/evk/gi/problem.hpp): the paper's
// 15 fixed parameters, reads sampled per seed (a multiple of the GPU's SM count), the CPU (k, l) as
// reference, the penalties of §2.7.1, and two size classes: `ecoli`, a generated 4.6 Mbp reference
// indexed in-process (its occurrence table fits in L2), and `large`, a random BWT of 1 G rows (a
// 500 Mbp reference: a 500 MB occurrence table, far larger than L2) with planted repeats, whose reads
// are walks of the LF mapping (a real 500 Mbp index takes minutes to build; backward search over any
// BWT string is a valid workload, and (k, l) is checked against the CPU on the same index).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/index.hpp"
#include "core/match.hpp"
#include "evk/gi/problem.hpp"

namespace evk::barracuda_exact {

std::unique_ptr<evk::gi::Problem> make_gi_problem();

// The paper's penalty (§2.7.1) for one read: reference (k, l) vs candidate (k', l'). Extension: a
// repeat reported with the right count but a shifted interval costs the distance penalties (capped
// at 10 each), so every read is penalty-free only when answered identically, except that on a read
// with an ambiguous base (reference k = 0) only k = 0 is checked: l is undefined there (as in the
// paper; the pipeline ignores it).
double kl_penalty(const KL& ref, const KL& got);

// The training/hold-out material (deterministic): a generated ~4.6 Mbp reference with repeats and
// an N run, and reads sampled from it (exact, repeated, with mismatches, with N, random).
const BwtIndex& gi_reference_index();
ReadCodes gi_sample_reads(std::uint64_t seed, bool holdout, std::size_t n);

// What case (seed, holdout) of a class is (CPU only). The index of a class is the same for every
// case; training and hold-out cases draw their reads from disjoint seed streams.
struct GiCaseSpec {
  std::string size_class;
  std::uint64_t seed = 0;
  bool holdout = false;
  std::uint64_t read_seed = 0;  // 2 seed (training) or 2 seed + 1 (hold-out)
};
GiCaseSpec gi_case_spec(std::uint64_t seed, bool holdout, const std::string& size_class);  // InputError: unknown class

// A random BWT string in bwa's layout with occurrence tables (deterministic per seed, any thread
// count), and chains of rows along the LF mapping planted so that their walk occurs `copies` times.
struct RandomBwtOptions {
  std::uint64_t seq_len = 1u << 20;  // BWT rows without '$' (2 x the reference length)
  std::uint64_t seed = 1;
  int chains = 2048, chain_len = 256, max_copies = 4;
};
struct RandomBwt {
  BwtIndex idx;  // occ, L2, primary, seq_len, l_pac = seq_len / 2 (no sa, pac or contigs)
  struct Chain {
    std::uint64_t row = 0;  // first row of the walk
    int length = 0;         // steps planted (reads of up to this length from it are repeats)
    int copies = 2;
  };
  std::vector<Chain> chains;
};
RandomBwt make_random_bwt(const RandomBwtOptions& o);
// The base (0..3) of BWT row `row`, -1 for the '$' row; and the LF mapping of a row with base c.
int bwt_row_char(const BwtIndex& idx, std::uint64_t row);
std::uint64_t bwt_lf(const BwtIndex& idx, std::uint64_t row, int c);
// The `large` class's index: 1,000,000,000 rows, built once per process (~0.5 GB).
inline constexpr std::uint64_t kLargeSeqLen = 1000000000ull, kLargeSeed = 20151108;
const RandomBwt& gi_large_index();
// n reads of the paper's mix from LF walks: 90% walks (10% of them along planted repeat chains; 5%
// with an N, 15% with 1-3 substitutions), 10% random; length 100, one in ten 36..250.
ReadCodes gi_sample_walk_reads(const RandomBwt& rb, std::uint64_t read_seed, std::size_t n);

}  // namespace evk::barracuda_exact
