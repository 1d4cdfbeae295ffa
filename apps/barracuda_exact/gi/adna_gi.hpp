// The inexact GI problem's `adna` size class: the workload of ancient-DNA labs. Reads made by the
// aDNA model (sim/adna.hpp: log-normal lengths around 45 bp, C->T / G->A deamination at the ends,
// sequencing errors, 10% contaminants) from a 100 Mbp cut of the human-like genome (sim/
// genome_model.hpp: isochores, N gaps, satellites, SINE/LINE-like families, segmental
// duplications), searched with the settings aDNA pipelines pass to bwa aln: -l 1024 (no seed)
// -n 0.01 -o 2. The index of the cut (two strands, ~200 M BWT rows) is several times the L2 of
// the GPUs the shipped kernels were tuned on, as a human index is.
#pragma once
#include <cstdint>
#include <vector>

#include "core/aln_options.hpp"
#include "core/index.hpp"
#include "core/match.hpp"

namespace evk::barracuda_exact {

constexpr std::uint64_t kAdnaGiBases = 100000000;  // the cut's size
constexpr std::uint64_t kAdnaGiGenomeSeed = 41;

// The human-like genome of `bases` bases (24 contigs scaled from GRCh38's lengths), contigs made
// in parallel; deterministic per seed.
std::vector<RefSeq> adna_gi_genome(std::uint64_t bases, std::uint64_t seed);

// n aDNA reads from `ref` (deterministic per seed; hold-out reads come from another stream).
ReadCodes adna_gi_reads(const std::vector<RefSeq>& ref, std::uint64_t seed, bool holdout, std::size_t n);

// bwa aln -l 1024 -n 0.01 -o 2 (the rest bwa's defaults).
AlnOptions adna_gi_options();

struct AdnaGiMaterial {
  std::vector<RefSeq> ref;
  BwtIndex idx;
};
// The class's genome (kAdnaGiBases, kAdnaGiGenomeSeed) and its index, made once per process; the
// suffix sort runs on the current GPU where the build has CUDA and one is present.
const AdnaGiMaterial& adna_gi_material();

}  // namespace evk::barracuda_exact
