#include "core/aln_passes.hpp"

#include <algorithm>
#include <cstdint>

namespace evk::barracuda_exact {

std::vector<AlnPassLimits> aln_pass_limits(const AlnOptions& opt, int stack_cap, int aln_cap) {
  const std::int64_t queue = std::max(opt.max_entries, 0);
  const int bound = static_cast<int>(std::min<std::int64_t>(queue + 8, kAlnPassMaxStackCap));
  std::vector<AlnPassLimits> out;
  AlnPassLimits prev{stack_cap, aln_cap};
  for (const AlnPassLimits p : {AlnPassLimits{16383, 128}, AlnPassLimits{262143, 1024}, AlnPassLimits{bound, 4096}}) {
    const AlnPassLimits q{std::min(p.stack_cap, bound), p.aln_cap};
    if (q.stack_cap <= prev.stack_cap && q.aln_cap <= prev.aln_cap) continue;
    out.push_back(q);
    prev = {std::max(prev.stack_cap, q.stack_cap), std::max(prev.aln_cap, q.aln_cap)};
  }
  return out;
}

std::size_t aln_stream_room(std::size_t batch_reads) {
  // per read: the raw hit list (16 intervals x 24 bytes, +25% slack) and as much compacted, packed
  // bases and lengths, ~2 intervals' positions (4 x 8 bytes and k, l each, +25%): ~1.3 KB
  return batch_reads * 1280 + (std::size_t{256} << 20);
}

AlnStreamPlan aln_stream_plan(std::size_t free_bytes, int streams, std::size_t batch_reads) {
  const std::size_t room = aln_stream_room(batch_reads);
  AlnStreamPlan p;
  for (p.streams = std::max(streams, 1);; --p.streams) {
    const std::size_t s = static_cast<std::size_t>(p.streams), taken = s * room;
    p.stack_budget = free_bytes > taken ? std::min(kAlnStackBudget, (free_bytes - taken) / 3 * 2 / s) : 0;
    if (p.stack_budget >= kAlnStackMin || p.streams == 1) return p;
  }
}

}  // namespace evk::barracuda_exact
