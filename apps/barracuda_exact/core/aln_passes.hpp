// The later passes of the inexact search on the GPU, host side without CUDA: the reads the first
// pass hands back (stack or hit list full) are searched again with one warp per read
// (core/aln_warp.cuh) and larger limits. Same search, same stopping rules, same hits: only the room
// differs.
#pragma once
#include <cstddef>
#include <vector>

#include "core/aln_options.hpp"

namespace evk::barracuda_exact {

constexpr int kAlnPassMaxStackCap = (1 << 22) - 1;  // entries of a later pass's stack (128 MiB a warp)

// One later pass's limits: stack entries and hit intervals a read may use; `reserved`: the pass runs
// only as many warps as the stack memory holds stack_cap entries for at once (no read is handed back
// for want of memory), else as many as the GPU keeps resident, sharing the memory as they need it (a
// read that finds none left goes to the next pass).
struct AlnPassLimits {
  int stack_cap = 0, aln_cap = 0;
  bool reserved = false;
  bool operator==(const AlnPassLimits&) const = default;
};

// The later passes after a first pass with (stack_cap, aln_cap): bwa's queue limit (-m max_entries,
// + 8: entries pushed by the pop that reaches it; at most kAlnPassMaxStackCap) as the stack with
// 128, then 1024 hit intervals (shared memory), then 4096 (reserved). A pass that raises neither limit
// over the one before is left out, unless it is the reserved one after a shared one. A warp's stack
// at the queue limit: about 32 bytes an entry (64 MiB at -m 2000000; aln_warp_chunks).
std::vector<AlnPassLimits> aln_pass_limits(const AlnOptions& opt, int stack_cap, int aln_cap);

}  // namespace evk::barracuda_exact
