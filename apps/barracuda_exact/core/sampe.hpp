// Paired-end records as `bwa sampe` 0.7.17 makes them (bwape.c; our own code): per batch of
// pairs, the single-end primaries (bwa's random draws, in pair order), the insert size inferred
// from the confidently mapped pairs (quartiles, outlier bounds, mean/std, the Bayesian maximum and
// the chimeric prior; the previous batch's when this one has too few pairs), the best pair among
// all hit combinations (orientation, insert-size likelihood, bwa's hash tie-break) with the proper
// pair flag and the paired MAPQ rules, XA lists, mate rescue by Smith-Waterman in the insert window
// of the unmapped or discordant end, then refinement, MD and the records with mate fields and TLEN.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "core/aln_options.hpp"
#include "core/aln_record.hpp"
#include "core/aln_search.hpp"
#include "core/samse.hpp"

namespace evk::barracuda_exact {

struct IsizeInfo {  // bwa's isize_info_t
  double avg = -1.0, std = -1.0, ap_prior = 0.0;
  std::uint64_t low = 0, high = 0, high_bayesian = 0;
};

struct SampeResult {
  std::vector<AlnRecord> rec1, rec2;
  IsizeInfo isize;              // this batch's estimate (pass it as `last` to the next batch)
  bool isize_inferred = false;  // false: too few good pairs (or weird) in this batch
  std::uint64_t changed = 0, rescued = 0;
};

// bwa's infer_isize over one batch (mapq and positions of both ends after the single-end step).
// Returns false when it fails; ii then holds avg = std = -1.
bool infer_isize(const std::vector<SeqAln>& e1, const std::vector<SeqAln>& e2, double ap_prior, std::int64_t l_pac,
                 IsizeInfo& ii);

// The paired pipeline over a batch of pairs (read i of r1 with read i of r2). Call batches in file
// order with one generator (seeded by idx.seed) and the previous batch's isize for bwa's exact
// output; bwa estimates the insert size per kSampeBatch pairs.
SampeResult sampe_batch(const BwtIndex& idx, const AlnReads& r1, const AlnReads& r2, const AlnBatch& a1,
                        const AlnBatch& a2, const AlnOptions& opt, const PeOptions& pe, Rand48& rng,
                        const IsizeInfo& last, int threads = 0);

// The same with its parallel steps run by `loop` (fn over chunks of [0, n): a task pool's loop), and
// the text positions of hit rows known in advance for each end (GpuHitRows::lookup's output for a1
// and a2, core/aln_positions.hpp; nullptr or empty: every position looked up on the host). The
// records do not depend on either.
using ChunkLoop = std::function<void(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn)>;
SampeResult sampe_batch(const BwtIndex& idx, const AlnReads& r1, const AlnReads& r2, const AlnBatch& a1,
                        const AlnBatch& a2, const AlnOptions& opt, const PeOptions& pe, Rand48& rng,
                        const IsizeInfo& last, const ChunkLoop& loop, const std::vector<std::uint64_t>* pos1,
                        const std::vector<std::uint64_t>* pos2);

}  // namespace evk::barracuda_exact
