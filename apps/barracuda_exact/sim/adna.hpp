// bc_adna_reads' model: ancient-DNA fragments from a reference (sim/README.md). Fragment lengths
// log-normal, truncated to [min_len, max_len] and with --median the median of the output; starts
// uniform over the reference's ACGT runs; either strand; double-stranded-library deamination:
// C->T at read position i from the 5' end and G->A at position j from the 3' end, each at
// rate(i) = deam * exp(-decay * i) + interior; then substitution errors at `error` per base;
// a `contam` share of random-sequence (contaminant) reads.
// Read k of a run depends only on (seed, k / kAdnaChunk, k) - never on the thread count.
// Names carry the truth: adna<k>:<contig>:<pos 1-based leftmost>:<+|->:<n deaminated>:<n errors>;
// contaminants adna<k>:*:0:+:0:0.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace evk::sim {

constexpr std::size_t kAdnaChunk = 65536;

struct AdnaOptions {
  std::uint64_t seed = 1;
  double median = 45, sigma = 0.35;  // of the fragment lengths (log-normal; sigma of ln length)
  int min_len = 25, max_len = 120;
  double deam = 0.3, decay = 0.5, interior = 0.01;
  double error = 0.003, contam = 0.1;
};

// Throws InputError naming the option that is out of range.
void adna_check(const AdnaOptions& opt);
// rate(i) above.
double adna_deam_rate(const AdnaOptions& opt, int i);

struct AdnaRef {
  struct Run {
    std::uint32_t contig;
    std::uint64_t start, len;
  };
  std::vector<std::string> names, seqs;  // seqs upper-cased by adna_ref_index
  std::vector<Run> runs;                 // ACGT runs of at least min_len bases
  std::vector<std::uint64_t> cum;        // bases in runs before each run
  std::uint64_t total = 0;
};
// Upper-cases the sequences and finds their ACGT runs; throws InputError when none is min_len long.
void adna_ref_index(AdnaRef& ref, int min_len, const std::string& path);

struct AdnaPlan {
  AdnaOptions opt;
  double mu = 0;                 // ln of the untruncated log-normal's median
  std::vector<double> deam;      // rate(i), i = 0 .. max_len - 1
};
AdnaPlan adna_plan(const AdnaOptions& opt);

// FASTQ text of reads first .. first + n - 1 (first a multiple of kAdnaChunk, n <= kAdnaChunk).
void adna_chunk(const AdnaRef& ref, const AdnaPlan& plan, std::uint64_t first, std::size_t n, std::string& out);

}  // namespace evk::sim
