#include "inexact_host.hpp"

#include <algorithm>

#include "core/aln_kernel.hpp"

namespace kernel_default {
#include "inexact_host_shim.hpp"
#include "inexact.cu"
#include "inexact_host_run.inc"
}  // namespace kernel_default

namespace kernel_small {
bct::KernelOutput run(const evk::barracuda_exact::BwtIndex& idx, const evk::barracuda_exact::ReadCodes& reads,
                      const evk::barracuda_exact::AlnOptions& opt, unsigned tid, unsigned n_threads);
}

namespace bct {
KernelOutput run_inexact_kernel_on_host(const evk::barracuda_exact::BwtIndex& idx,
                                        const evk::barracuda_exact::ReadCodes& reads,
                                        const evk::barracuda_exact::AlnOptions& opt, bool small, unsigned tid,
                                        unsigned n_threads) {
  return small ? kernel_small::run(idx, reads, opt, tid, n_threads) : kernel_default::run(idx, reads, opt, tid, n_threads);
}
}  // namespace bct
