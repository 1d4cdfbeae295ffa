// `barracuda_exact map`: reads -> exact matches -> SAM/BAM, as a three-stage pipeline (parsing,
// matching, writing in their own threads with two batches in flight between stages) so the GPU
// does not wait on I/O.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "evk/gi/problem.hpp"

namespace evk::barracuda_exact {

struct MapOptions {
  std::string ref;        // prefix of the index files (REF.fa)
  std::string reads;      // FASTQ/FASTA, plain or gzip, "-" = stdin
  std::string out;        // .sam, .bam or "-"
  std::string unmatched;  // optional FASTQ.gz of reads without an exact hit
  std::string command_line;
  int threads = 0;        // CPU threads (0 = all)
  bool gpu = false;
  int device = 0;
  gi::Config kernel_config;     // GPU kernel configuration (defaults when empty)
  std::string kernel_source;    // GPU kernel source (empty: the original; else an evolved variant's)
  std::size_t batch_reads = 1u << 18;
};

struct MapStats {
  std::uint64_t reads = 0, unique = 0, repeat = 0, unmatched = 0, bridging = 0;
  double index_s = 0, parse_s = 0, transfer_s = 0, kernel_s = 0, match_s = 0, lookup_s = 0, write_s = 0, total_s = 0;
  std::string kernel_origin;  // GPU: "embedded fatbin", "embedded fatbin (ID)" or "NVRTC ..."
};

// Throws InputError for bad inputs/outputs; outputs only appear when everything succeeded.
MapStats run_map(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress = {});

}  // namespace evk::barracuda_exact
