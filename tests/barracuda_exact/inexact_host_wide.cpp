// The wide kernel (core/aln_wide.hpp: the original's text with 32-bit stack links, derived at build
// time by wide_source_main.cpp) compiled for the host, with a stack beyond the original's 4095
// entries and a longer hit list, so that its search logic is checked without a GPU.
#include <algorithm>

#include "core/aln_kernel.hpp"
#include "inexact_host.hpp"

#define STACK_CAP 20000
#define ALN_CAP 24
#define HOST_UINT4_PER_ENTRY 2  // a wide entry: uint4 + link (20 bytes on the host)
#define cuda_inexact_match cuda_inexact_match_wide
namespace kernel_wide {
#include "inexact_host_shim.hpp"
#include "inexact_wide.cu"
#include "inexact_host_run.inc"
}  // namespace kernel_wide

namespace bct {
KernelOutput run_wide_kernel_on_host(const evk::barracuda_exact::BwtIndex& idx, const evk::barracuda_exact::ReadCodes& reads,
                                     const evk::barracuda_exact::AlnOptions& opt, unsigned tid, unsigned n_threads) {
  return kernel_wide::run(idx, reads, opt, tid, n_threads);
}
}  // namespace bct
