// Options of the inexact search and of the SAM stages, with bwa 0.7.17's defaults (`bwa aln`,
// `bwa samse`, `bwa sampe` print them), and bwa's maximum-differences rule.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace evk::barracuda_exact {

struct AlnOptions {   // bwa aln (gap_opt_t)
  int s_mm = 3;       // -M mismatch penalty
  int s_gapo = 11;    // -O gap open penalty
  int s_gape = 4;     // -E gap extension penalty
  int max_diff = -1;  // -n INT: maximum differences (then fnr < 0)
  float fnr = 0.04f;  // -n FLOAT: missing probability at 2% error, per read length (bwa keeps a float)
  int max_gapo = 1;   // -o maximum gap opens
  int max_gape = 6;   // maximum gap extensions; -e INT sets it and stops counting them as differences
  bool gape_counts = true;    // bwa's BWA_MODE_GAPE: gap extensions count as differences (-e not given)
  int indel_end_skip = 5;     // -i no indel within INT bp of the ends
  int max_del_occ = 10;       // -d maximum occurrences for extending a long deletion
  int max_entries = 2000000;  // -m maximum entries in the queue
  int seed_len = 32;          // -l seed length
  int max_seed_diff = 2;      // -k maximum differences in the seed
  int max_top2 = 30;          // -R stop when there are more than INT equally best hits
  int trim_qual = 0;          // -q quality threshold for trimming down to 35 bp
  bool log_gap = false;       // -L log-scaled gap penalty for long deletions
  bool non_stop = false;      // -N search for all n-difference hits (also sets max_top2 to INT_MAX)
};

struct PeOptions {              // bwa sampe (pe_opt_t)
  int max_isize = 500;          // -a maximum insert size (used when it cannot be inferred)
  int max_occ = 100000;         // -o maximum occurrences for one end
  int n_multi = 3;              // -n maximum hits to output for paired reads (XA)
  int N_multi = 10;             // -N maximum hits to output for discordant pairs
  double ap_prior = 1e-5;       // -c prior of the chimeric rate
  bool sw = true;               // !-s: Smith-Waterman for the unmapped mate
  bool force_isize = false;     // -A disable the insert size estimate
};

constexpr int kSeMulti = 3;        // bwa samse -n: maximum alternative hits in XA
constexpr double kAvgErr = 0.02;   // BWA_AVG_ERR
constexpr int kMinTrimLen = 35;    // BWA_MIN_RDLEN
constexpr std::uint32_t kSampeBatch = 0x40000;  // pairs per insert-size estimate (bwa's batch)

// bwa_cal_maxdiff: the smallest k with P(more than k errors) < thres under a Poisson model of a
// read of length l at error rate err (bwa's int factorial wraps for long reads; so does this).
int aln_max_diff(int l, double err, double thres);
// The maximum differences for a read of length l under opt (fnr when > 0, else max_diff).
int aln_max_diff(const AlnOptions& opt, int l);

// bwa aln reads its input in batches of kSampeBatch reads and limits each batch's gap opens by its
// longest read: min(max_gapo, aln_max_diff(longest)). A batch of ours holding several of bwa's (len:
// its reads' searched lengths, its first read the first of one of bwa's batches of `per` reads) is
// searched whole when all of them get the same limit: then {0, n}; else bwa's batches one at a time:
// {0, per, 2 per, ..., n}.
std::vector<std::size_t> aln_batch_cuts(const AlnOptions& opt, const std::vector<int>& len, std::size_t per = kSampeBatch);

// Position of the trimmed end (bwa_trim_read): the read keeps its first trim_len(...) bases.
// qual: FASTQ characters (phred + 33); len: read length. Returns len when nothing is trimmed.
int trim_len(int trim_qual, const char* qual, int len);

}  // namespace evk::barracuda_exact
