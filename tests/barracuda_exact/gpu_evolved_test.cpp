// GPU: evolved genomes (config only, with code edits, the minimized H200 genome) through the GPU
// backend against the CPU backend on every read, and the tool's genome-file path against its CPU path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/gpu_exact.hpp"
#include "core/hits.hpp"
#include "core/kernel_config.hpp"
#include "core/match.hpp"
#include "evk/cuda_check.hpp"
#include "evk/device.hpp"
#include "evk/dispatch.hpp"
#include "evk_kernels/barracuda_exact_kernel.hpp"
#include "evk_testing.hpp"
#include "gi/gi_problem.hpp"
#include "gi/kernel_variant.hpp"
#include "gpu_kernel_run.hpp"

namespace bc = evk::barracuda_exact;

namespace {

using bct::mismatches;
using bct::run_kernel;

// Genomes the GPU must run exactly like the original (bit-identical (k, l): the app's promise).
struct TestGenome {
  const char* name;
  const char* text;
};
const TestGenome kGenomes[] = {
    // config only: cooperative cache loading over 4 lanes, k and l in parallel, parallel popcounts
    {"config_only", "BLOCK_W=256 cache_threads=4 kl_par=true occ_par=true scache_global_bwt=true"},
    // code edits that keep the answer: a duplicated `tag = blk;`, #pragma unroll 4 on the popcount
    // loop, __launch_bounds__(BLOCK_W, 1); with a non-default block size
    {"code_edits", "BLOCK_W=128 <_K_206>+<_K_205> <pragma_K_223><pragma_K4> <launchbounds_K_240><launchbounds_K1>"},
    // deleting `tag = blk;` disables the cache reuse (a reload per occurrence count): slower, still exact
    {"code_delete", "<_K_205>"},
};

// The minimized genome of the H200 run (docs/BARRACUDA_EXACT.md, "Genetic improvement"): kl_par,
// plain loads without the block cache, `#pragma unroll 9` on the read loop, the `pos == seq_len`
// shortcut of occ() removed (the general count gives the same total) and `l = 0;` of the
// ambiguous-base exit deleted (k = 0 already says "ambiguous"; l is undefined there).
const TestGenome kEvolvedH200{"evolved_h200",
                              "kl_par=true direct_global_bwt=true cache_global_bwt=false <_K_287> "
                              "<pragma_K_278><pragma_K9> <IF_K_196>"};

evk::Variant genome_variant(const TestGenome& g) {
  evk::Variant v;
  v.kernel = "barracuda_exact";
  v.id = g.name;
  v.source = evk::VariantSource::file;
  v.genome = g.text;
  return v;
}

std::string sam_body(const std::string& s) {
  std::string o;
  std::size_t p = 0;
  while (p < s.size()) {
    std::size_t e = s.find('\n', p);
    if (e == std::string::npos) e = s.size();
    if (s[p] != '@') o += s.substr(p, e - p + 1);
    p = e + 1;
  }
  return o;
}

}  // namespace

TEST(BarracudaGpu, EvolvedGenomesMatchCpuOnEveryRead) {
  EVK_REQUIRE_GPU();
  const auto& d = evk::gpu_environment().devices[0];
  const bc::BwtIndex& idx = bc::gi_reference_index();
  const bc::ReadCodes rc = bc::gi_sample_reads(11, true, static_cast<std::size_t>(d.sm_count) * 1024);
  const auto ref = bc::match_cpu(idx, rc);
  bc::PackedReads p;
  bc::pack_reads(rc, p);
  bc::DeviceBwt bwt(idx);
  for (const auto& g : kGenomes) {
    const bc::KernelVariant kv = bc::resolve_kernel_variant(genome_variant(g));
    ASSERT_FALSE(kv.source.empty()) << g.name;
    ASSERT_NE(kv.source, std::string(barracuda_exact_kernel().text())) << g.name;
    // the backend's loader (NVRTC of the patched source), outputs poisoned, every read checked
    auto lib = bc::load_exact_kernel(kv.config, d.cc(), kv.source);
    EXPECT_EQ(mismatches(ref, run_kernel(lib.kernel(bc::kKernelEntry), kv.config, bwt, p)), 0)
        << g.name << ": " << kv.describe();
    // and the matcher the map command uses
    bc::GpuMatcher m(idx, kv.config, d.index, kv.source);
    EXPECT_EQ(mismatches(ref, m.match(p)), 0) << g.name;
    std::printf("%s (%s): %zu reads identical to the CPU\n", g.name, kv.describe().c_str(), ref.size());
  }
  // a genome that breaks the answer is caught by the same comparison (the check can fail)
  const TestGenome broken{"broken", "<_K_299>"};  // k is never updated
  const bc::KernelVariant kv = bc::resolve_kernel_variant(genome_variant(broken));
  auto lib = bc::load_exact_kernel(kv.config, d.cc(), kv.source);
  EXPECT_GT(mismatches(ref, run_kernel(lib.kernel(bc::kKernelEntry), kv.config, bwt, p)), 1000);
}

TEST(BarracudaGpu, ToolRunsGenomeFilesLikeTheCpu) {
  EVK_REQUIRE_GPU();
  const auto tool = evk::testing::bin_dir() / "barracuda_exact";
  const auto g = evk::testing::project_data_dir() / "genomes" / "lambda_virus.fa.gz";
  const auto r = evk::testing::project_data_dir() / "reads" / "lambda_reads_1.fq.gz";
  if (!std::filesystem::exists(tool) || !std::filesystem::exists(g) || !std::filesystem::exists(r))
    GTEST_SKIP() << "tool or lambda data missing";
  evk::testing::TempDir dir;
  const std::string fa = (dir / "lambda.fa.gz").string();
  std::filesystem::copy_file(g, fa);
  auto x = evk::testing::run_tool("barracuda_exact", "index " + fa);
  ASSERT_EQ(x.exit_code, 0) << x.err;
  auto cpu = evk::testing::run_tool("barracuda_exact", "map --exact --backend cpu " + fa + " " + r.string() + " -o -");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_GT(sam_body(cpu.out).size(), 100000u);
  std::vector<TestGenome> all(std::begin(kGenomes), std::end(kGenomes));
  all.push_back(kEvolvedH200);
  for (const auto& gn : all) {
    const std::string file = (dir / (std::string(gn.name) + ".genome")).string();
    {
      std::ofstream f(file);
      f << "# evokernels genome v1\n# kernel: barracuda_exact\n# cc: 9.0\n" << gn.text << "\n";
    }
    auto gpu = evk::testing::run_tool("barracuda_exact", "map --exact --backend gpu -v --kernel " + file + " " + fa + " " +
                                                             r.string() + " -o -");
    ASSERT_EQ(gpu.exit_code, 0) << gn.name << "\n" << gpu.err;
    // --verbose says which variant ran
    EXPECT_NE(gpu.err.find("kernel " + std::string(gn.name) + " [file]"), std::string::npos) << gpu.err;
    EXPECT_EQ(gpu.err.find("original code, default config"), std::string::npos) << gpu.err;
    EXPECT_TRUE(sam_body(gpu.out) == sam_body(cpu.out)) << gn.name;
  }
}

// The evolved kernel's contract: (k, l) identical to the CPU on every read without an ambiguous base,
// k = 0 on every read with one (l is not defined there; the paper's penalty and the pipeline only
// look at k), hence identical hits (what the SAM/BAM writer is given) on every read.
TEST(BarracudaGpu, EvolvedH200GenomeGivesTheSameHits) {
  EVK_REQUIRE_GPU();
  const auto& d = evk::gpu_environment().devices[0];
  const bc::BwtIndex& idx = bc::gi_reference_index();
  const bc::ReadCodes rc = bc::gi_sample_reads(21, true, static_cast<std::size_t>(d.sm_count) * 1024);
  const auto ref = bc::match_cpu(idx, rc);
  bc::PackedReads p;
  bc::pack_reads(rc, p);
  bc::DeviceBwt bwt(idx);
  const bc::KernelVariant kv = bc::resolve_kernel_variant(genome_variant(kEvolvedH200));
  ASSERT_EQ(kv.edits, 3);
  auto lib = bc::load_exact_kernel(kv.config, d.cc(), kv.source);
  const auto got = run_kernel(lib.kernel(bc::kKernelEntry), kv.config, bwt, p);
  std::size_t ambiguous = 0, l_differs = 0, bad = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (ref[i].k == 0) {
      ++ambiguous;
      bad += got[i].k != 0;
      l_differs += got[i].l != ref[i].l;
    } else {
      bad += !(got[i] == ref[i]);
    }
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(ambiguous, 1000u);  // the undefined-l path is exercised
  const auto h_ref = bc::resolve_hits(idx, ref, rc.len), h_got = bc::resolve_hits(idx, got, rc.len);
  std::size_t hits_differ = 0, mapped = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const bc::Hit &a = h_ref[i], &b = h_got[i];
    mapped += a.mapped();
    hits_differ += !(a.count == b.count && a.primary == b.primary && a.bridging == b.bridging &&
                     a.n_ambiguous == b.n_ambiguous && a.alts == b.alts);
  }
  EXPECT_EQ(hits_differ, 0u);
  EXPECT_GT(mapped, ref.size() / 2);
  std::printf("evolved_h200: %zu reads, %zu ambiguous (l differs on %zu), %zu mapped; hits identical\n", ref.size(),
              ambiguous, l_differs, mapped);
}
