// The exact-match kernel as a problem for the GI engine (gi/include/evk/gi/problem.hpp): the paper's
// 15 fixed parameters, training reads sampled per seed (a multiple of the GPU's SM count) from a
// generated reference indexed in-process, the CPU (k, l) as reference, the penalties of §2.7.1.
#pragma once
#include <cstdint>
#include <memory>
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

}  // namespace evk::barracuda_exact
