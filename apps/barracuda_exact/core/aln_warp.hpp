// The later GPU passes' kernel (core/aln_warp.cuh): bwa aln's inexact search with one warp per read,
// for the reads whose search outgrows the first pass's per-thread stack. Host side.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>


namespace evk::barracuda_exact {

// A launch's device memory: n_warps warps' lane records and a pool of n_chunks chunks of 32 stack
// entries (about 1 KiB each) shared by the warps (core/aln_warp_stack.cuh).
std::uint64_t aln_warp_launch_bytes(std::uint64_t n_warps, std::uint64_t n_chunks);
// The pool's chunks when a launch of n_warps has `bytes`.
std::uint64_t aln_warp_pool_chunks(std::uint64_t bytes, std::uint64_t n_warps);
// Chunks one warp may hold with stack_cap entries stored.
std::uint64_t aln_warp_chunks(std::uint64_t stack_cap);
// Warps of a launch within `bytes` whose pool holds stack_cap entries for each at once (a launch that
// never runs out of chunks).
std::uint64_t aln_warp_fit(std::uint64_t bytes, std::uint64_t stack_cap);
// Warps of the kernel resident on the device at once (its SMs x blocks of one warp an SM).
std::uint32_t aln_warp_resident(int device);

// One launch: the staged batch of an InexactDevice (the first pass's arguments; consts and params
// are BwtConsts and AlnKernelParams, copied as words: this header is compiled by nvcc as C++17) and
// the launch's memory (aln_warp_launch_bytes(n_warps, n_chunks) bytes from mem).
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
  std::uint32_t n_warps = 0, n_chunks = 0;
  std::uint32_t* n_out = nullptr;
  std::uint64_t* aln_out = nullptr;
  int aln_cap = 0;
};

// Enqueues the kernel on s (one warp per block).
void launch_aln_warp(const AlnWarpLaunch& a, cudaStream_t s);

}  // namespace evk::barracuda_exact
#endif
