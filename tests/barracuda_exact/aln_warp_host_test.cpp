// The later passes' warp-per-read search (core/aln_warp.cuh) without a GPU: compiled for the host
// with its lanes run in turn (inexact_host_warp.cpp) and checked read by read against the CPU search
// (aln_search, itself equal to bwa aln): every read it answers has the identical hit list (intervals,
// counts, score, order), and it hands back exactly the reads the CPU search predicts for its limits
// (kernel_answers: the first pass's bookkeeping against stack_cap and aln_cap). Outputs poisoned.
// Lanes writing the kernel's WARP_STEPS records ahead and 1 (the replay then stops at every step)
// must give the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "aln_settings.hpp"
#include "aln_oracle.hpp"
#include "core/aln_kernel.hpp"
#include "core/aln_search.hpp"
#include "evk_testing.hpp"
#include "inexact_host.hpp"
#include "kernel_check.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
using evk::testing::TempDir;

namespace {

using Check = bct::KernelCheck;

Check check_warp(const bc::BwtIndex& idx, const bc::ReadCodes& reads, const bc::AlnOptions& opt, std::uint64_t stack_cap,
                 int aln_cap, int steps) {
  const bc::AlnBatch ref = bc::aln_search_batch(idx, reads, opt, 2);
  const bct::KernelOutput k = bct::run_warp_kernel_on_host(idx, reads, opt, stack_cap, aln_cap, steps);
  const Check c = bct::check_kernel_output(idx, reads, opt, ref, k, static_cast<int>(stack_cap), aln_cap);
  std::printf("  %zu reads: %zu answered (%zu with hits, %zu beyond the first pass's stack), %zu handed back\n", reads.size(),
              c.answered, c.with_hits, c.beyond_first, c.handed_back);
  return c;
}

struct Fixture {
  TempDir dir;
  bc::BwtIndex idx;
  bct::Reads reads;
  Fixture(std::uint64_t seed, std::size_t n, int min_len, int max_len, int max_mm) {
    const auto ref = bct::tricky_reference(seed);
    bct::write_fasta(dir / "t.fa", ref);
    bct::planted_reads((dir / "t.fa").string(), dir / "p.fq", n, min_len, max_len, max_mm, bct::tricky_repeats());
    idx = bc::build_index(ref);
    reads = bct::load_reads((dir / "p.fq").string());
  }
};

}  // namespace

TEST(BarracudaAlnWarpOnHost, EqualsCpuAtDefaultsAndAncientDnaSettings) {
  Fixture f(61, 1200, 20, 120, 10);
  for (const bc::AlnOptions& opt : {bc::AlnOptions{}, bct::adna_options()}) {
    for (const int steps : {bct::kKernelSteps, 1}) {
      SCOPED_TRACE(std::string(opt.seed_len == 1024 ? "-l 1024 -n 0.01 -o 2" : "defaults") + (steps == 1 ? ", 1 step" : ", the kernel's steps"));
      const Check c = check_warp(f.idx, f.reads.codes, opt, 40000, 64, steps);
      EXPECT_GT(c.with_hits, 800u);
      EXPECT_LT(c.handed_back, 120u);  // at -l 1024 -n 0.01 -o 2 some need more than 40,000 entries
      if (opt.seed_len == 1024) {
        EXPECT_GT(c.beyond_first, 200u);  // stacks the first pass cannot hold
        EXPECT_GT(c.handed_back, 10u);
      }
    }
  }
}

TEST(BarracudaAlnWarpOnHost, EqualsCpuWithOptions) {
  Fixture f(62, 800, 25, 150, 10);
  const bc::AlnOptions o = bct::varied_aln_options();
  const Check c = check_warp(f.idx, f.reads.codes, o, 20000, 24, bct::kKernelSteps);
  EXPECT_GT(c.answered, 700u);
  bc::AlnOptions n = bct::adna_options();  // -n 0.04 -i 2 -k 1 -e 2 -q 15 (eager-like), and a small queue limit (-m)
  n.fnr = 0.04f;
  n.indel_end_skip = 2;
  n.max_seed_diff = 1;
  n.max_gape = 2;
  n.max_entries = 3000;
  const Check d = check_warp(f.idx, f.reads.codes, n, 20000, 24, bct::kKernelSteps);
  EXPECT_GT(d.answered, 700u);
}

// Penalties under which different kinds of differences share a score bucket (a mismatch = a gap open
// plus an extension): a first hit lowers the maximum differences for the rest of its bucket, whose
// chains the lanes had walked ahead with the old limit, so they must walk them again.
TEST(BarracudaAlnWarpOnHost, LanesWalkAgainAfterAHitChangesTheLimits) {
  Fixture f(65, 1500, 20, 40, 4);
  bc::AlnOptions o;
  o.max_diff = 4;
  o.fnr = -1.0f;
  o.seed_len = 1024;
  o.s_mm = 2;
  o.s_gapo = 1;
  o.s_gape = 1;
  o.max_gapo = 2;
  o.max_gape = 6;
  o.indel_end_skip = 2;
  const Check c = check_warp(f.idx, f.reads.codes, o, 40000, 64, bct::kKernelSteps);
  EXPECT_GT(c.with_hits, 1200u);
}

TEST(BarracudaAlnWarpOnHost, HandsBackWhenTheStackOrHitListIsFull) {
  Fixture f(63, 800, 25, 150, 11);
  for (const int steps : {bct::kKernelSteps, 1}) {
    SCOPED_TRACE(steps == 1 ? "1 step" : "the kernel's steps");
    const Check c = check_warp(f.idx, f.reads.codes, bct::adna_options(), 60, 2, steps);
    EXPECT_GT(c.handed_back, 150u);
    EXPECT_GT(c.answered, 20u);
  }
}

TEST(BarracudaAlnWarpOnHost, ShortRandomReadsWithManyIntervals) {
  Fixture f(64, 10, 30, 40, 2);
  bc::ReadCodes r;
  std::mt19937_64 rng(64);
  for (int i = 0; i < 400; ++i) {
    std::string s(9 + rng() % 4, 'A');
    for (char& ch : s) ch = "ACGTN"[rng() % 41 == 0 ? 4 : rng() & 3];
    r.add(s.data(), s.size());
  }
  for (const bc::AlnOptions& opt : {bc::AlnOptions{}, bct::adna_options()}) {
    const Check c = check_warp(f.idx, r, opt, 20000, 200, bct::kKernelSteps);
    EXPECT_GT(c.with_hits, 150u);
  }
}

// A penalty of 0 (bwa takes -M/-O/-E 0) pushes into the bucket being replayed, whose next entry bwa
// pops is the last pushed: the lanes then take one chain at a time (with 32, -M 0 gave other hits).
TEST(BarracudaAlnWarpOnHost, ZeroPenaltyReplaysAlone) {
  Fixture f(66, 600, 20, 60, 4);
  bc::AlnOptions o = bct::adna_options();
  for (int* pen : {&o.s_mm, &o.s_gape}) {
    bc::AlnOptions z = o;
    *(pen == &o.s_mm ? &z.s_mm : &z.s_gape) = 0;
    const Check c = check_warp(f.idx, f.reads.codes, z, 40000, 64, bct::kKernelSteps);
    EXPECT_GT(c.with_hits, 400u);
  }
}
