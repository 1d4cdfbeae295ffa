// The later GPU passes' host side without a GPU (core/aln_passes.hpp, core/aln_kernel.hpp): the
// passes' limits; the gathering of the handed-back reads and the splicing of a pass's answers
// (against a per-read reference on synthetic outputs); and the whole chain on the host (a tiny first
// pass, the warp-per-read pass over what it hands back, the CPU for the rest) equal to the CPU batch.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "aln_settings.hpp"
#include "aln_oracle.hpp"
#include "core/aln_kernel.hpp"
#include "core/aln_search.hpp"
#include "core/aln_passes.hpp"
#include "evk_testing.hpp"
#include "inexact_host.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;

TEST(BarracudaAlnPasses, LimitsGrowUpToTheQueueLimit) {
  using L = bc::AlnPassLimits;
  EXPECT_EQ(bc::aln_pass_limits(bc::AlnOptions{}, 4095, 16),
            (std::vector<L>{{16383, 128}, {262143, 1024}, {2000008, 4096}}));  // -m 2000000: + 8 pushes of the last pop
  bc::AlnOptions small;
  small.max_entries = 1000;  // the queue limit bounds every stack: only the hit list grows
  EXPECT_EQ(bc::aln_pass_limits(small, 4095, 16), (std::vector<L>{{1008, 128}, {1008, 1024}, {1008, 4096}}));
  bc::AlnOptions huge;
  huge.max_entries = 2000000000;
  EXPECT_EQ(bc::aln_pass_limits(huge, 4095, 16).back(), (L{bc::kAlnPassMaxStackCap, 4096}));
  EXPECT_EQ(bc::aln_pass_limits(bc::AlnOptions{}, 300000, 2000), (std::vector<L>{{2000008, 4096}}));  // nothing raised: left out
  EXPECT_EQ(bc::aln_pass_limits(bc::AlnOptions{}, 40, 2).front(), (L{16383, 128}));
}

TEST(BarracudaAlnPasses, HandedBackReadsAndTheirGathering) {
  const std::vector<std::uint32_t> n_out{0, bc::kHandedBack, 3, bc::kHandedBack, 16};
  EXPECT_EQ(bc::handed_back_reads(n_out, 16), (std::vector<std::uint32_t>{1, 3}));
  EXPECT_THROW(bc::handed_back_reads(n_out, 15), std::runtime_error);  // 16 > ALN_CAP: not answered
  EXPECT_TRUE(bc::handed_back_reads({}, 16).empty());
  bc::ReadCodes r;
  for (const char* s : {"ACGTAC", "GGN", "TTTTTTTT", "CA"}) r.add(s, std::char_traits<char>::length(s));
  r.len[2] = 5;  // trimmed: the searched length
  const std::vector<std::uint32_t> ids{2, 1};
  const bc::ReadCodes g = bc::gather_reads(r, ids);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g.len, (std::vector<std::uint32_t>{5, 3}));
  EXPECT_EQ(g.offset, (std::vector<std::uint64_t>{0, 5}));
  EXPECT_EQ(g.codes, (std::vector<std::uint8_t>{3, 3, 3, 3, 3, 2, 2, 4}));
  EXPECT_EQ(bc::gather_reads(r, {}).size(), 0u);
}

TEST(BarracudaAlnPasses, SpliceEqualsAPerReadReference) {
  std::mt19937_64 rng(41);
  for (int round = 0; round < 50; ++round) {
    const std::size_t n = rng() % 40;
    // per read: its entries (3 words each) or handed back, before and after the pass
    std::vector<std::vector<std::uint64_t>> before(n), after(n);
    std::vector<bool> back(n), back_after(n);
    std::vector<std::uint32_t> n_out(n), ids, pass_n_out;
    std::vector<std::uint64_t> packed, pass_packed;
    for (std::size_t i = 0; i < n; ++i) {
      back[i] = rng() % 3 == 0;
      if (back[i]) {
        n_out[i] = bc::kHandedBack;
        ids.push_back(static_cast<std::uint32_t>(i));
        back_after[i] = rng() % 3 == 0;
        if (back_after[i]) {
          pass_n_out.push_back(bc::kHandedBack);
          continue;
        }
        const std::uint32_t c = static_cast<std::uint32_t>(rng() % 9);  // up to the pass's cap 8
        pass_n_out.push_back(c);
        for (std::uint32_t w = 0; w < 3 * c; ++w) after[i].push_back(rng());
        pass_packed.insert(pass_packed.end(), after[i].begin(), after[i].end());
        continue;
      }
      const std::uint32_t c = static_cast<std::uint32_t>(rng() % 3);
      n_out[i] = c;
      for (std::uint32_t w = 0; w < 3 * c; ++w) before[i].push_back(rng());
      packed.insert(packed.end(), before[i].begin(), before[i].end());
      after[i] = before[i];
    }
    bc::splice_pass_output(n_out, packed, ids, pass_n_out, pass_packed, 8);
    std::vector<std::uint64_t> want;
    for (std::size_t i = 0; i < n; ++i) {
      const bool still = back[i] && back_after[i];
      EXPECT_EQ(n_out[i], still ? bc::kHandedBack : static_cast<std::uint32_t>(after[i].size() / 3)) << "read " << i;
      want.insert(want.end(), after[i].begin(), after[i].end());
    }
    EXPECT_EQ(packed, want);
  }
}

TEST(BarracudaAlnPasses, SpliceRefusesInconsistentOutputs) {
  const std::uint32_t B = bc::kHandedBack;
  auto splice = [](std::vector<std::uint32_t> n_out, std::vector<std::uint64_t> packed, std::vector<std::uint32_t> ids,
                   std::vector<std::uint32_t> pn, std::vector<std::uint64_t> pp) {
    bc::splice_pass_output(n_out, packed, ids, pn, pp, 4);
  };
  EXPECT_NO_THROW(splice({1, B, B}, {1, 2, 3}, {1, 2}, {1, B}, {4, 5, 6}));
  EXPECT_THROW(splice({1, B, B}, {1, 2, 3}, {0, 2}, {1, B}, {4, 5, 6}), std::runtime_error);     // read 0 was answered
  EXPECT_THROW(splice({1, B, B}, {1, 2, 3}, {2, 1}, {1, B}, {4, 5, 6}), std::runtime_error);     // out of order
  EXPECT_THROW(splice({1, B, B}, {1, 2, 3}, {1, 2}, {5, B}, std::vector<std::uint64_t>(15)), std::runtime_error);  // over the cap
  EXPECT_THROW(splice({1, B, B}, {1, 2, 3}, {1, 2}, {1, B}, {4, 5}), std::runtime_error);        // pass entries short
  EXPECT_THROW(splice({1, B, B}, {1, 2}, {1, 2}, {1, B}, {4, 5, 6}), std::runtime_error);        // batch entries short
  EXPECT_THROW(splice({1, B, B}, {1, 2, 3}, {1, 2}, {1}, {4, 5, 6}), std::invalid_argument);     // one count per read
  EXPECT_THROW(splice({1, B, B}, {1, 2, 3}, {1, 7}, {1, B}, {4, 5, 6}), std::runtime_error);     // no such read
}

namespace {
struct HostChain {
  bc::AlnBatch merged;
  std::size_t first_back = 0, warp_answered = 0, cpu = 0, beyond_4095 = 0;
};

// The backend's chain on the host: the tiny first pass (STACK_CAP 40, ALN_CAP 2), the warp-per-read
// search (stacks of 20000 entries, ALN_CAP 24) over the reads it handed back, the CPU for the rest;
// each of its answers and hand-backs checked against the CPU search's prediction.
HostChain run_chain(const bc::BwtIndex& idx, const bc::ReadCodes& reads, const bc::AlnOptions& opt) {
  HostChain c;
  const bct::KernelOutput first = bct::run_inexact_kernel_on_host(idx, reads, opt, true);
  std::vector<std::uint32_t> n_out = first.n_out;
  std::vector<std::uint64_t> packed = bc::compact_kernel_output(first.n_out, first.aln_out, first.aln_cap);
  const std::vector<std::uint32_t> ids = bc::handed_back_reads(n_out, first.aln_cap);
  c.first_back = ids.size();
  const bc::ReadCodes sub = bc::gather_reads(reads, ids);
  const bct::KernelOutput warp = bct::run_warp_kernel_on_host(idx, sub, opt);
  // the CPU's prediction of the warp pass's hand-backs (the host build's gap-open limit is the sub-batch's)
  std::uint32_t max_len = 0;
  for (auto l : sub.len) max_len = std::max(max_len, l);
  bc::AlnSearcher s(idx, opt);
  s.set_batch_max_gapo(std::min(opt.max_gapo, bc::aln_max_diff(opt, static_cast<int>(max_len))));
  int wrong = 0;
  for (std::size_t j = 0; j < sub.size(); ++j) {
    bc::AlnSearchStats st;
    std::vector<bc::Aln> tmp;
    s.search(sub.codes.data() + sub.offset[j], sub.len[j], tmp, &st);
    c.beyond_4095 += st.kernel_peak_stored > 4095 && warp.n_out[j] != bc::kHandedBack;
    const bool must = bc::kernel_answers(st, sub.len[j], bc::kAlnKernelMaxLen, 20000, 24);
    if (must != (warp.n_out[j] != bc::kHandedBack) && wrong++ < 5)
      ADD_FAILURE() << "read " << ids[j] << ": the warp pass " << (must ? "hands back" : "answers") << " (peak stored "
                    << st.kernel_peak_stored << ", intervals " << st.n_aln << ")";
    c.warp_answered += warp.n_out[j] != bc::kHandedBack;
  }
  bc::splice_pass_output(n_out, packed, ids, warp.n_out, bc::compact_kernel_output(warp.n_out, warp.aln_out, warp.aln_cap),
                         warp.aln_cap);
  c.cpu = bc::merge_kernel_output_packed(idx, reads, opt, n_out, packed, warp.aln_cap, 2, c.merged);
  return c;
}
}  // namespace

TEST(BarracudaAlnPasses, HostChainEqualsCpuAtDefaultsAndAncientDnaSettings) {
  evk::testing::TempDir dir;
  const auto ref = bct::tricky_reference(54);
  bct::write_fasta(dir / "t.fa", ref);
  bct::planted_reads((dir / "t.fa").string(), dir / "p.fq", 600, 25, 120, 12, bct::tricky_repeats());
  const bc::BwtIndex idx = bc::build_index(ref);
  const bct::Reads r = bct::load_reads((dir / "p.fq").string());
  for (const bc::AlnOptions& opt : {bc::AlnOptions{}, bct::adna_options()}) {
    SCOPED_TRACE(opt.seed_len == 1024 ? "-l 1024 -n 0.01 -o 2" : "defaults");
    const HostChain c = run_chain(idx, r.codes, opt);
    const bc::AlnBatch want = bc::aln_search_batch(idx, r.codes, opt, 2);
    EXPECT_EQ(c.merged.offset, want.offset);
    EXPECT_TRUE(c.merged.alns == want.alns);
    EXPECT_GT(c.first_back, 100u);                  // the tiny first pass hands many back
    EXPECT_GT(c.warp_answered, c.first_back * 3 / 4);  // the warp pass answers most of them
    EXPECT_EQ(c.cpu, c.first_back - c.warp_answered);
    if (opt.seed_len == 1024) {
      EXPECT_GT(c.beyond_4095, 50u);  // stacks the original's 12-bit links cannot hold
    }
    std::printf("  %zu reads: first pass handed back %zu, warp pass answered %zu (%zu beyond 4095 stored), CPU %zu\n",
                r.codes.size(), c.first_back, c.warp_answered, c.beyond_4095, c.cpu);
  }
}

// A GPU's memory left after the index, shared by the inexact search's streams: each stream's batch
// buffers first (aln_stream_room), two thirds of the rest for stacks split evenly (at most 16 GiB a
// stream), and fewer streams where that leaves under 512 MiB of stacks a stream.
TEST(BarracudaAlnPasses, StreamPlanLeavesRoomForTheBatchesAndDropsStreamsOnSmallGpus) {
  constexpr std::size_t GiB = std::size_t{1} << 30, MiB = std::size_t{1} << 20, batch = 1 << 20;
  const std::size_t room = bc::aln_stream_room(batch);
  EXPECT_EQ(room, batch * 1280 + 256 * MiB);  // ~1.5 GiB for 1 M reads
  // an H200 with a human-sized index: 4 streams of 16 GiB (the cap)
  auto p = bc::aln_stream_plan(134 * GiB, 4, batch);
  EXPECT_EQ(p.streams, 4);
  EXPECT_EQ(p.stack_budget, 16 * GiB);
  // 11 GiB free (a 16 GB card): 4 streams' buffers take 6 GiB; 2/3 of the 5 left over 4 streams
  p = bc::aln_stream_plan(11 * GiB, 4, batch);
  EXPECT_EQ(p.streams, 4);
  EXPECT_EQ(p.stack_budget, (11 * GiB - 4 * room) / 3 * 2 / 4);
  EXPECT_GE(p.stack_budget, 512 * MiB);
  // 3 GiB free (an 8 GB card): 4 and 2 streams leave no stacks, 1 stream 2/3 of what its buffers leave
  p = bc::aln_stream_plan(3 * GiB, 4, batch);
  EXPECT_EQ(p.streams, 1);
  EXPECT_EQ(p.stack_budget, (3 * GiB - room) / 3 * 2);
  // bwa's batch of 262,144 reads needs less: 2 streams fit there
  EXPECT_EQ(bc::aln_stream_plan(3 * GiB, 4, 262144).streams, 2);
  // not even one stream's buffers: 1 stream, no planned stacks (the aligner takes its default share)
  p = bc::aln_stream_plan(GiB, 4, batch);
  EXPECT_EQ(p.streams, 1);
  EXPECT_EQ(p.stack_budget, 0u);
}
