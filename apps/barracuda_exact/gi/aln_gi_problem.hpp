// The inexact kernel as barracuda_exact's second problem for the GI engine ("barracuda_inexact"):
// its limits and launch shape as the fixed part, reads with sequencing errors sampled per seed from
// the generated GI reference, the CPU search's hit lists as the oracle, and the paper's k/l
// penalty rules extended to hit lists.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/aln_search.hpp"
#include "core/match.hpp"
#include "evk/gi/problem.hpp"

namespace evk::barracuda_exact {

std::unique_ptr<evk::gi::Problem> make_inexact_gi_problem();

// The inexact kernel's configuration (BLOCK_W, STACK_CAP, THREADS_PER_SM) with every parameter
// present, defaults filled in; InputError for an unknown parameter or an illegal value.
gi::Config validate_inexact_config(const gi::Config& in);

// The size class of a map job for the inexact kernel: "adna" when the seed is off (-l longer than
// any read the kernel takes, as aDNA pipelines' -l 1024), else "ecoli".
std::string inexact_size_class(int seed_len);

// Reads with errors from the GI reference (gi_reference_index(), deterministic per seed; training
// and hold-out from different streams): 100 bp mostly, 10% 36..250 bp, 2% 251..300 bp (over the
// kernel's MAX_LEN), both strands, 0..5 substitutions, 12% with a 1-3 bp insertion or deletion, 3%
// with N, 4% random, a share from repeats.
ReadCodes inexact_gi_reads(std::uint64_t seed, bool holdout, std::size_t n);

// The penalty of one read's hit list against the reference's, the paper's rules (§2.7.1, as
// kl_penalty) applied interval by interval: a missing or extra interval costs 100, one with other
// differences or score 100, a shifted interval the distance rules; a read handed back costs 0 (the
// CPU answers it) but the share handed back is reported.
double hits_penalty(const Aln* ref, std::uint32_t n_ref, const Aln* got, std::uint32_t n_got);

}  // namespace evk::barracuda_exact
