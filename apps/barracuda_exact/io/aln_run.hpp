// `barracuda_exact map` in its default (inexact) mode: reads -> bwa aln's search -> bwa samse's or
// sampe's records -> SAM/BAM. Single end (one reads file) or paired (two files, pair by pair).
// The work per batch lives in core/ (aln_search / aln_gpu, samse, sampe); this is the driver.
// One batch at a time (kseq, bwa's batches: map.batch_reads reads or pairs, default kSampeBatch),
// record by record through sam_write1: the serial reference of the streaming pipeline (map_run.hpp,
// which runs it for pairs with serial_io), which must give its bytes.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/aln_options.hpp"
#include "io/map_run.hpp"

namespace evk::barracuda_exact {

struct AlnMapOptions {
  MapOptions map;           // reference, reads, output, threads, GPU choice (the exact mode's options)
  std::string reads2;       // second reads file: paired mode
  AlnOptions aln;
  PeOptions pe;
  std::string read_group;   // -R, as typed (\t escaped)
};

struct AlnMapStats {
  std::uint64_t reads = 0, pairs = 0;
  std::uint64_t unique = 0, repeat = 0, unmapped = 0, gapped = 0, mate_rescued = 0, proper_pairs = 0;
  std::uint64_t by_diff[8] = {};  // mapped reads by edit distance (NM) 0..6, 7+
  std::uint64_t gpu_fallback = 0;  // reads the GPU handed back to the CPU (stack or hit list full)
  double index_s = 0, parse_s = 0, search_s = 0, kernel_s = 0, transfer_s = 0, fallback_s = 0, sam_s = 0, write_s = 0,
         total_s = 0;
};

// Throws InputError for bad inputs/outputs (including paired files that do not pair up);
// outputs only appear when everything succeeded.
AlnMapStats run_aln_map(const AlnMapOptions& opt, const std::function<void(std::uint64_t)>& progress = {});

}  // namespace evk::barracuda_exact
