// The options of `barracuda_exact map` (one struct for every mode: exact or inexact, single end or
// pairs, CPU or GPU) and the figures a run reports.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/aln_options.hpp"
#include "core/damage.hpp"
#include "evk/gi/problem.hpp"
#include "io/mapped_batch.hpp"

namespace evk::barracuda_exact {

// One GPU of the GPU backend and the kernel variant it runs (the exact kernel's; the inexact mode
// uses the device only).
struct GpuPlan {
  int device = 0;
  gi::Config config;   // empty: the default configuration
  std::string source;  // empty: the original kernel; else an evolved variant's patched text
};

struct MapOptions {
  std::string ref;        // prefix of the index files (REF.fa)
  std::string reads;      // FASTQ/FASTA, plain, gzip or BGZF, "-" = stdin
  std::string reads2;     // the second ends of pairs (paired inexact mode: bwa sampe); empty = single end
  std::string out;        // .sam, .bam or "-"
  std::string unmatched;  // optional FASTQ.gz of reads without an exact hit (exact mode)
  std::string trace;      // --trace: each batch's stages and their times, TSV (map/map_trace.hpp); empty: none
  std::string command_line;
  std::string read_group;     // -R as typed ('\t' escapes): a header line and RG:Z on every record
  int threads = 0;            // worker threads and BGZF compression threads (0 = all cores)
  bool uncompressed = false;  // BAM without compression (-u; with "-": BAM on stdout)
  // BAM compression level 1-9 (-1: htslib's default, 6). 1: the BAM of a mapper is an intermediate
  // file (sorted next); level 6 makes it 3-7% smaller for twice the writer's CPU time, which bounds
  // a GPU run on 16 cores (200 k reads, CPU backend: 100 bp reads 22.5 / 23.2 MB, write 1.25 /
  // 0.52 s; aDNA reads 14.4 / 15.5 MB, 0.92 / 0.44 s, level 6 / 1). STAR's default is 1, GATK's 2.
  int level = 1;
  bool gpu = false;
  bool gpu_forced = false;    // --backend gpu: a GPU without room for the index is an error, not the CPU
  std::uint64_t gpu_memory = 0;  // --gpu-memory: device bytes the index may take per GPU (0: the free memory)
  std::vector<GpuPlan> gpus;  // the GPUs sharing the batches (empty: GPU 0 with the original kernel)
  int streams = 0;            // lanes (CUDA streams) per GPU; 0: map_streams()
  // inexact: later GPU passes (a warp per read) over the reads the first pass hands back (0-3); with
  // all three only reads over 256 bases (or a pass without room on the device) reach the CPU.
  int gpu_passes = 3;
  int cpu_lanes = 2;          // batches matched at once by the CPU backend
  std::size_t batch_reads = 0;  // reads per batch; 0: map_stages.hpp's batch_reads()
  bool inexact = false;         // bwa aln + samse (sampe with reads2) with `aln` (else the exact mode)
  AlnOptions aln;  // bwa aln's options; aln.max_top2 (-R) also limits X1 in the exact mode's records
  PeOptions pe;    // pairs: bwa sampe's options
  std::string damage;            // --damage PREFIX: the records' damage profile (core/damage.hpp) in
  DamageOptions damage_options;  // PREFIX.misincorporation.txt and PREFIX.lgdistribution.txt; empty: none
};

struct MapStats {
  std::uint64_t reads = 0, unique = 0, repeat = 0, unmatched = 0, bridging = 0;
  MapCounts counts;  // all of the mapper's counts (the inexact ones too)
  // wall seconds of the whole run and of loading the index; the rest are busy seconds of each
  // stage (summed over lanes; a parallel stage's time is its wall time with the pool)
  double index_s = 0, total_s = 0;
  double read_s = 0, inflate_s = 0;  // read(2) and inflation thread-seconds (all threads)
  double scan_s = 0, parse_s = 0;
  double transfer_s = 0, kernel_s = 0, match_s = 0, lookup_s = 0, fallback_s = 0, records_s = 0;
  double later_passes_s = 0;
  std::array<double, kMapLaterPasses> pass_s{};
  double format_s = 0, write_s = 0;
  std::uint64_t input_bytes = 0, text_bytes = 0;
  std::string input_format, mapper;
  std::string gpu_fallback;   // why the GPU backend gave way to the CPU (no room for the index); "" if not
  std::string kernel_origin;  // GPU: "embedded fatbin", "embedded fatbin (ID)" or "NVRTC ..." (per GPU)
  int lanes = 1, threads = 1, batches = 0;
  double peak_rss_mib = 0;
  double cpu_s = 0;  // user + system CPU seconds of the whole process (cores used = cpu_s / total_s)
};

// CUDA streams (lanes) per GPU: --streams, else 4 for the inexact search (a stream whose batch is
// down to its few long searches leaves the GPU to the others; 10 M aDNA reads on an H200: 67.7 s
// with 4, 83.8 with 2, 73.9 with 8) and 2 for the exact mode.
inline int map_streams(const MapOptions& o) { return o.streams > 0 ? o.streams : o.inexact ? 4 : 2; }

}  // namespace evk::barracuda_exact
