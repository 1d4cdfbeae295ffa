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

}  // namespace evk::barracuda_exact
