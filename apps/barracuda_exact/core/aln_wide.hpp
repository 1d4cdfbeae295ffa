// The later passes of the inexact search on the GPU, host side without CUDA: the reads the kernel
// hands back (stack or hit list full) are searched again by the "wide" kernel, the original
// kernels/original/barracuda_exact/inexact.cu with 32-bit stack links (32-byte stack entries, so
// STACK_CAP is no longer bound by the 12-bit links) and its duplicate check reading the hits it
// already wrote (no ALN_CAP-sized local arrays), with larger limits and fewer persistent threads.
// Same search, same stopping rules, same hits: only the room differs.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/aln_options.hpp"

namespace evk::barracuda_exact {

constexpr int kAlnWideEntryBytes = 32;  // one stack entry of the wide kernel
constexpr int kAlnWideBlockW = 32;      // threads per block of the later passes
constexpr int kAlnWideMaxStackCap = (1 << 22) - 1;

// The wide kernel's source from the original kernel's text. Throws std::runtime_error when the
// text does not hold exactly the lines the derivation replaces (an edited kernel).
std::string inexact_wide_source(std::string_view original);

// One later pass's limits (the wide kernel's STACK_CAP and ALN_CAP).
struct AlnPassLimits {
  int stack_cap = 0, aln_cap = 0;
  bool operator==(const AlnPassLimits&) const = default;
};

// The later passes after a first pass with (stack_cap, aln_cap): 16383/128, 262143/1024, then
// bwa's queue limit (-m max_entries, + 8: entries pushed by the pop that reaches it; at most
// kAlnWideMaxStackCap)/4096. Stack caps are bounded by that last one; a pass that raises neither
// limit over the one before is left out. Stacks per thread: stack_cap x 32 bytes (512 KiB, 8 MiB,
// 61 MiB at -m 2000000).
std::vector<AlnPassLimits> aln_pass_limits(const AlnOptions& opt, int stack_cap, int aln_cap);

}  // namespace evk::barracuda_exact
