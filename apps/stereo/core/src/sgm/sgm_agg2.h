// Shared-memory layout of the second SGM aggregation kernel (aggregate_fast.cu), included by the
// kernel and by the host code that sizes its launch (sgm_pipeline.cpp), so both use one formula.
//
// A block's right-census row segment of `seg` codes (element i = column col0 + i) is staged in four
// phase copies: copy p holds element i at word q = i - p + 4, so a lane whose K codes start at an
// element e with e % 4 == p reads them as K/4 aligned 16-byte chunks. Chunk c (words 4c..4c+3)
// lives at word chunk_pos(c) = 4 (c + c / 8): one chunk of padding per eight, which keeps the
// 16-byte reads of lanes 4, 8 or 16 chunks apart (K 16, 32, 64 codes) in distinct bank groups.
// Two buffers (double-buffered steps) of four copies each.
#pragma once

#if defined(__CUDACC__)
#define SGM_AGG2_HD __host__ __device__ __forceinline__
#else
#define SGM_AGG2_HD inline
#endif

namespace sgm_agg2 {

constexpr int kThreads = 128;  // threads per block

SGM_AGG2_HD int chunk_pos(int c) { return 4 * (c + (c >> 3)); }
// Words of one phase copy of a segment of seg codes (the largest word index written is
// chunk_pos((seg + 3) / 4) + 3).
SGM_AGG2_HD int copy_words(int seg) { return chunk_pos((seg + 3) >> 2) + 4; }
// Codes of the segment: a block's lines need Dp + lines - 1 consecutive right codes per step.
SGM_AGG2_HD int segment(int Dp, int Gs) { return Dp + kThreads / Gs - 1; }
// Dynamic shared memory of a launch, bytes.
SGM_AGG2_HD int staged_bytes(int Dp, int Gs) { return 2 * 4 * copy_words(segment(Dp, Gs)) * 4; }

}  // namespace sgm_agg2
