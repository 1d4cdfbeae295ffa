// The check both host-compiled inexact kernels (the first pass's, inexact_host.hpp; the later
// passes' warp search) pass against the CPU search: every read answered has the CPU's hit list
// (intervals, counts, score, order) and exactly the reads the CPU predicts are handed back.
#pragma once
#include <cstddef>

#include "core/aln_search.hpp"
#include "inexact_host.hpp"

namespace bct {

struct KernelCheck {
  std::size_t answered = 0, handed_back = 0, with_hits = 0;
  std::size_t beyond_first = 0;  // answered reads whose stack outgrew the first pass's (4,095 entries)
};

// ref: the CPU batch of the same reads and options; (stack_cap, aln_cap): the kernel's limits, for
// the prediction (kernel_answers). Mismatches are gtest failures (the first five of each kind shown).
KernelCheck check_kernel_output(const evk::barracuda_exact::BwtIndex& idx, const evk::barracuda_exact::ReadCodes& reads,
                                const evk::barracuda_exact::AlnOptions& opt, const evk::barracuda_exact::AlnBatch& ref,
                                const KernelOutput& k, int stack_cap, int aln_cap);

}  // namespace bct
