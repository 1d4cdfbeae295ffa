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

// One later pass's limits: stack entries and hit intervals a read may use.
struct AlnPassLimits {
  int stack_cap = 0, aln_cap = 0;
  bool operator==(const AlnPassLimits&) const = default;
};

// The later passes after a first pass with (stack_cap, aln_cap): 16383/128, 262143/1024, then
// bwa's queue limit (-m max_entries, + 8: entries pushed by the pop that reaches it; at most
// kAlnPassMaxStackCap)/4096. Stack caps are bounded by that last one; a pass that raises neither
// limit over the one before is left out. A warp's memory: about stack_cap x 32 bytes (0.7 MiB,
// 8.3 MiB, 64 MiB at -m 2000000; aln_warp_bytes).
std::vector<AlnPassLimits> aln_pass_limits(const AlnOptions& opt, int stack_cap, int aln_cap);

// How a GPU's memory left after the index is shared by the inexact search's streams (lanes): each
// stream's batches take room beside its stacks (aln_stream_room: the reads, the hit lists raw and
// compacted, their positions, and the later passes' least room); of what is left two thirds go to
// the stacks, split evenly, at most kAlnStackBudget a stream. A GPU too small for `streams` such
// streams with kAlnStackMin of stacks each gets fewer (at least 1).
// Device memory for the inexact search's stacks: at most this a stream (or aligner).
constexpr std::size_t kAlnStackBudget = std::size_t{16} << 30;
constexpr std::size_t kAlnStackMin = std::size_t{512} << 20;
struct AlnStreamPlan {
  int streams = 1;
  std::size_t stack_budget = 0;  // bytes of stacks a stream
};
std::size_t aln_stream_room(std::size_t batch_reads);
AlnStreamPlan aln_stream_plan(std::size_t free_bytes, int streams, std::size_t batch_reads);

}  // namespace evk::barracuda_exact
