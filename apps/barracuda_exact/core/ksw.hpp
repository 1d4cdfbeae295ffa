// The two dynamic-programming alignments bwa's aln pipeline uses, with bwa's recurrences and
// tie-breaking so that CIGARs and coordinates come out as bwa 0.7.17 writes them (our own scalar
// code, following ksw.c's algorithm):
//   global_align  banded global alignment with affine gaps and traceback (ksw_global): the CIGAR
//                 of a gapped hit (samse/sampe's bwa_refine_gapped_core);
//   local_align   Smith-Waterman local alignment with affine gaps (ksw_align): score, end,
//                 start, and the second-best score as bwa's SSE2 kernel reports them (its query is
//                 padded to whole 16-byte (8-bit scores) or 8-lane (16-bit) vectors with zero-score
//                 positions, which take part in its column maxima); sampe's mate rescue.
#pragma once
#include <cstdint>
#include <vector>

namespace evk::barracuda_exact {

// 5x5 scores over codes 0..3 (ACGT) and 4 (N): match a, mismatch -b, anything with N -1
// (bwa_fill_scmat).
struct ScoreMatrix {
  std::int8_t m[25];
};
ScoreMatrix score_matrix(int a, int b);

// CIGAR operations as BAM encodes them: len << 4 | op, op 0 = M, 1 = I, 2 = D, 4 = S.
constexpr std::uint32_t kCigarM = 0, kCigarI = 1, kCigarD = 2, kCigarS = 4;

// Global alignment of query (qlen) against target (tlen) within band w; gap of length L costs
// gapo + L * gape. Returns the score; fills cigar when given.
int global_align(int qlen, const std::uint8_t* query, int tlen, const std::uint8_t* target, const ScoreMatrix& mat,
                 int gapo, int gape, int w, std::vector<std::uint32_t>* cigar);

struct LocalAlignment {
  int score = 0, te = -1, qe = -1, score2 = -1, te2 = -1, tb = -1, qb = -1;
};
// ksw_align(qlen, query, tlen, target, 5, mat, gapo, gape, KSW_XSUBO | KSW_XSTART | (bytes ?
// KSW_XBYTE : 0) with a minimal sub-optimal score of 0): the best local alignment, its end (te, qe),
// start (tb, qb) and the best score ending away from it (score2, te2). bytes: bwa's 8-bit kernel
// (scores saturate at 255 - mismatch penalty); else its 16-bit one.
LocalAlignment local_align(int qlen, const std::uint8_t* query, int tlen, const std::uint8_t* target,
                           const ScoreMatrix& mat, int gapo, int gape, bool bytes);

}  // namespace evk::barracuda_exact
