// workflows/register/Snakefile end to end: the list cut into shards, a register-many job per shard
// into one folder, the summaries merged in the list's order; every subject's files equal one
// register-many of the whole list, and a failed subject is a row, not a failed workflow.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "evk_testing.hpp"

namespace fs = std::filesystem;

TEST(RegWorkflow, ShardedCohortEqualsOneRegisterMany) {
  if (evk::testing::run("command -v snakemake").exit_code != 0) GTEST_SKIP() << "snakemake not installed";
  evk::testing::TempDir dir;
  for (const char* s : {"1", "2", "3", "4"})
    ASSERT_EQ(evk::testing::run_tool("reg_deform", std::string("random-case --seed 3") + s + " --size 18 -o " +
                                                       (dir / ("s" + std::string(s))).string()).exit_code, 0);
  std::ofstream(dir / "list.tsv") << "a s1/image.nii.gz\nb s2/image.nii.gz\nc s3/image.nii.gz s3/mask.nii.gz\nd s4/image.nii.gz\n"
                                  << "x gone.nii.gz\n";
  const std::string tool = (evk::testing::bin_dir() / "reg_deform").string();
  const std::string snakefile = (fs::path(EVK_SOURCE_DIR) / "workflows" / "register" / "Snakefile").string();
  const auto r = evk::testing::run("cd " + dir.path().string() + " && snakemake -s " + snakefile +
                                   " -j 2 --quiet --config template=s1/image.nii.gz list=list.tsv out=wf shards=3 backend=cpu"
                                   " threads=1 'args=--maxit 8 --ln 2' tool=" + tool + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  fs::create_directories(dir / "one");
  const auto one = evk::testing::run_tool("reg_deform", "register-many " + (dir / "s1" / "image.nii.gz").string() + " " +
                                                            (dir / "list.tsv").string() + " -o " + (dir / "one").string() +
                                                            " --backend cpu --threads 1 --maxit 8 --ln 2");
  EXPECT_EQ(one.exit_code, 2) << one.err;  // x fails in both
  auto text = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  for (const char* id : {"a", "b", "c", "d"})
    for (const char* f : {"aff.txt", "cpp.nii.gz", "res.nii.gz"}) {
      const std::string w = text(dir / "wf" / id / f);
      EXPECT_FALSE(w.empty()) << id << "/" << f;
      EXPECT_TRUE(w == text(dir / "one" / id / f)) << id << "/" << f << " differs from the single register-many";
    }
  // the summaries: the same rows (but the seconds) in the list's order
  auto rows = [&](const fs::path& p) {
    std::istringstream in(text(p));
    std::string out;
    for (std::string l; std::getline(in, l);) {
      std::vector<std::string> f;
      std::istringstream fl(l);
      for (std::string c; std::getline(fl, c, '\t');) f.push_back(c);
      if (f.size() >= 6) f[5] = "";
      for (const auto& c : f) out += c + "|";
      out += "\n";
    }
    return out;
  };
  const std::string merged = rows(dir / "wf" / "summary.tsv");
  EXPECT_EQ(merged, rows(dir / "one" / "summary.tsv"));
  EXPECT_NE(merged.find("x|failed|"), std::string::npos) << merged;
}
