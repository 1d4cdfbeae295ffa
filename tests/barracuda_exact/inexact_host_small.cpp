// The kernel built with a tiny stack and hit list, so that the hand-back path is exercised.
#include <algorithm>

#include "core/aln_kernel.hpp"
#include "inexact_host.hpp"

#define STACK_CAP 40
#define ALN_CAP 2
#define cuda_inexact_match cuda_inexact_match_small
namespace kernel_small {
#include "inexact_host_shim.hpp"
#include "inexact.cu"
#include "inexact_host_run.inc"
}  // namespace kernel_small
