#include "kernel_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/aln_kernel.hpp"

namespace bct {

namespace bc = evk::barracuda_exact;

KernelCheck check_kernel_output(const bc::BwtIndex& idx, const bc::ReadCodes& reads, const bc::AlnOptions& opt,
                                const bc::AlnBatch& ref, const KernelOutput& k, int stack_cap, int aln_cap) {
  KernelCheck c;
  std::uint32_t max_len = 0;  // the kernel's gap-open limit is the batch's
  for (auto l : reads.len) max_len = std::max(max_len, l);
  bc::AlnSearcher searcher(idx, opt);
  searcher.set_batch_max_gapo(std::min(opt.max_gapo, bc::aln_max_diff(opt, static_cast<int>(max_len))));
  int shown = 0, wrong_hand_back = 0;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    bc::AlnSearchStats st;  // the CPU search's mirror of the kernel's bookkeeping
    std::vector<bc::Aln> tmp;
    searcher.search(reads.codes.data() + reads.offset[i], reads.len[i], tmp, &st);
    const bool must = bc::kernel_answers(st, reads.len[i], bc::kAlnKernelMaxLen, stack_cap, aln_cap);
    if (must != (k.n_out[i] != bc::kHandedBack) && wrong_hand_back++ < 5)
      ADD_FAILURE() << "read " << i << ": kernel " << (must ? "hands back" : "answers") << " (peak stored "
                    << st.kernel_peak_stored << ", intervals " << st.n_aln << ", length " << reads.len[i] << ")";
    if (k.n_out[i] == bc::kHandedBack) {
      ++c.handed_back;
      continue;
    }
    ++c.answered;
    c.with_hits += ref.count(i) > 0;
    c.beyond_first += st.kernel_peak_stored > static_cast<std::uint64_t>(bc::kAlnKernelStackCap);
    std::vector<bc::Aln> got;
    for (std::uint32_t a = 0; a < k.n_out[i] && a < static_cast<std::uint32_t>(k.aln_cap); ++a)
      got.push_back(bc::decode_kernel_aln(k.aln_out.data() + (i * static_cast<std::size_t>(k.aln_cap) + a) * 3));
    const std::vector<bc::Aln> want(ref.begin(i), ref.begin(i) + ref.count(i));
    if ((k.n_out[i] > static_cast<std::uint32_t>(k.aln_cap) || got != want) && shown++ < 5)
      ADD_FAILURE() << "read " << i << " (length " << reads.len[i] << "): kernel " << k.n_out[i] << " intervals, CPU "
                    << want.size() << (got.size() == want.size() ? " (same count, different hits)" : "");
  }
  EXPECT_EQ(shown, 0);
  EXPECT_EQ(wrong_hand_back, 0);
  return c;
}

}  // namespace bct
