// Compaction of the inexact kernel's output on the GPU, so that only the used entries cross the bus:
// each read's entries (ALN_CAP x 3 words per read, of which the first n_out are used) packed
// contiguously in read order. A support kernel of the GPU backend (not evolved); its CPU reference
// is compact_kernel_output (core/aln_kernel.cpp).
//
// A read's entry count is n_out, or 0 when it was handed back (0xffffffff) or n_out exceeds the cap
// (not answered; the host rejects such a batch). Three launches on one stream:
//   compact_tiles   per tile of kTile reads: exclusive scan of the counts (offsets within the tile)
//                   and the tile's total;
//   compact_sums    one block: exclusive scan of the tile totals in place, the grand total;
//   compact_gather  per read: copies its entries to packed + 3 * (tile offset + offset in tile).
#include <cub/block/block_scan.cuh>

typedef unsigned int u32;
typedef unsigned long long u64;

#define COMPACT_THREADS 256
#define COMPACT_ITEMS 8  // reads per thread in compact_tiles: a tile is 2048 reads
#define SUMS_THREADS 256

__device__ __forceinline__ u32 entries_of(u32 n, u32 cap) { return (n == 0xffffffffu || n > cap) ? 0u : n; }

// grid: one block of COMPACT_THREADS per tile of COMPACT_THREADS * COMPACT_ITEMS reads.
extern "C" __global__ void __launch_bounds__(COMPACT_THREADS)
    compact_tiles(const u32* __restrict__ n_out, const u64 n, const u32 cap, u64* __restrict__ offsets,
                  u64* __restrict__ tile_sums) {
  typedef cub::BlockScan<u64, COMPACT_THREADS> Scan;
  __shared__ typename Scan::TempStorage tmp;
  const u64 first = static_cast<u64>(blockIdx.x) * (COMPACT_THREADS * COMPACT_ITEMS) +
                    static_cast<u64>(threadIdx.x) * COMPACT_ITEMS;
  u64 c[COMPACT_ITEMS];
#pragma unroll
  for (int j = 0; j < COMPACT_ITEMS; ++j) c[j] = first + j < n ? entries_of(n_out[first + j], cap) : 0;
  u64 total = 0;
  Scan(tmp).ExclusiveSum(c, c, total);
#pragma unroll
  for (int j = 0; j < COMPACT_ITEMS; ++j)
    if (first + j < n) offsets[first + j] = c[j];
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

// grid: one block of SUMS_THREADS. tile_sums[0..n_tiles) := their exclusive prefix sums; *total := the sum.
extern "C" __global__ void __launch_bounds__(SUMS_THREADS)
    compact_sums(u64* __restrict__ tile_sums, const u64 n_tiles, u64* __restrict__ total) {
  typedef cub::BlockScan<u64, SUMS_THREADS> Scan;
  __shared__ typename Scan::TempStorage tmp;
  u64 carry = 0;
  for (u64 base = 0; base < n_tiles; base += SUMS_THREADS) {
    const u64 i = base + threadIdx.x;
    const u64 v = i < n_tiles ? tile_sums[i] : 0;
    u64 excl = 0, chunk = 0;
    Scan(tmp).ExclusiveSum(v, excl, chunk);
    if (i < n_tiles) tile_sums[i] = carry + excl;
    carry += chunk;   // every thread gets the chunk's total
    __syncthreads();  // tmp is reused by the next chunk
  }
  if (threadIdx.x == 0) *total = carry;
}

// grid: ceil(n / blockDim.x) blocks, one read per thread.
extern "C" __global__ void compact_gather(const u32* __restrict__ n_out, const u64 n, const u32 cap,
                                          const u64* __restrict__ offsets, const u64* __restrict__ tile_sums,
                                          const u64* __restrict__ aln_out, u64* __restrict__ packed) {
  const u64 i = static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const u64 words = 3ull * entries_of(n_out[i], cap);
  const u64* src = aln_out + i * cap * 3ull;
  u64* dst = packed + 3ull * (tile_sums[i / (COMPACT_THREADS * COMPACT_ITEMS)] + offsets[i]);
  for (u64 w = 0; w < words; ++w) dst[w] = src[w];
}
