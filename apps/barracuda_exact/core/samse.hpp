// From the hit intervals of the inexact search to SAM records, as `bwa samse` 0.7.17 does it
// (bwase.c; our own code): the primary hit drawn among the equally best intervals with bwa's own
// random generator (glibc drand48 seeded by the index's seed, consumed in read order, so ties are
// broken exactly as bwa breaks them), MAPQ (37/25/23/0 and the c2 rule), SA row to position and
// strand, gapped hits refined to a CIGAR by banded global alignment, NM and MD, trimmed reads'
// soft clips, XT/X0/X1/XM/XO/XG and XA for up to 3 other hits.
// The steps are exposed for the paired pipeline (core/sampe.*), which interleaves its own.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/aln_options.hpp"
#include "core/aln_record.hpp"
#include "core/aln_search.hpp"
#include "core/index.hpp"
#include "core/match.hpp"
#include "core/rand48.hpp"

namespace evk::barracuda_exact {

enum AlnType : int { kNoMatch = 0, kUnique = 1, kRepeat = 2, kMateSw = 3 };

struct MultiHit {  // an alternative hit (XA)
  std::uint64_t pos = 0;  // SA row until positions are computed, then forward position
  int strand = 0;
  std::uint32_t gap = 0, mm = 0;
  int ref_shift = 0;
  std::vector<std::uint32_t> cigar;  // gapped hits only
};

// A read's alignment state between the steps (bwa's bwa_seq_t, alignment part).
struct SeqAln {
  int len = 0, full_len = 0;  // after -q trimming (the whole read once refined), and before
  int clip_len = 0;           // the searched length (bwa's XC when < full_len)
  int type = kNoMatch;
  std::uint32_t n_mm = 0, n_gapo = 0, n_gape = 0;
  int ref_shift = 0, score = 0;
  std::uint64_t sa = 0, c1 = 0, c2 = 0;
  std::uint64_t pos = 0;  // forward-strand position; ~0 = none
  int strand = 0;
  int mapq = 0, seq_q = 0;
  std::uint16_t extra_flag = 0;
  bool has_cigar = false;
  std::vector<std::uint32_t> cigar;
  std::vector<MultiHit> multi;
  std::string md;
  int nm = 0;
};

// bwa_aln2seq_core: the primary among the best-scoring intervals (drawing from rng), counts c1/c2
// and the type (set_main); and the alternative hits when there are at most n_multi + 1 (n_multi > 0).
void aln_choose(const Aln* alns, std::uint32_t n, Rand48& rng, SeqAln& s);
// aln_choose in two steps: the draws alone (what must run in read order), then the rest.
struct AlnDraw {
  std::uint64_t sa = 0;   // the primary's SA row
  std::int32_t pick = -1; // its interval (-1: none drawn; bwa then leaves the fields as they were)
};
AlnDraw aln_draw(const Aln* alns, std::uint32_t n, Rand48& rng);
void aln_apply(const Aln* alns, std::uint32_t n, const AlnDraw& d, SeqAln& s);
void aln_multi(const Aln* alns, std::uint32_t n, int n_multi, SeqAln& s);
// bwa_approx_mapQ with the read's maximum differences.
int approx_mapq(const SeqAln& s, int max_diff);
// Text positions of SA rows known in advance (looked up on the GPU: core/aln_positions.hpp): n
// rows and their idx.sa_at values; a row not among them (or known as ~0) is looked up on the host.
struct KnownRows {
  const std::uint64_t* row = nullptr;
  const std::uint64_t* pos = nullptr;
  int n = 0;
  std::uint64_t text_pos(const BwtIndex& idx, std::uint64_t r) const {
    for (int i = 0; i < n; ++i)
      if (row[i] == r && pos[i] != ~0ull) return pos[i];
    return idx.sa_at(r);
  }
};
// bwa_sa2pos: forward position of SA row sa for a hit of ref_len reference bases (~0 when it
// spans the forward/reverse boundary); strand 1 = reverse.
std::uint64_t sa_to_pos(const BwtIndex& idx, std::uint64_t sa, int ref_len, int& strand, const KnownRows& known = {});
// Positions of the primary (and MAPQ) and of the alternative hits (bwa_cal_pac_pos for one read).
void se_positions(const BwtIndex& idx, const AlnOptions& opt, SeqAln& s, const KnownRows& known = {});
void multi_positions(const BwtIndex& idx, SeqAln& s, const KnownRows& known = {});
// bwa_refine_gapped for one read: CIGARs of gapped hits, MD/NM, soft clips of trimmed reads.
// codes: the read's codes (its first len are searched).
void refine_read(const BwtIndex& idx, const std::uint8_t* codes, SeqAln& s);
// bwa_print_sam1's fields (mate: the other end of a pair, or null).
AlnRecord make_record(const BwtIndex& idx, SeqAln& s, SeqAln* mate, int max_top2);

// Reads of a batch as the SAM stages need them: codes of the whole reads and the searched length.
struct AlnReads {
  const ReadCodes* codes = nullptr;      // whole reads (full_len = codes->len[i])
  const std::vector<int>* len = nullptr; // searched (trimmed) length per read
};

// samse_batch in two steps, for a pipeline that formats batches in parallel: samse_draws is the
// serial part (bwa's random draws of each read's primary, in read order; call it on the batches in
// file order), samse_record the rest of read i (independent of the other reads; s: scratch space).
void samse_draws(const AlnBatch& alns, Rand48& rng, std::vector<AlnDraw>& draws);
AlnRecord samse_record(const BwtIndex& idx, const AlnReads& reads, std::size_t i, const AlnBatch& alns, const AlnDraw& draw,
                       const AlnOptions& opt, int n_multi, SeqAln& s, const KnownRows& known = {});

// The single-end pipeline over a batch (bwa samse): the primary choice runs in read order on rng
// (call batches in file order with one generator seeded by idx.seed for bwa's exact choices), the
// rest in `threads` threads. One record per read; XA lists up to n_multi other hits (bwa samse -n).
std::vector<AlnRecord> samse_batch(const BwtIndex& idx, const AlnReads& reads, const AlnBatch& alns,
                                   const AlnOptions& opt, Rand48& rng, int threads = 0, int n_multi = kSeMulti);

}  // namespace evk::barracuda_exact
