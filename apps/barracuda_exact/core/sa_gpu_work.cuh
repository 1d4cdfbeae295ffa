// The GPU suffix sort's host-side pieces shared by its two files: one GPU's memory (text, ranks,
// the buffers of one batch or of the doubling phase, carved from one allocation) and the CUB calls
// on it. sa_gpu.cu sorts batches (radix sort, then rounds of 29 more bases); sa_gpu_double.cu
// finishes the suffixes that long exact repeats leave unresolved (prefix doubling on ranks).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/functional>
#include <thrust/iterator/counting_iterator.h>

#include "core/sa_gpu.hpp"
#include "core/sa_gpu_kernels.cuh"
#include "evk/cuda_check.hpp"

namespace evk::barracuda_exact::sa_gpu {

constexpr int kThreads = 256;
constexpr u64 kMaxItems = (1ull << 31) - (1ull << 20);  // CUB's int item counts

inline unsigned blocks_for(u64 items) {  // one thread per item
  return static_cast<unsigned>(std::max<u64>(1, (items + kThreads - 1) / kThreads));
}
inline unsigned stride_blocks(u64 items) {  // grid-stride kernels
  return static_cast<unsigned>(std::max<u64>(1, std::min<u64>((items + kThreads - 1) / kThreads, 1ull << 16)));
}

// A sorted work list of unresolved suffixes: slot[k] (ascending within a group) and seg[k] (k
// starts a group), double-buffered, with the scratch of one re-sort round. Capacity c.
struct WorkList {
  u64 c = 0;
  u64 *keys[2] = {}, *tmp = nullptr;
  unsigned *slot[2] = {}, *kslot[2] = {}, *first = nullptr;
  unsigned char *seg[2] = {}, *head = nullptr, *keep = nullptr;
  int* offsets = nullptr;
  static constexpr u64 kItemBytes = 2 * 8 + 8 + 5 * 4 + 4 + 4;  // + offsets
};

// Carves aligned arrays from one device allocation.
struct Arena {
  char* base = nullptr;
  u64 bytes = 0, used = 0;
  int device = 0;
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  void allocate(int dev, u64 b) {
    release();
    device = dev;
    bytes = b;
    used = 0;
    EVK_CUDA(cudaMalloc(&base, bytes));
  }
  template <class T>
  T* carve(u64 items) {
    const u64 b = (items * sizeof(T) + 255) & ~255ull;
    if (used + b > bytes) throw std::logic_error("sa_gpu: arena overrun");
    T* p = reinterpret_cast<T*>(base + used);
    used += b;
    return p;
  }
  void release() {
    if (base) {
      cudaSetDevice(device);
      cudaFree(base);
    }
    base = nullptr;
    bytes = used = 0;
  }
  ~Arena() { release(); }
};

inline WorkList carve_work_list(Arena& a, u64 c) {
  WorkList w;
  w.c = c;
  for (int i = 0; i < 2; ++i) {
    w.keys[i] = a.carve<u64>(c);
    w.slot[i] = a.carve<unsigned>(c);
    w.kslot[i] = a.carve<unsigned>(c);
    w.seg[i] = a.carve<unsigned char>(c);
  }
  w.tmp = a.carve<u64>(c);
  w.first = a.carve<unsigned>(c);
  w.head = a.carve<unsigned char>(c);
  w.keep = a.carve<unsigned char>(c);
  w.offsets = a.carve<int>(c + 1);
  return w;
}

// One GPU: its text and ranks (for the whole build), its batch buffers, CUB scratch.
struct DeviceWork {
  int device = 0;
  Arena fixed, arena;
  u64* text = nullptr;
  unsigned* rank_lo = nullptr;
  unsigned char* rank_hi = nullptr;
  u64 capacity = 0;  // suffixes per batch
  u64 *keys[2] = {}, *pos[2] = {};
  WorkList wl;
  unsigned* count = nullptr;  // [0] counts; [2..3] a 64-bit counter
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  SaGpuDevice report;
};

// CUB scratch for sorting m suffixes and a work list of c.
std::size_t temp_bytes_for(u64 m, u64 c);

inline unsigned read_count(const unsigned* d) {
  unsigned h = 0;
  EVK_CUDA(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

// Compacts: out[k'] = in[k] for keep[k]; returns the new length.
template <class In, class Out>
unsigned select_kept(DeviceWork& w, In in, const unsigned char* keep, Out out, u64 items) {
  std::size_t bytes = w.temp_bytes;
  EVK_CUDA(cub::DeviceSelect::Flagged(w.temp, bytes, in, keep, out, w.count, static_cast<int>(items)));
  return read_count(w.count);
}

// first[k] = the slot its group starts at (work list of u, groups marked by seg).
inline void spread_group_starts(DeviceWork& w, const unsigned* slot, const unsigned char* seg, unsigned u,
                                unsigned* first) {
  group_starts<<<blocks_for(u), kThreads>>>(slot, seg, u, first);
  EVK_CUDA_LAST();
  std::size_t bytes = w.temp_bytes;
  EVK_CUDA(cub::DeviceScan::InclusiveScan(w.temp, bytes, first, first, cuda::maximum<unsigned>{}, static_cast<int>(u)));
}

// One re-sort round of a work list whose keys[0]/kslot[0] are filled: sorts each group by key,
// permutes pos within the groups, marks the new groups; returns how many suffixes stay unresolved
// (compacted into slot[1 - cur], seg[1 - cur]). first[] gets each item's new group start slot.
unsigned resort_round(DeviceWork& w, WorkList& l, int cur, unsigned u, u64* pos);

// Finishes the unresolved suffixes of all batches on this GPU by prefix doubling (sa_gpu_double.cu):
// u_pos / u_rank (host, sorted by rank) are the suffixes and their groups' first rows, every
// group equal on its first h bases; fills their rows into bwt/samples. Returns the doubling steps.
u64 double_unresolved(DeviceWork& w, u64 n, u64 h, std::vector<std::uint64_t>& u_pos,
                      std::vector<std::uint64_t>& u_rank, const std::uint8_t* text, std::uint8_t* bwt,
                      std::uint64_t* samples);

// The order check on the final ranks of this GPU (every position's row): adjacent rows in order
// by their first base and the rank of the suffix after it, each row held once. Returns the faults.
u64 check_rows(DeviceWork& w, u64 n);

// Folds the ranks of `other` into w's (each position ranked on one GPU).
void merge_ranks_into(DeviceWork& w, DeviceWork& other, u64 n);

}  // namespace evk::barracuda_exact::sa_gpu
