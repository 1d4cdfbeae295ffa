// The serial oracles of `map`'s driver (map/map_run.hpp), test support only: the same options, one
// batch at a time, no worker threads, kseq's reader (io/sequences' ReadSource) and sam_write1
// record by record.
//   serial_map      single end through the product's mappers (exact or inexact, CPU or GPU with one
//                   lane); pairs through serial_aln_map
//   serial_aln_map  the inexact mode straight from core/ (bwa aln's search on the CPU or one GPU,
//                   then samse_batch or sampe_batch) and io/aln_sam's writer: single end or pairs
#pragma once
#include <cstdint>
#include <functional>

#include "map/map_options.hpp"
#include "map/mapper.hpp"

namespace bct {

namespace bcx = evk::barracuda_exact;

// Mapper hook of the tests: poisons an exact or inexact mapper's GPU outputs before each launch
// (the driver must overwrite every element it uses).
void poison_gpu(bcx::Mapper& m);

// The serial driver; poison: the GPU outputs poisoned (poison_gpu).
bcx::MapStats serial_map(const bcx::MapOptions& opt, bool poison = false,
                         const std::function<void(std::uint64_t)>& progress = {});

struct AlnMapStats {
  std::uint64_t reads = 0, pairs = 0;
  std::uint64_t unique = 0, repeat = 0, unmapped = 0, gapped = 0, mate_rescued = 0, proper_pairs = 0;
  std::uint64_t by_diff[8] = {};  // mapped reads by edit distance (NM) 0..6, 7+
  std::uint64_t gpu_fallback = 0;  // reads the GPU handed back to the CPU (stack or hit list full)
  double index_s = 0, parse_s = 0, search_s = 0, kernel_s = 0, transfer_s = 0, fallback_s = 0, sam_s = 0, write_s = 0,
         total_s = 0;
};

// The inexact mode (opt.inexact is implied): reads2 empty, bwa aln + samse; else bwa aln + sampe.
// Batches of opt.batch_reads reads (pairs), default bwa's kSampeBatch; the GPU: opt.gpus' first.
AlnMapStats serial_aln_map(const bcx::MapOptions& opt, const std::function<void(std::uint64_t)>& progress = {});

}  // namespace bct
