// The inexact GPU kernel's source (kernels/original/barracuda_exact/inexact.cu) compiled for the
// host: CUDA's built-ins replaced by plain C++ (__ldg a load, __popc a popcount, atomicAdd a plain
// add, blockIdx/threadIdx variables), so that its search logic runs here, thread by thread, and is
// checked against the CPU backend without a GPU. Two builds: the default limits and a tiny stack
// (inexact_host_small.cpp) for the handed-back path.
#pragma once
#include <cstdint>
#include <vector>

#include "core/aln_options.hpp"
#include "core/index.hpp"
#include "core/match.hpp"

namespace bct {

struct KernelOutput {
  std::vector<std::uint32_t> n_out;
  std::vector<std::uint64_t> aln_out;
  int aln_cap = 0;
};
// Runs the kernel's entry for emulated thread `tid` of n_threads (it takes every read from the
// shared counter). small: the build with STACK_CAP 40 and ALN_CAP 2.
KernelOutput run_inexact_kernel_on_host(const evk::barracuda_exact::BwtIndex& idx,
                                        const evk::barracuda_exact::ReadCodes& reads,
                                        const evk::barracuda_exact::AlnOptions& opt, bool small = false,
                                        unsigned tid = 3, unsigned n_threads = 5);
// The later passes' warp-per-read search (inexact_host_warp.cpp) with stacks of stack_cap entries and
// hit lists of aln_cap, its lanes writing `steps` records ahead (1, or kKernelSteps: the kernel's
// WARP_STEPS).
constexpr int kKernelSteps = 0;
KernelOutput run_warp_kernel_on_host(const evk::barracuda_exact::BwtIndex& idx, const evk::barracuda_exact::ReadCodes& reads,
                                     const evk::barracuda_exact::AlnOptions& opt, std::uint64_t stack_cap = 20000,
                                     int aln_cap = 24, int steps = kKernelSteps);

}  // namespace bct
