// GPU: the later passes of the inexact search (core/aln_gpu_pass.hpp). A first pass with tiny limits
// (STACK_CAP 40, ALN_CAP 2) hands many reads back, short random reads have dozens of hit intervals,
// and the default first pass at ancient-DNA settings (-l 1024 -n 0.01 -o 2) overflows its stacks; the
// warp-per-read passes answer exactly the reads the CPU search predicts for their limits, the CPU
// gets only what the last pass hands back (and reads over MAX_LEN), and the batch equals the CPU's.
// Stack memory too small for one warp of a pass: that pass and the later ones leave their reads to
// the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "aln_settings.hpp"
#include "gi/aln_gi_problem.hpp"
#include "core/aln_gpu.hpp"
#include "core/aln_kernel.hpp"
#include "core/aln_search.hpp"
#include "core/aln_passes.hpp"
#include "gi/gi_problem.hpp"
#include "evk/parallel.hpp"
#include "evk_testing.hpp"

namespace bc = evk::barracuda_exact;

namespace {

// The GI reads plus short random reads (15..17 bp: dozens of one-mismatch intervals each).
bc::ReadCodes test_reads(std::uint64_t seed, std::size_t n) {
  bc::ReadCodes r = bc::inexact_gi_reads(seed, false, n);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < n / 10; ++i) {
    std::string s(15 + rng() % 3, 'A');
    for (char& c : s) c = "ACGT"[rng() & 3];
    r.add(s.data(), s.size());
  }
  return r;
}

struct Expected {
  std::uint64_t first_back = 0, cpu = 0;
  std::vector<std::uint64_t> reads, answered;  // per later pass
};

// What each pass must do, from the CPU search's mirror of the kernel's bookkeeping.
Expected predict(const bc::ReadCodes& reads, const bc::AlnOptions& opt, const bc::InexactKernelConfig& cfg,
                 const std::vector<bc::AlnPassLimits>& passes, const bc::GpuAligner& g) {
  Expected e;
  e.reads.assign(passes.size(), 0);
  e.answered.assign(passes.size(), 0);
  std::uint32_t max_len = 0;
  for (auto l : reads.len) max_len = std::max(max_len, l);
  std::vector<bc::AlnSearchStats> stats(reads.size());
  evk::parallel_for(reads.size(), [&](std::size_t a, std::size_t b) {
    bc::AlnSearcher s(bc::gi_reference_index(), opt);
    s.set_batch_max_gapo(std::min(opt.max_gapo, bc::aln_max_diff(opt, static_cast<int>(max_len))));
    std::vector<bc::Aln> tmp;
    for (std::size_t i = a; i < b; ++i) {
      tmp.clear();
      s.search(reads.codes.data() + reads.offset[i], reads.len[i], tmp, &stats[i]);
    }
  });
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const bc::AlnSearchStats& st = stats[i];
    if (bc::kernel_answers(st, reads.len[i], cfg.max_len, cfg.stack_cap, cfg.aln_cap)) continue;
    ++e.first_back;
    if (reads.len[i] > static_cast<std::uint32_t>(cfg.max_len)) {  // never given to a later pass: the CPU's
      ++e.cpu;
      continue;
    }
    bool done = false;
    for (std::size_t k = 0; k < passes.size() && !done; ++k) {
      if (g.device().warp_fit(static_cast<std::uint64_t>(passes[k].stack_cap)) == 0) {
        ++e.reads[k];  // given to the pass, whose stacks do not fit: the CPU's
        break;
      }
      ++e.reads[k];
      done = bc::kernel_answers(st, reads.len[i], cfg.max_len, passes[k].stack_cap, passes[k].aln_cap);
      e.answered[k] += done;
    }
    e.cpu += !done;
  }
  return e;
}

// Runs the backend's search and checks it against the CPU batch and the prediction.
bc::GpuAlnTimes check(const bc::ReadCodes& reads, const bc::AlnOptions& opt, const bc::InexactKernelConfig& cfg) {
  const bc::BwtIndex& idx = bc::gi_reference_index();
  bc::GpuAligner g(idx, opt, 0, cfg);
  std::vector<bc::AlnPassLimits> passes = bc::aln_pass_limits(opt, cfg.stack_cap, cfg.aln_cap);
  if (passes.size() > static_cast<std::size_t>(cfg.later_passes)) passes.resize(static_cast<std::size_t>(cfg.later_passes));
  bc::GpuAlnTimes t;
  const bc::AlnBatch got = g.search(reads, 0, &t);
  const bc::AlnBatch want = bc::aln_search_batch(idx, reads, opt, 0);
  EXPECT_EQ(got.offset, want.offset);
  EXPECT_TRUE(got.alns == want.alns);
  const Expected e = predict(reads, opt, cfg, passes, g);
  EXPECT_EQ(t.first_pass_handed_back, e.first_back);
  for (std::size_t k = 0; k < passes.size(); ++k) {
    SCOPED_TRACE("pass " + std::to_string(k + 2));
    EXPECT_EQ(t.passes[k].reads, e.reads[k]);
    EXPECT_EQ(t.passes[k].answered, e.answered[k]);
    std::printf("  pass %zu (stack %d, ALN_CAP %d): %llu reads, %llu answered, %u warps, %.1f ms\n", k + 2,
                passes[k].stack_cap, passes[k].aln_cap, static_cast<unsigned long long>(t.passes[k].reads),
                static_cast<unsigned long long>(t.passes[k].answered), t.passes[k].warps, t.passes[k].ms);
  }
  EXPECT_EQ(t.cpu_reads(), e.cpu);
  std::printf("  %zu reads: first pass %.1f ms, handed back %llu; CPU %llu reads, %.3f s\n", reads.size(), t.kernel_ms,
              static_cast<unsigned long long>(t.first_pass_handed_back), static_cast<unsigned long long>(t.cpu_reads()),
              t.fallback_s);
  return t;
}

std::size_t longer_than(const bc::ReadCodes& r, int max_len) {
  std::size_t n = 0;
  for (auto l : r.len) n += l > static_cast<std::uint32_t>(max_len);
  return n;
}

}  // namespace

// bwa's defaults and -l 1024 -n 0.01 -o 2: the last pass's limits suffice for every read the
// kernel can take (at most MAX_LEN bases), so only the longer ones reach the CPU.
TEST(BarracudaAlnSecondPassGpu, TinyFirstPassEveryReadOnTheGpu) {
  EVK_REQUIRE_GPU();
  std::uint64_t seed = 41;
  for (const bc::AlnOptions& opt : {bc::AlnOptions{}, bct::adna_options()}) {
    SCOPED_TRACE(opt.seed_len == 1024 ? "-l 1024 -n 0.01 -o 2" : "defaults");
    const bc::ReadCodes reads = test_reads(seed++, 20000);
    bc::InexactKernelConfig cfg;
    cfg.stack_cap = 40;
    cfg.aln_cap = 2;
    const bc::GpuAlnTimes t = check(reads, opt, cfg);
    EXPECT_GT(t.first_pass_handed_back, 3000u);
    // the reads too long for the kernel always reach the CPU; the others only where a pass's stacks
    // did not fit the (tiny) first pass's stack memory, as predicted in check()
    EXPECT_GE(t.cpu_reads(), longer_than(reads, cfg.max_len));
    EXPECT_GT(t.passes[0].answered, 2000u);
  }
}

TEST(BarracudaAlnSecondPassGpu, DefaultFirstPassAtAncientDnaSettings) {
  EVK_REQUIRE_GPU();
  const bc::ReadCodes reads = test_reads(43, 30000);
  bc::InexactKernelConfig cfg;
  const bc::GpuAlnTimes t = check(reads, bct::adna_options(), cfg);
  EXPECT_GT(t.first_pass_handed_back, 0u);
  EXPECT_GT(t.passes[0].answered, 0u);
  EXPECT_EQ(t.cpu_reads(), longer_than(reads, bc::kAlnKernelMaxLen));  // every other read on the GPU
}

TEST(BarracudaAlnSecondPassGpu, LaterPassesOffLeaveTheReadsToTheCpu) {
  EVK_REQUIRE_GPU();
  const bc::ReadCodes reads = test_reads(44, 5000);
  bc::InexactKernelConfig cfg;
  cfg.stack_cap = 40;
  cfg.aln_cap = 2;
  cfg.later_passes = 0;
  bc::GpuAligner g(bc::gi_reference_index(), bc::AlnOptions{}, 0, cfg);
  bc::GpuAlnTimes t;
  const bc::AlnBatch got = g.search(reads, 0, &t);
  const bc::AlnBatch want = bc::aln_search_batch(bc::gi_reference_index(), reads, bc::AlnOptions{}, 0);
  EXPECT_EQ(got.offset, want.offset);
  EXPECT_TRUE(got.alns == want.alns);
  EXPECT_EQ(t.cpu_reads(), t.first_pass_handed_back);
  EXPECT_EQ(t.passes[0].reads, 0u);
}

// Small stack memory (threads_per_sm x SMs x STACK_CAP 40 x 16 bytes): at 256 threads an SM the
// second and third passes run a few warps and the last pass's (64 MiB) does not fit one, so its reads
// go to the CPU; at 8 not even the second pass's warp (0.7 MiB) fits: every handed-back read on the
// CPU. The batch is the CPU's either way.
TEST(BarracudaAlnSecondPassGpu, StacksThatDoNotFitShrinkThePassOrLeaveItToTheCpu) {
  EVK_REQUIRE_GPU();
  const bc::ReadCodes reads = test_reads(45, 8000);
  for (const int tps : {256, 8}) {
    SCOPED_TRACE("threads per SM " + std::to_string(tps));
    bc::InexactKernelConfig cfg;
    cfg.stack_cap = 40;
    cfg.aln_cap = 2;
    cfg.threads_per_sm = tps;
    cfg.share_budget = false;  // the later passes get only what the first pass's threads take
    const bc::GpuAlnTimes t = check(reads, bc::AlnOptions{}, cfg);
    bc::GpuAligner g(bc::gi_reference_index(), bc::AlnOptions{}, 0, cfg);
    const std::vector<bc::AlnPassLimits> passes = bc::aln_pass_limits(bc::AlnOptions{}, cfg.stack_cap, cfg.aln_cap);
    for (std::size_t k = 0; k < passes.size(); ++k) {
      const std::uint64_t fit = g.device().warp_fit(static_cast<std::uint64_t>(passes[k].stack_cap));
      EXPECT_LE(t.passes[k].warps, fit);
      if (fit == 0) {
        EXPECT_EQ(t.passes[k].warps, 0u);
      }
    }
    if (tps == 8) {
      EXPECT_EQ(t.passes[0].warps, 0u);
      EXPECT_EQ(t.cpu_reads(), t.first_pass_handed_back);
    } else {
      EXPECT_GT(t.passes[0].warps, 0u);
      EXPECT_EQ(g.device().warp_fit(static_cast<std::uint64_t>(passes.back().stack_cap)), 0u);
    }
  }
}
