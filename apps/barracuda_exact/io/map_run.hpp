// `barracuda_exact map` (the exact mode, and the inexact mode: bwa aln + samse for single-end reads,
// bwa aln + sampe for pairs, io/aln_mapper.hpp): reads -> mapper -> SAM/BAM as a streaming pipeline
// of named stages, each on its own thread with bounded queues between them (memory stays bounded
// whatever the file size):
//   input   decompress (text_input: plain, gzip on its own thread, BGZF blocks on the task pool)
//   scan    record boundaries, serially, with kseq's semantics (record_scan)
//   parse   records -> reads, in parallel chunks (read_batch)
//   map     `lanes` batches at once (mapper.hpp; a GPU lane drives one CUDA stream), out of order
//   format  batches back in input order: the mapper's finish() (the inexact mode's samse), then
//           records in parallel parts (sam_writer)
//   write   BGZF blocks compressed by htslib's thread pool
// The parallel stages share one task pool of `threads` workers. The serial path (serial_io) reads
// with htslib's kseq and writes record by record: the reference the pipeline is tested against.
// Pairs (reads2 given; io/map_pairs.cpp): the two files decompressed and scanned in lockstep, a
// batch holding the same number of reads of each (bwa sampe's batch: the insert size is estimated
// per batch), checked to pair up when parsed; a lane searches both ends; the format stage makes
// sampe's records in input order, then formats them interleaved (read 1, read 2 of each pair).
// Their serial path is the batch-by-batch driver io/aln_run.hpp.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/aln_options.hpp"
#include "evk/gi/problem.hpp"
#include "io/exact_mapper.hpp"

namespace evk::barracuda_exact {

struct MapOptions {
  std::string ref;        // prefix of the index files (REF.fa)
  std::string reads;      // FASTQ/FASTA, plain, gzip or BGZF, "-" = stdin
  std::string reads2;     // the second ends of pairs (paired inexact mode: bwa sampe); empty = single end
  std::string out;        // .sam, .bam or "-"
  std::string unmatched;  // optional FASTQ.gz of reads without an exact hit
  std::string command_line;
  std::string read_group;     // -R as typed ('\t' escapes): a header line and RG:Z on every record
  int max_top2 = 30;          // X1 only for hits with X0 <= this (bwa aln's -R)
  int threads = 0;            // worker threads and BGZF compression threads (0 = all cores)
  bool uncompressed = false;  // BAM without compression (-u; with "-": BAM on stdout)
  int level = -1;             // BAM compression level 1-9 (-1: htslib's default, 6)
  bool gpu = false;
  int device = 0;             // the GPU when `gpus` is empty
  gi::Config kernel_config;   // its kernel configuration (defaults when empty)
  std::string kernel_source;  // its kernel source (empty: the original; else an evolved variant's)
  std::vector<GpuPlan> gpus;  // several GPUs share the batches (--devices); overrides the three above
  int streams = 2;            // lanes (CUDA streams) per GPU
  int cpu_lanes = 2;          // batches matched at once by the CPU backend
  std::size_t batch_reads = 0;  // reads per batch; 0: 65536 exact, bwa's 0x40000 (kSampeBatch) inexact
  bool inexact = false;         // bwa aln + samse (sampe with reads2) with `aln` (else the exact mode)
  AlnOptions aln;
  PeOptions pe;                 // pairs: bwa sampe's options
  bool serial_io = false;     // the reference path (tests)
  bool poison_gpu = false;    // tests: GPU outputs poisoned before each launch
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
  double format_s = 0, write_s = 0;
  std::uint64_t input_bytes = 0, text_bytes = 0;
  std::string input_format, mapper;
  std::string kernel_origin;  // GPU: "embedded fatbin", "embedded fatbin (ID)" or "NVRTC ..." (per GPU)
  int lanes = 1, threads = 1, batches = 0;
  double peak_rss_mib = 0;
  double cpu_s = 0;  // user + system CPU seconds of the whole process (cores used = cpu_s / total_s)
};

// Throws InputError for bad inputs/outputs; outputs only appear when everything succeeded.
MapStats run_map(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress = {});
// Pairs (what run_map runs when opt.reads2 is given; the inexact mode only).
MapStats run_map_pairs(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress = {});

}  // namespace evk::barracuda_exact
