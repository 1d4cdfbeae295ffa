// The later GPU passes' kernel: one warp per read (core/aln_warp.cuh), compiled by nvcc into the tool.
#include "core/aln_warp.hpp"

#include <algorithm>
#include <stdexcept>
#include <cstring>

#include "evk/cuda_check.hpp"

namespace evk::barracuda_exact {
namespace {

#include "core/aln_warp.cuh"

static_assert(sizeof(wbwt) == sizeof(AlnWarpLaunch::consts) && sizeof(wparams) == sizeof(AlnWarpLaunch::params),
              "kernel arguments mirror the host's");

__global__ void __launch_bounds__(32) aln_warp_search(const wu32* __restrict__ bwt, const wbwt bc, const wparams p,
                                                      const int* __restrict__ max_diff, const wu32* __restrict__ seqs,
                                                      const wu32* __restrict__ seq_lens, wu32 stride, wu32 n_seqs,
                                                      wu32* next_read, uint4* mem, wu64 cap, wu32 n_warps, wu32 n_chunks,
                                                      wu32* __restrict__ n_out, wu64* __restrict__ aln_out, int aln_cap) {
  __shared__ wstate w;
  if (blockIdx.x >= n_warps) return;
  const wmem m = w_mem(mem, blockIdx.x, n_warps, n_chunks);
  WLANE0(w_init(w));
  for (;;) {
    WLANE0(w.read = atomicAdd(next_read, 1u));
    const wu32 r = w.read;
    if (r >= n_seqs) break;
    w_search(w, m, bwt, bc, p, max_diff, seqs, seq_lens, stride, r, cap, aln_out + static_cast<wu64>(r) * aln_cap * 3, aln_cap);
    WLANE0({
      w_read_end(w, m);
      n_out[r] = w.result;
    });
  }
}

}  // namespace

std::uint64_t aln_warp_launch_bytes(std::uint64_t n_warps, std::uint64_t n_chunks) { return w_launch_u4(n_warps, n_chunks) * 16; }
std::uint64_t aln_warp_pool_chunks(std::uint64_t bytes, std::uint64_t n_warps) { return w_pool_chunks(bytes / 16, n_warps); }
std::uint64_t aln_warp_chunks(std::uint64_t stack_cap) { return w_chunks(stack_cap); }

std::uint64_t aln_warp_fit(std::uint64_t bytes, std::uint64_t stack_cap) {
  const std::uint64_t per = w_rec_u4() * 16 + w_chunks(stack_cap) * (1024 + 4);
  std::uint64_t n = bytes / per;
  while (n > 0 && w_pool_chunks(bytes / 16, n) < n * w_chunks(stack_cap)) n--;
  return n;
}

std::uint32_t aln_warp_resident(int device) {
  int sms = 0, per_sm = 0;
  EVK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  EVK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, aln_warp_search, 32, 0));
  return static_cast<std::uint32_t>(std::max(sms, 1) * std::max(per_sm, 1));
}

void launch_aln_warp(const AlnWarpLaunch& a, cudaStream_t s) {
  if (a.n_warps == 0 || a.n_reads == 0) return;
  if (a.stack_cap >= 0xffffffffull) throw std::invalid_argument("launch_aln_warp: stack_cap over 32 bits");
  if (a.n_chunks >= WNIL) throw std::invalid_argument("launch_aln_warp: more chunks than 32-bit links");
  wbwt bc;
  wparams p;
  std::memcpy(&bc, a.consts, sizeof bc);
  std::memcpy(&p, a.params, sizeof p);
  // the pool's control word: nothing handed out
  uint4* ctl = static_cast<uint4*>(a.mem) + static_cast<std::uint64_t>(a.n_warps) * w_rec_u4();
  EVK_CUDA(cudaMemsetAsync(ctl, 0, 16, s));
  aln_warp_search<<<a.n_warps, 32, 0, s>>>(a.bwt, bc, p, a.max_diff, a.words, a.lens, a.stride, a.n_reads, a.counter,
                                           static_cast<uint4*>(a.mem), a.stack_cap, a.n_warps, a.n_chunks, a.n_out,
                                           reinterpret_cast<wu64*>(a.aln_out), a.aln_cap);
}

}  // namespace evk::barracuda_exact
