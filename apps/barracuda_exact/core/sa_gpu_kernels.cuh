// Device side of the GPU suffix sort (core/sa_gpu.hpp). The text lies on the GPU as 64-bit words of
// 32 bases, first base in the top bits, zero-padded past its end by two words.
//
// A suffix's key for round r is its 29 bases from q = p + 29 r in the top 58 bits, and in the low 6
// bits how many bases it has left when that is under 29 (else 63). Bases past the end read as A
// (0), so among equal 58-bit windows a suffix that ends inside the window sorts first, shorter
// first, as '$' does; such a suffix is then alone with its key. Ordering by the top 24 bits alone
// (the first 12 bases) is the bucket order, so a batch of consecutive buckets is a range of rows.
#pragma once
#include <cstdint>

namespace evk::barracuda_exact::sa_gpu {

using u64 = unsigned long long;
constexpr int kBucketBits = 24;  // first 12 bases
constexpr u64 kBuckets = 1ull << kBucketBits;
constexpr u64 kRoundBases = 29;
constexpr u64 kOpenFlag = 63;

namespace {  // each translation unit that launches them has its own copy of the kernels

__device__ __forceinline__ u64 window(const u64* __restrict__ w, u64 q) {
  const u64 i = q >> 5;
  const unsigned o = static_cast<unsigned>(q & 31) * 2;
  const u64 hi = w[i];
  return o == 0 ? hi : (hi << o) | (w[i + 1] >> (64 - o));
}

__device__ __forceinline__ u64 suffix_key(const u64* __restrict__ w, u64 n, u64 q) {
  const u64 rem = n - q;
  return (window(w, q) & ~0x3Full) | (rem < kRoundBases ? rem : kOpenFlag);
}

__device__ __forceinline__ unsigned base_at(const u64* __restrict__ w, u64 q) {
  return static_cast<unsigned>(w[q >> 5] >> (62 - 2 * (q & 31))) & 3u;
}

__global__ void count_buckets(const u64* __restrict__ w, u64 n, u64* __restrict__ hist) {
  const u64 stride = static_cast<u64>(gridDim.x) * blockDim.x;
  for (u64 p = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; p < n; p += stride)
    atomicAdd(&hist[window(w, p) >> (64 - kBucketBits)], 1ull);
}

// Appends (round-0 key, position) of every suffix whose bucket is in [b0, b1); one atomic per warp.
__global__ void collect_batch(const u64* __restrict__ w, u64 n, u64 b0, u64 b1, u64* __restrict__ keys,
                              u64* __restrict__ pos, unsigned* __restrict__ count) {
  const u64 stride = static_cast<u64>(gridDim.x) * blockDim.x;
  const unsigned lane = threadIdx.x & 31u;
  for (u64 base = blockIdx.x * static_cast<u64>(blockDim.x); base < n; base += stride) {
    const u64 p = base + threadIdx.x;
    u64 win = 0;
    bool take = false;
    if (p < n) {
      win = window(w, p);
      const u64 b = win >> (64 - kBucketBits);
      take = b >= b0 && b < b1;
    }
    const unsigned mask = __ballot_sync(0xffffffffu, take);
    if (mask == 0) continue;
    const unsigned leader = static_cast<unsigned>(__ffs(static_cast<int>(mask))) - 1;
    unsigned first = 0;
    if (lane == leader) first = atomicAdd(count, static_cast<unsigned>(__popc(mask)));
    first = __shfl_sync(0xffffffffu, first, static_cast<int>(leader));
    if (take) {
      const unsigned slot = first + static_cast<unsigned>(__popc(mask & ((1u << lane) - 1u)));
      const u64 rem = n - p;
      keys[slot] = (win & ~0x3Full) | (rem < kRoundBases ? rem : kOpenFlag);
      pos[slot] = p;
    }
  }
}

// Runs of equal keys: head[i] starts a run (or a segment), keep[i] is in a run longer than one.
__global__ void mark_runs(const u64* __restrict__ keys, const unsigned char* __restrict__ seg_start, unsigned m,
                          unsigned char* __restrict__ head, unsigned char* __restrict__ keep) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const bool h = i == 0 || (seg_start && seg_start[i]) || keys[i] != keys[i - 1];
  const bool next_h = i + 1 == m || (seg_start && seg_start[i + 1]) || keys[i + 1] != keys[i];
  head[i] = h;
  keep[i] = !(h && next_h);
}

// Round r's keys of the unresolved suffixes, each with its slot in the batch.
__global__ void resort_keys(const u64* __restrict__ w, u64 n, u64 shift, const u64* __restrict__ pos,
                            const unsigned* __restrict__ slot, unsigned u, u64* __restrict__ keys,
                            unsigned* __restrict__ key_slot) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= u) return;
  const unsigned s = slot[k];
  keys[k] = suffix_key(w, n, pos[s] + shift);
  key_slot[k] = s;
}

__global__ void gather_positions(const u64* __restrict__ pos, const unsigned* __restrict__ sorted_slot, unsigned u,
                                 u64* __restrict__ tmp) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < u) tmp[k] = pos[sorted_slot[k]];
}

__global__ void scatter_positions(u64* __restrict__ pos, const unsigned* __restrict__ slot, unsigned u,
                                  const u64* __restrict__ tmp) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < u) pos[slot[k]] = tmp[k];
}

// Ranks, 40 bits per text position (a 32-bit low word and a high byte): the row of the suffix, or
// while its group (equal first h bases) is unresolved, the row the group starts at.
__device__ __forceinline__ u64 get_rank(const unsigned* __restrict__ lo, const unsigned char* __restrict__ hi, u64 p) {
  return (static_cast<u64>(hi[p]) << 32) | lo[p];
}
__device__ __forceinline__ void set_rank(unsigned* __restrict__ lo, unsigned char* __restrict__ hi, u64 p, u64 r) {
  lo[p] = static_cast<unsigned>(r);
  hi[p] = static_cast<unsigned char>(r >> 32);
}

// Every suffix of a sorted batch: its row as rank.
__global__ void rank_batch(const u64* __restrict__ pos, unsigned m, u64 row_base, unsigned* __restrict__ lo,
                           unsigned char* __restrict__ hi) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) set_rank(lo, hi, pos[i], row_base + i);
}

// For a work list (slots ascending, seg marking group starts): the slot where each group starts
// goes to first[k] of its start; a max-scan then spreads it over the group.
__global__ void group_starts(const unsigned* __restrict__ slot, const unsigned char* __restrict__ seg, unsigned u,
                             unsigned* __restrict__ first) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < u) first[k] = seg[k] ? slot[k] : 0;
}

// Unresolved suffixes of a batch: their group's first row as rank, and their position and rank out.
__global__ void rank_groups(const u64* __restrict__ pos, const unsigned* __restrict__ slot,
                            const unsigned* __restrict__ first, unsigned u, u64 row_base, unsigned* __restrict__ lo,
                            unsigned char* __restrict__ hi, u64* __restrict__ out_pos, u64* __restrict__ out_rank) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= u) return;
  const u64 p = pos[slot[k]];
  const u64 r = row_base + first[k];
  set_rank(lo, hi, p, r);
  out_pos[k] = p;
  out_rank[k] = r;
}

// Doubling: the key of an unresolved suffix is the rank of the suffix h bases on (0 for '$').
__global__ void rank_keys(const unsigned* __restrict__ lo, const unsigned char* __restrict__ hi, u64 n, u64 h,
                          const u64* __restrict__ pos, const unsigned* __restrict__ slot, unsigned u,
                          u64* __restrict__ keys, unsigned* __restrict__ key_slot) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= u) return;
  const unsigned s = slot[k];
  const u64 q = pos[s] + h;
  keys[k] = q >= n ? 0 : get_rank(lo, hi, q);
  key_slot[k] = s;
}

// Doubling: each suffix of the work list takes the row of its new group's first slot.
__global__ void rerank(const u64* __restrict__ pos, const u64* __restrict__ row, const unsigned* __restrict__ slot,
                       const unsigned* __restrict__ first, unsigned u, unsigned* __restrict__ lo,
                       unsigned char* __restrict__ hi) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < u) set_rank(lo, hi, pos[slot[k]], row[first[k]]);
}

// Doubling's start: U sorted by group rank; seg marks group starts, row[k] = rank + place in group.
__global__ void u_groups(const u64* __restrict__ rank, unsigned u, unsigned* __restrict__ slot,
                         unsigned char* __restrict__ seg) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= u) return;
  slot[k] = k;
  seg[k] = k == 0 || rank[k] != rank[k - 1];
}
__global__ void u_rows(const u64* __restrict__ rank, const unsigned* __restrict__ first, unsigned u,
                       u64* __restrict__ row) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < u) row[k] = rank[k] + (k - first[k]);
}

// Combines another GPU's ranks into these: each position was ranked on exactly one GPU (ranks >= 1).
__global__ void merge_ranks(unsigned* __restrict__ lo, unsigned char* __restrict__ hi,
                            const unsigned* __restrict__ lo2, const unsigned char* __restrict__ hi2, u64 count) {
  const u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  if (lo2[i] | hi2[i]) {
    lo[i] = lo2[i];
    hi[i] = hi2[i];
  }
}

// The order check (Burkhardt and Kaerkkaeinen): the suffixes of rows r0..r0+len-1 by their rank;
// a row that two positions claim, or none, is counted as bad.
__global__ void rows_by_rank(const unsigned* __restrict__ lo, const unsigned char* __restrict__ hi, u64 n, u64 r0,
                             u64 len, u64* __restrict__ sa, unsigned long long* __restrict__ bad) {
  const u64 stride = static_cast<u64>(gridDim.x) * blockDim.x;
  for (u64 p = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; p < n; p += stride) {
    const u64 r = get_rank(lo, hi, p);
    if (r < r0 || r >= r0 + len) continue;
    if (atomicCAS(&sa[r - r0], ~0ull, p) != ~0ull) atomicAdd(bad, 1ull);
  }
}

// Adjacent rows holding a, b are in order iff text[a] < text[b], or they are equal and the suffix
// after a ranks before the suffix after b (rank n: the '$' row, 0).
__global__ void check_adjacent(const u64* __restrict__ w, const unsigned* __restrict__ lo,
                               const unsigned char* __restrict__ hi, u64 n, const u64* __restrict__ sa, u64 len,
                               unsigned long long* __restrict__ bad) {
  const u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i >= len) return;
  const u64 a = sa[i];
  if (a == ~0ull) {
    atomicAdd(bad, 1ull);
    return;
  }
  if (i + 1 >= len || sa[i + 1] == ~0ull) return;
  const u64 b = sa[i + 1];
  const unsigned ca = base_at(w, a), cb = base_at(w, b);
  const u64 ra = a + 1 < n ? get_rank(lo, hi, a + 1) : 0, rb = b + 1 < n ? get_rank(lo, hi, b + 1) : 0;
  if (ca > cb || (ca == cb && ra >= rb)) atomicAdd(bad, 1ull);
}

// The batch's rows row_base .. row_base + m - 1: BWT base (4 at the suffix 0) and the samples of
// rows divisible by 32, the first being first_sample_row.
__global__ void emit_rows(const u64* __restrict__ w, const u64* __restrict__ pos, unsigned m, u64 row_base,
                          u64 first_sample_row, unsigned char* __restrict__ bwt, u64* __restrict__ samples) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const u64 p = pos[i];
  const u64 row = row_base + i;
  bwt[i] = p == 0 ? 4 : static_cast<unsigned char>(base_at(w, p - 1));
  if ((row & 31) == 0) samples[(row - first_sample_row) >> 5] = p;
}

}  // namespace
}  // namespace evk::barracuda_exact::sa_gpu
