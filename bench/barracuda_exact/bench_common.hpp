// Shared by the barracuda_exact benchmarks: data location, genomes (E. coli from the data folder or
// a random genome of N Mbp, indexed in-process) and the pipeline benchmarks' registration.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "core/index.hpp"

namespace bcb {

std::filesystem::path data_dir();
double max_rss_gib();

struct Genome {
  std::string name;
  evk::barracuda_exact::BwtIndex idx;
  std::string fwd;  // forward text (for sampling reads)
  double build_s = 0, rss_gib = 0;
};
// "ecoli" (nullptr when the data is missing) or "random<N>" (N Mbp); built once per process.
Genome* get_genome(const std::string& name);

// Reads [first, first + n) of the pipeline's data set as FASTQ text: 100 bp of g, both strands, 15%
// with one substitution, NovaSeq-like binned qualities (deterministic per chunk).
std::string fastq_chunk(const Genome& g, std::size_t first, std::size_t n);

// bench_pipeline.cpp: end to end FASTQ.gz -> BAM, each stage alone, and the bwa peer.
void register_pipeline_benchmarks();
void print_pipeline_summary();   // after the run: each stage's throughput and where the limit is
void remove_pipeline_data();     // the temporary data set

// bench_inexact.cpp: the inexact search (kernel, mapping stage, end to end single and paired) and
// bwa aln + samse / sampe on the same reads.
void register_inexact_benchmarks(const std::vector<std::string>& genomes);
void remove_inexact_data();      // unless BC_BENCH_KEEP is set
std::size_t inexact_reads_wanted();  // BC_BENCH_INEXACT_READS, default 1 M
// The directory of a genome's inexact data set (written on first use; empty when the data is missing).
std::filesystem::path inexact_set_dir(const std::string& genome);

// bench_paired.cpp: paired end through `map` and bwa aln x2 + sampe (registered by the inexact part).
void register_paired_benchmarks();

}  // namespace bcb
