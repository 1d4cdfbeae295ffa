// `map` with the inexact kernel's variants on the GPU: a genome FILE (configuration only) and a
// variant installed in the overlay for the `adna` class (picked by --kernel auto for a job with the
// seed off, not for bwa's default seed) give the CPU backend's bytes on aDNA reads.
#include <gtest/gtest.h>
#include <cuda_runtime.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "evk/cuda_check.hpp"
#include "evk_testing.hpp"
#include "gi/adna_gi.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;

TEST(BarracudaAdnaMapGpu, InexactVariantsGiveTheCpuBackendsBytes) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir dir;
  const std::vector<bc::RefSeq> g = bc::adna_gi_genome(5000000, 9);
  const bc::ReadCodes reads = bc::adna_gi_reads(g, 5, false, 20000);
  {
    std::ofstream fa(dir / "ref.fa");
    for (const auto& c : g) fa << ">" << c.name << "\n" << c.seq << "\n";
    std::ofstream fq(dir / "r.fq");
    for (std::size_t i = 0; i < reads.size(); ++i) {
      fq << "@r" << i << "\n";
      for (std::uint32_t j = 0; j < reads.len[i]; ++j) fq << "ACGTN"[reads.codes[reads.offset[i] + j]];
      fq << "\n+\n" << std::string(reads.len[i], 'I') << "\n";
    }
  }
  ASSERT_EQ(evk::testing::run_tool("barracuda_exact", "index " + (dir / "ref.fa").string()).exit_code, 0);
  const std::string job = (dir / "ref.fa").string() + " " + (dir / "r.fq").string() + " -o - --max-diff 0.01 --max-gap-open 2";
  const auto cpu = evk::testing::run_tool("barracuda_exact", "map --backend cpu --seed-len 1024 " + job);
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_GT(cpu.out.size(), 20000u * 50);
  int major = 0, minor = 0;
  EVK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  EVK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  const std::string cc = std::to_string(major) + "." + std::to_string(minor);
  std::ofstream(dir / "cfg.genome") << "# kernel: barracuda_inexact\n# cc: " << cc << "\nBLOCK_W=256 STACK_CAP=1023 THREADS_PER_SM=1024\n";
  auto r = evk::testing::run_tool("barracuda_exact", "map --backend gpu --seed-len 1024 -v --kernel " + (dir / "cfg.genome").string() + " " + job);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("STACK_CAP=1023"), std::string::npos) << r.err;
  EXPECT_TRUE(bct::sam_records(r.out) == bct::sam_records(cpu.out)) << "--kernel FILE: the GPU's SAM differs from the CPU backend's";
  // an overlay variant validated for the adna class
  const fs::path overlay = dir / "xdg" / "evokernels" / "evolved";
  fs::create_directories(overlay);
  std::ofstream(overlay / "adna-test.genome") << "# evokernels genome v1\n# kernel: barracuda_inexact\n# cc: " << cc
                                              << "\n# classes: adna\n# validated: adna cases=1 speedup=1.0 max_error=0\n"
                                              << "BLOCK_W=128 STACK_CAP=2047\n";
  const std::string tool = (evk::testing::bin_dir() / "barracuda_exact").string();
  const auto with_overlay = [&](const std::string& args) {
    return evk::testing::run("XDG_DATA_HOME=" + (dir / "xdg").string() + " " + tool + " " + args);
  };
  r = with_overlay("map --backend gpu --seed-len 1024 -v " + job);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("adna-test [overlay]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("class adna"), std::string::npos) << r.err;
  EXPECT_TRUE(bct::sam_records(r.out) == bct::sam_records(cpu.out)) << "the overlay variant: the GPU's SAM differs from the CPU backend's";
  r = with_overlay("map --backend gpu -v " + job);  // bwa's seed: class ecoli, the variant does not apply
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("adna-test [overlay]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("class ecoli"), std::string::npos) << r.err;
}
