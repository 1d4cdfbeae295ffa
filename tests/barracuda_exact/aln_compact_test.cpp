// The inexact kernel's output compacted (compact_kernel_output, the CPU oracle of
// core/aln_compact.cu) and the merge of the packed layout (merge_kernel_output_packed, what the GPU
// backend merges): edge cases by hand (no reads, reads with 0 hits, handed-back reads, reads at the
// cap, unanswered reads), and a batch whose packed output is built from the CPU search's hit lists
// with every third read handed back: the merge gives the CPU's batch.
#include <gtest/gtest.h>

#include <stdexcept>

#include "gi/aln_gi_problem.hpp"
#include "core/aln_kernel.hpp"
#include "core/aln_search.hpp"
#include "gi/gi_problem.hpp"

namespace bc = evk::barracuda_exact;

namespace {
// aln_out with word w of read i's slot = 1000 * i + w
std::vector<std::uint64_t> slots(std::size_t n, int cap) {
  std::vector<std::uint64_t> v(n * static_cast<std::size_t>(cap) * 3);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t w = 0; w < static_cast<std::size_t>(cap) * 3; ++w) v[i * static_cast<std::size_t>(cap) * 3 + w] = 1000 * i + w;
  return v;
}
// the kernel's packing of one interval (decode_kernel_aln's inverse)
void encode(const bc::Aln& a, std::vector<std::uint64_t>& out) {
  out.push_back(a.k);
  out.push_back(a.l);
  out.push_back(std::uint64_t{a.n_mm} | std::uint64_t{a.n_gapo} << 8 | std::uint64_t{a.n_gape} << 16 |
                std::uint64_t{a.n_ins} << 24 | std::uint64_t{a.n_del} << 34 | static_cast<std::uint64_t>(a.score) << 44);
}
}  // namespace

TEST(BarracudaAlnCompact, EntriesOfAReadFollowTheKernelsMarkers) {
  EXPECT_EQ(bc::kernel_entries(0, 16), 0u);
  EXPECT_EQ(bc::kernel_entries(7, 16), 7u);
  EXPECT_EQ(bc::kernel_entries(16, 16), 16u);
  EXPECT_EQ(bc::kernel_entries(17, 16), 0u);          // not answered
  EXPECT_EQ(bc::kernel_entries(0xa5a5a5a5u, 16), 0u);  // the poison
  EXPECT_EQ(bc::kernel_entries(bc::kHandedBack, 16), 0u);
}

TEST(BarracudaAlnCompact, PacksTheUsedEntriesInReadOrder) {
  EXPECT_TRUE(bc::compact_kernel_output({}, {}, 3).empty());
  const std::vector<std::uint32_t> n_out{2, bc::kHandedBack, 0, 3, 4, 1, 0xa5a5a5a5u};
  const std::vector<std::uint64_t> want{0,    1,    2,    3,    4,    5,                                  // read 0: 2 entries
                                        3000, 3001, 3002, 3003, 3004, 3005, 3006, 3007, 3008,          // read 3: at the cap
                                        5000, 5001, 5002};                                             // read 5
  EXPECT_EQ(bc::compact_kernel_output(n_out, slots(n_out.size(), 3), 3), want);
  const std::vector<std::uint32_t> none{0, bc::kHandedBack, 0};
  EXPECT_TRUE(bc::compact_kernel_output(none, slots(3, 2), 2).empty());
  EXPECT_THROW(bc::compact_kernel_output(n_out, slots(n_out.size() - 1, 3), 3), std::invalid_argument);
}

TEST(BarracudaAlnCompact, MergeOfThePackedLayoutEqualsTheCpuBatch) {
  const bc::BwtIndex& idx = bc::gi_reference_index();
  const bc::AlnOptions opt;
  const bc::ReadCodes reads = bc::inexact_gi_reads(11, false, 3000);
  const bc::AlnBatch ref = bc::aln_search_batch(idx, reads, opt, 2);
  // what a kernel with ALN_CAP 2 would hand back: every third read and those with more intervals
  const int cap = 2;
  std::vector<std::uint32_t> n_out;
  std::vector<std::uint64_t> packed;
  std::size_t back = 0, zero = 0, at_cap = 0;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    if (i % 3 == 0 || ref.count(i) > static_cast<std::uint32_t>(cap)) {
      n_out.push_back(bc::kHandedBack);
      ++back;
      continue;
    }
    n_out.push_back(ref.count(i));
    zero += ref.count(i) == 0;
    at_cap += ref.count(i) == static_cast<std::uint32_t>(cap);
    for (std::uint32_t a = 0; a < ref.count(i); ++a) encode(ref.begin(i)[a], packed);
  }
  EXPECT_GT(zero, 0u);  // the batch has answered reads without hits and reads at the cap
  EXPECT_GT(at_cap, 0u);
  bc::AlnBatch merged;
  EXPECT_EQ(bc::merge_kernel_output_packed(idx, reads, opt, n_out, packed, cap, 2, merged), back);
  EXPECT_EQ(merged.offset, ref.offset);
  EXPECT_TRUE(merged.alns == ref.alns);
  std::printf("  %zu reads: %zu handed back, %zu answered without hits, %zu at the cap\n", reads.size(), back, zero, at_cap);

  // no reads
  const bc::ReadCodes empty;
  bc::AlnBatch none;
  EXPECT_EQ(bc::merge_kernel_output_packed(idx, empty, opt, {}, {}, cap, 2, none), 0u);
  EXPECT_EQ(none.size(), 0u);
  // a read neither answered nor handed back, or packed words that do not match n_out: an error
  std::vector<std::uint32_t> bad = n_out;
  bad[1] = 0xa5a5a5a5u;
  EXPECT_THROW(bc::merge_kernel_output_packed(idx, reads, opt, bad, packed, cap, 2, merged), std::runtime_error);
  std::vector<std::uint64_t> longer = packed;
  longer.insert(longer.end(), {1, 2, 3});
  EXPECT_THROW(bc::merge_kernel_output_packed(idx, reads, opt, n_out, longer, cap, 2, merged), std::runtime_error);
  if (!packed.empty()) {
    const std::span<const std::uint64_t> shorter(packed.data(), packed.size() - 3);
    EXPECT_THROW(bc::merge_kernel_output_packed(idx, reads, opt, n_out, shorter, cap, 2, merged), std::runtime_error);
  }
  EXPECT_THROW(bc::merge_kernel_output_packed(idx, reads, opt, std::span<const std::uint32_t>(n_out.data(), 5), packed, cap, 2,
                                              merged),
               std::invalid_argument);
}
