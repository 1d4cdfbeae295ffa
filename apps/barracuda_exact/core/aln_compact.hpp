// The inexact kernel's output compacted on the device (core/aln_compact.cu; its CPU oracle is
// compact_kernel_output): the answered reads' entries packed in read order, so that a batch's
// download is its n_out and its hits, not every read's ALN_CAP-entry slot.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "evk/cuda_library.hpp"

namespace evk::barracuda_exact {

class AlnCompactor {
 public:
  AlnCompactor();  // loads the kernels into the current device
  ~AlnCompactor();
  AlnCompactor(const AlnCompactor&) = delete;
  AlnCompactor& operator=(const AlnCompactor&) = delete;
  // Enqueues on s: *total := the number of entries of n reads (kernel_entries of n_out), and
  // packed[0 .. 3 * *total) := those entries in read order (from aln_out, aln_cap x 3 words per read).
  // All pointers are device memory; packed has room for n * aln_cap * 3 words. The scratch buffers
  // are the object's: one run at a time (runs on one stream are ordered).
  void run(const std::uint32_t* n_out, const std::uint64_t* aln_out, std::size_t n, int aln_cap, std::uint64_t* packed,
           std::uint64_t* total, cudaStream_t s);

 private:
  CudaLibrary lib_;
  cudaKernel_t tiles_ = nullptr, sums_ = nullptr, gather_ = nullptr;
  std::uint64_t *offsets_ = nullptr, *tile_sums_ = nullptr;
  std::size_t cap_reads_ = 0, cap_tiles_ = 0;
};

}  // namespace evk::barracuda_exact
#endif
