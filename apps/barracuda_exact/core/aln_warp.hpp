// The later GPU passes' kernel (core/aln_warp.cuh): bwa aln's inexact search with one warp per read,
// for the reads whose search outgrows the first pass's per-thread stack. Host side.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>


namespace evk::barracuda_exact {

// Device memory of one warp searching with a stack of `stack_cap` entries (its chunks, their links
// and the lanes' records).
std::uint64_t aln_warp_bytes(std::uint64_t stack_cap);

// One launch: the staged batch of an InexactDevice (the first pass's arguments; consts and params
// are BwtConsts and AlnKernelParams, copied as words: this header is compiled by nvcc as C++17) and
// the warps' memory (n_warps x aln_warp_bytes(stack_cap) bytes from mem).
struct AlnWarpLaunch {
  const std::uint32_t* bwt = nullptr;
  std::uint64_t consts[7] = {};
  int params[14] = {};
  const int* max_diff = nullptr;
  const std::uint32_t *words = nullptr, *lens = nullptr;
  std::uint32_t stride = 0, n_reads = 0;
  std::uint32_t* counter = nullptr;  // zeroed before the launch
  void* mem = nullptr;
  std::uint64_t stack_cap = 0;
  std::uint32_t n_warps = 0;
  std::uint32_t* n_out = nullptr;
  std::uint64_t* aln_out = nullptr;
  int aln_cap = 0;
};

// Enqueues the kernel on s (one warp per block).
void launch_aln_warp(const AlnWarpLaunch& a, cudaStream_t s);

}  // namespace evk::barracuda_exact
#endif
