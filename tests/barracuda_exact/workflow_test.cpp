// workflows/map/Snakefile end to end on a small reference: split into shards, a map job per shard,
// sort, merge, index; the merged BAM holds exactly the records of one `map` of the whole file.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/index.hpp"
#include "evk_testing.hpp"
#include "pipeline_inputs.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;
using evk::testing::TempDir;

namespace {
std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> v;
  std::size_t s = 0;
  while (s < text.size()) {
    const std::size_t e = text.find('\n', s);
    v.push_back(text.substr(s, e - s));
    if (e == std::string::npos) break;
    s = e + 1;
  }
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

TEST(BarracudaWorkflow, ShardedRunEqualsTheSingleProcess) {
  if (!bct::have("snakemake") || !bct::have("samtools")) GTEST_SKIP() << "snakemake or samtools not installed";
  TempDir dir;
  const auto ref = bct::tricky_reference(71);
  bct::write_fasta(dir / "ref.fa", ref);  // not indexed: the workflow builds the index
  const std::string text = bct::varied_reads(bct::forward_text(bc::build_index(ref)), 5000, 9);
  bct::write_file(dir / "reads.fq.gz", bct::gzip_text(dir, text));
  const std::string tool = (evk::testing::bin_dir() / "barracuda_exact").string();
  const std::string snakefile = (fs::path(EVK_SOURCE_DIR) / "workflows" / "map" / "Snakefile").string();
  auto r = evk::testing::run("cd " + dir.path().string() + " && snakemake -s " + snakefile +
                             " -j 2 --quiet --config ref=ref.fa reads=reads.fq.gz shards=3 out=out.bam backend=cpu"
                             " threads=1 block=700 map_args=--exact tool=" + tool + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_TRUE(fs::exists(dir / "out.bam"));
  ASSERT_TRUE(fs::exists(dir / "out.bam.bai"));
  EXPECT_FALSE(fs::exists(dir / "out.bam.shards")) << "the shards are temporary";
  // the single-process result
  // the exact mode: the inexact mode draws among equally best hits in file order (bwa's drand48), so a
  // shard's draws for repeat reads differ from the single run's (see workflows/map/README.md)
  r = evk::testing::run_tool("barracuda_exact", "map --exact --backend cpu " + (dir / "ref.fa").string() + " " +
                                                    (dir / "reads.fq.gz").string() + " -o " + (dir / "single.bam").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto merged = evk::testing::run("samtools view " + (dir / "out.bam").string());
  const auto single = evk::testing::run("samtools view " + (dir / "single.bam").string());
  ASSERT_EQ(merged.exit_code, 0);
  const auto a = sorted_lines(merged.out), b = sorted_lines(single.out);
  EXPECT_EQ(a.size(), 5000u);
  EXPECT_TRUE(a == b) << "the merged BAM's records differ from the single run's";
  // sorted by coordinate and indexed: a region query answers from the index
  const auto hdr = evk::testing::run("samtools view -H " + (dir / "out.bam").string());
  EXPECT_NE(hdr.out.find("SO:coordinate"), std::string::npos) << hdr.out;
  const auto region = evk::testing::run("samtools view -c " + (dir / "out.bam").string() + " chrA:1-5000");
  ASSERT_EQ(region.exit_code, 0) << region.err;
  EXPECT_GT(std::stoi(region.out), 0);
  // split on its own: every record in one shard
  r = evk::testing::run_tool("barracuda_exact", "split " + (dir / "reads.fq.gz").string() + " -n 4 --block 100 -p " +
                                                    (dir / "s").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("5000 records in 4 shards"), std::string::npos) << r.err;
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(fs::exists(dir / ("s" + std::to_string(i) + ".fq.gz")));
}

TEST(BarracudaWorkflow, SplitKeepsMatesInStepAndRefusesUnequalFiles) {
  TempDir dir;
  std::string r1, r2;
  for (int i = 0; i < 1000; ++i) {
    r1 += "@p" + std::to_string(i) + "/1\nACGTACGTAC\n+\nIIIIIIIIII\n";
    r2 += "@p" + std::to_string(i) + "/2\nTTGCAAGT\n+\nJJJJJJJJ\n";
  }
  bct::write_file(dir / "r1.fq", r1);
  bct::write_file(dir / "r2.fq", r2);
  auto r = evk::testing::run_tool("barracuda_exact", "split " + (dir / "r1.fq").string() + " " + (dir / "r2.fq").string() +
                                                         " -n 3 --block 64 -p " + (dir / "m").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int i = 0; i < 3; ++i) {
    const auto a = evk::testing::run("gzip -dc " + (dir / ("m" + std::to_string(i) + "_1.fq.gz")).string() + " | awk 'NR%4==1' | sed 's#/1$##'");
    const auto b = evk::testing::run("gzip -dc " + (dir / ("m" + std::to_string(i) + "_2.fq.gz")).string() + " | awk 'NR%4==1' | sed 's#/2$##'");
    EXPECT_GT(a.out.size(), 100u);
    EXPECT_EQ(a.out, b.out) << "shard " << i << ": mates out of step";
  }
  bct::write_file(dir / "short.fq", r2.substr(0, r2.size() / 2));
  r = evk::testing::run_tool("barracuda_exact", "split " + (dir / "r1.fq").string() + " " + (dir / "short.fq").string() +
                                                     " -n 2 -p " + (dir / "x").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("short.fq: has fewer records than its mate file"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "x0_1.fq.gz"));
  EXPECT_EQ(bct::temp_files_in(dir.path()), 0);
}
