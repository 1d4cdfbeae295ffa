// The inexact GPU kernel's logic without a GPU: its source compiled for the host (inexact_host.hpp)
// run on read sets against the CPU backend (aln_search, itself equal to bwa aln): every read the
// kernel answers has the identical hit list (intervals, counts, score, order); reads it hands back
// (longer than MAX_LEN, stack or hit list full) are searched on the CPU by merge_kernel_output, and
// the merged batch equals the CPU batch. Outputs are poisoned before each run.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

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

Check check_kernel(const bc::BwtIndex& idx, const bc::ReadCodes& reads, const bc::AlnOptions& opt, bool small) {
  const bc::AlnBatch ref = bc::aln_search_batch(idx, reads, opt, 2);
  const bct::KernelOutput k = bct::run_inexact_kernel_on_host(idx, reads, opt, small);
  const Check c = bct::check_kernel_output(idx, reads, opt, ref, k, small ? 40 : bc::kAlnKernelStackCap,
                                           small ? 2 : bc::kAlnKernelAlnCap);
  // the merged batch (kernel answers + CPU for the handed-back reads) equals the CPU batch
  bc::AlnBatch merged;
  const std::size_t back = bc::merge_kernel_output(idx, reads, opt, k.n_out, k.aln_out, k.aln_cap, 2, merged);
  EXPECT_EQ(back, c.handed_back);
  EXPECT_EQ(merged.offset, ref.offset);
  EXPECT_TRUE(merged.alns == ref.alns);
  return c;
}

}  // namespace

TEST(BarracudaInexactKernelOnHost, EqualsCpuOnPlantedReads) {
  TempDir dir;
  const auto ref = bct::tricky_reference(51);
  bct::write_fasta(dir / "t.fa", ref);
  bct::planted_reads((dir / "t.fa").string(), dir / "p.fq", 3000, 20, 300, 9, bct::tricky_repeats());
  const bc::BwtIndex idx = bc::build_index(ref);
  const bct::Reads r = bct::load_reads((dir / "p.fq").string());
  const Check c = check_kernel(idx, r.codes, bc::AlnOptions{}, false);
  std::size_t longer = 0;
  for (auto l : r.codes.len) longer += l > static_cast<std::uint32_t>(bc::kAlnKernelMaxLen);
  EXPECT_GE(c.handed_back, longer);          // reads over MAX_LEN go back
  EXPECT_LT(c.handed_back, longer + 30);     // and few others
  EXPECT_GT(c.with_hits, 2000u);
}

TEST(BarracudaInexactKernelOnHost, EqualsCpuWithOptions) {
  TempDir dir;
  const auto ref = bct::tricky_reference(52);
  bct::write_fasta(dir / "t.fa", ref);
  bct::planted_reads((dir / "t.fa").string(), dir / "p.fq", 1500, 25, 200, 10, bct::tricky_repeats());
  const bc::BwtIndex idx = bc::build_index(ref);
  const bct::Reads r = bct::load_reads((dir / "p.fq").string());
  const bc::AlnOptions o = bct::varied_aln_options();
  const Check c = check_kernel(idx, r.codes, o, false);
  EXPECT_GT(c.answered, 1400u);
}

TEST(BarracudaInexactKernelOnHost, EqualsCpuOnRealCelegansReads) {
  const auto g = evk::testing::project_data_dir() / "genomes" / "ce.fa";
  const auto s = evk::testing::project_data_dir() / "reads" / "ce#1000.sam";
  if (!std::filesystem::exists(g) || !std::filesystem::exists(s) || !bct::have("samtools")) GTEST_SKIP() << "no C. elegans data";
  TempDir dir;
  ASSERT_EQ(evk::testing::run("samtools fastq " + s.string() + " > " + (dir / "ce.fq").string() + " 2>/dev/null").exit_code, 0);
  const bc::BwtIndex idx = bc::build_index(bc::read_reference(g.string()));
  const bct::Reads r = bct::load_reads((dir / "ce.fq").string());
  const Check c = check_kernel(idx, r.codes, bc::AlnOptions{}, false);
  // these reads are mostly telomeric repeats (TTAGGC)n: thousands of live stack entries each; most still fit
  EXPECT_GT(c.answered, 700u);
}

TEST(BarracudaInexactKernelOnHost, HandsBackWhenTheStackOrHitListIsFull) {
  TempDir dir;
  const auto ref = bct::tricky_reference(53);
  bct::write_fasta(dir / "t.fa", ref);
  bct::planted_reads((dir / "t.fa").string(), dir / "p.fq", 1500, 30, 150, 11, bct::tricky_repeats());
  const bc::BwtIndex idx = bc::build_index(ref);
  const bct::Reads r = bct::load_reads((dir / "p.fq").string());
  const Check c = check_kernel(idx, r.codes, bc::AlnOptions{}, true);  // STACK_CAP 40, ALN_CAP 2
  EXPECT_GT(c.handed_back, 300u);
  EXPECT_GT(c.answered, 100u);
}

#if defined(EVK_HAVE_CUDA)
#include "gi/aln_gi_problem.hpp"
#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk_kernels/barracuda_inexact_kernel.hpp"

TEST(BarracudaInexactKernelOnHost, NvrtcCompilesTheKernelForTheGpuBackendAndGi) {
  // NVRTC needs no GPU: the original text with the GPU backend's and the GI problem's options to SASS
  auto p = bc::make_inexact_gi_problem();
  evk::gi::Config big = p->default_config();
  big["BLOCK_W"] = "1024";
  big["STACK_CAP"] = "1023";
  std::vector<std::vector<std::string>> option_sets = {p->compile_options(p->default_config()), p->compile_options(big),
                                                       {"-DSTACK_CAP=40", "-DALN_CAP=2", "-DMAX_LEN=511", "-DBLOCK_W=64"}};
  for (const auto& opts : option_sets) {
    evk::NvrtcRequest req;
    req.source = std::string(barracuda_inexact_kernel().text());
    req.options = opts;
    req.cc = 90;
    const auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << r.log;
    EXPECT_GT(r.cubin.size(), 1000u);
  }
  EXPECT_THROW(p->compile_options({{"STACK_CAP", "5000"}}), evk::InputError);
  EXPECT_THROW(p->compile_options({{"WARP", "1"}}), evk::InputError);
}
#endif

TEST(BarracudaInexactKernelOnHost, GiInexactSubcommandHasItsOwnProblem) {
  // `gi-inexact` is the engine's command set on the inexact kernel (its workers start as `gi-inexact worker`)
  auto r = evk::testing::run_tool("barracuda_exact", "gi-inexact grammar --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"kernel\": \"barracuda_inexact\""), std::string::npos);
  EXPECT_NE(r.out.find("\"entry\": \"cuda_inexact_match\""), std::string::npos);
  auto e = evk::testing::run_tool("barracuda_exact", "gi grammar --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("\"kernel\": \"barracuda_exact\""), std::string::npos);
}
