// Shared-memory layout of the second SGM aggregation kernel (aggregate_fast.cu), included by the
// kernel and by the host code that sizes its launch (sgm_policy.cpp), so both use one formula.
//
// A block's right-census row segment of `seg` codes (element i = column col0 + i) is staged in four
// phase copies: copy p holds element i at word q = i - p + 4, so a lane whose K codes start at an
// element e with e % 4 == p reads them as K/4 aligned 16-byte chunks. Chunk c (words 4c..4c+3)
// lives at word chunk_pos(c, K) = 4 (c + c / (K/4)): one chunk of padding per K/4, and a copy
// stride of 4 (mod 8) chunks, so the 16-byte reads of the 8 lanes of a quarter warp (lanes K/4
// chunks apart, or two lines' lanes in different copies) fall into distinct bank groups: no bank
// conflicts for 4 or more lanes per cell, 2-way below (test StereoSgmAgg2Layout counts them).
// Two buffers (double-buffered steps) of four copies each.
#pragma once

#if defined(__CUDACC__)
#define SGM_AGG2_HD __host__ __device__ __forceinline__
#else
#define SGM_AGG2_HD inline
#endif

namespace sgm_agg2 {

constexpr int kThreads = 128;  // threads per block

// log2(K / 4) for K = 8, 16, 32
SGM_AGG2_HD int skew_shift(int K) { return K <= 8 ? 1 : (K <= 16 ? 2 : 3); }
SGM_AGG2_HD int chunk_pos(int c, int K) { return 4 * (c + (c >> skew_shift(K))); }
// Words of one phase copy of a segment of seg codes: past the largest word written,
// chunk_pos((seg + 3) / 4, K) + 3, rounded to 8 chunks plus 4.
SGM_AGG2_HD int copy_words(int seg, int K) {
  const int chunks = chunk_pos((seg + 3) >> 2, K) / 4 + 1;
  return 4 * ((chunks + 7) / 8 * 8 + 4);
}
// Codes of the segment: a block's lines need Dp + lines - 1 consecutive right codes per step.
SGM_AGG2_HD int segment(int Dp, int Gs) { return Dp + kThreads / Gs - 1; }
// Dynamic shared memory of a launch, bytes.
SGM_AGG2_HD int staged_bytes(int Dp, int Gs, int K) { return 2 * 4 * copy_words(segment(Dp, Gs), K) * 4; }

}  // namespace sgm_agg2
