// The later GPU passes' kernel: one warp per read (core/aln_warp.cuh), compiled by nvcc into the tool.
#include "core/aln_warp.hpp"

#include <stdexcept>
#include <cstring>

namespace evk::barracuda_exact {
namespace {

#include "core/aln_warp.cuh"

static_assert(sizeof(wbwt) == sizeof(AlnWarpLaunch::consts) && sizeof(wparams) == sizeof(AlnWarpLaunch::params),
              "kernel arguments mirror the host's");

__global__ void __launch_bounds__(32) aln_warp_search(const wu32* __restrict__ bwt, const wbwt bc, const wparams p,
                                                      const int* __restrict__ max_diff, const wu32* __restrict__ seqs,
                                                      const wu32* __restrict__ seq_lens, wu32 stride, wu32 n_seqs,
                                                      wu32* next_read, uint4* mem, wu64 cap, wu32 n_warps,
                                                      wu32* __restrict__ n_out, wu64* __restrict__ aln_out, int aln_cap) {
  __shared__ wstate w;
  if (blockIdx.x >= n_warps) return;
  const wmem m = w_mem(mem + static_cast<wu64>(blockIdx.x) * w_warp_u4(cap), cap);
  for (;;) {
    WLANE0(w.read = atomicAdd(next_read, 1u));
    const wu32 r = w.read;
    if (r >= n_seqs) break;
    w_search(w, m, bwt, bc, p, max_diff, seqs, seq_lens, stride, r, cap, aln_out + static_cast<wu64>(r) * aln_cap * 3, aln_cap);
    WLANE0(n_out[r] = w.result);
  }
}

}  // namespace

std::uint64_t aln_warp_bytes(std::uint64_t stack_cap) { return w_warp_u4(stack_cap) * 16; }

void launch_aln_warp(const AlnWarpLaunch& a, cudaStream_t s) {
  if (a.n_warps == 0 || a.n_reads == 0) return;
  if (a.stack_cap >= 0xffffffffull) throw std::invalid_argument("launch_aln_warp: stack_cap over 32 bits");
  wbwt bc;
  wparams p;
  std::memcpy(&bc, a.consts, sizeof bc);
  std::memcpy(&p, a.params, sizeof p);
  aln_warp_search<<<a.n_warps, 32, 0, s>>>(a.bwt, bc, p, a.max_diff, a.words, a.lens, a.stride, a.n_reads, a.counter,
                                           static_cast<uint4*>(a.mem), a.stack_cap, a.n_warps, a.n_out, reinterpret_cast<wu64*>(a.aln_out), a.aln_cap);
}

}  // namespace evk::barracuda_exact
