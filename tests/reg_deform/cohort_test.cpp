// reg_deform register-many: each subject's files equal what `affine` then `register` write for it,
// a failed subject reported and skipped, finished subjects kept on a rerun, a bad list refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "evk_testing.hpp"

namespace fs = std::filesystem;
using evk::testing::run;
using evk::testing::run_tool;

namespace {
std::string bytes(const fs::path& p, bool gz = false) {
  if (gz) return run("gzip -dc " + p.string()).out;
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST(RegCohort, SubjectsAsSingleCommandsFailuresSkippedRerunsResume) {
  evk::testing::TempDir dir;
  for (const char* s : {"1", "2", "3"})
    ASSERT_EQ(run_tool("reg_deform", std::string("random-case --seed 2") + s + " --size 20 -o " + (dir / ("s" + std::string(s))).string()).exit_code, 0);
  std::ofstream(dir / "list.tsv") << "# id image [mask]\nsub-a s1/image.nii.gz\nsub-b\ts2/image.nii.gz s2/mask.nii.gz\n"
                                  << "sub-c s3/image.nii.gz\nsub-x nowhere.nii.gz\n";
  fs::create_directories(dir / "out");
  const std::string templ = (dir / "s1" / "image.nii.gz").string(), opts = " --backend cpu --maxit 10 --ln 2";
  const std::string cmd = "register-many " + templ + " " + (dir / "list.tsv").string() + " -o " + (dir / "out").string() + opts;
  auto r = run_tool("reg_deform", cmd);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("1 of 4 subjects failed"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("3 registered now, 0 done before, 1 failed"), std::string::npos) << r.out;
  const std::string summary = bytes(dir / "out" / "summary.tsv");
  EXPECT_NE(summary.find("sub-x\tfailed"), std::string::npos) << summary;
  EXPECT_NE(summary.find("nowhere.nii.gz"), std::string::npos) << summary;
  EXPECT_EQ(std::count(summary.begin(), summary.end(), '\n'), 5) << summary;
  // sub-b as two single commands with the same options (its mask as the floating mask)
  const std::string flo = (dir / "s2" / "image.nii.gz").string(), fmask = (dir / "s2" / "mask.nii.gz").string();
  ASSERT_EQ(run_tool("reg_deform", "affine --ref " + templ + " --flo " + flo + " --fmask " + fmask + " -o " + (dir / "a.txt").string() +
                                       " --backend cpu").exit_code, 0);
  ASSERT_EQ(run_tool("reg_deform", "register --ref " + templ + " --flo " + flo + " --fmask " + fmask + " --aff " + (dir / "a.txt").string() +
                                       " --cpp " + (dir / "c.nii.gz").string() + " --res " + (dir / "r.nii.gz").string() + opts).exit_code, 0);
  const fs::path b = dir / "out" / "sub-b";
  EXPECT_EQ(bytes(b / "aff.txt"), bytes(dir / "a.txt"));
  EXPECT_EQ(bytes(b / "cpp.nii.gz", true), bytes(dir / "c.nii.gz", true));
  EXPECT_EQ(bytes(b / "res.nii.gz", true), bytes(dir / "r.nii.gz", true));
  EXPECT_GT(bytes(b / "cpp.nii.gz", true).size(), 352u);
  // a rerun keeps the finished subjects (their files untouched) and tries the failed one again
  const auto stamp = fs::last_write_time(b / "cpp.nii.gz");
  r = run_tool("reg_deform", cmd);
  EXPECT_NE(r.out.find("0 registered now, 3 done before, 1 failed"), std::string::npos) << r.out;
  EXPECT_EQ(fs::last_write_time(b / "cpp.nii.gz"), stamp);
  r = run_tool("reg_deform", cmd + " --force");
  EXPECT_NE(r.out.find("3 registered now, 0 done before, 1 failed"), std::string::npos) << r.out;
}

TEST(RegCohort, BadListsAreRefusedBeforeAnyWork) {
  evk::testing::TempDir dir;
  ASSERT_EQ(run_tool("reg_deform", "random-case --seed 5 --size 16 -o " + (dir / "s").string()).exit_code, 0);
  fs::create_directories(dir / "out");
  auto refused = [&](const std::string& list, const std::string& says) {
    std::ofstream(dir / "l.tsv") << list;
    const auto r = run_tool("reg_deform", "register-many " + (dir / "s" / "image.nii.gz").string() + " " + (dir / "l.tsv").string() +
                                              " -o " + (dir / "out").string() + " --backend cpu");
    EXPECT_EQ(r.exit_code, 2) << list;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(fs::is_empty(dir / "out"));
  };
  refused("a s/image.nii.gz\na s/image.nii.gz\n", "subject id 'a' twice");
  refused("../up s/image.nii.gz\n", "must be letters");
  refused("lonely\n", "has no image path");
  refused("# nothing\n", "no subjects");
}

// Several subjects at once (--jobs) give each subject the files one at a time gives, byte for byte;
// --devices without the GPU backend and --jobs 0 are refused.
TEST(RegCohort, JobsAtOnceWriteWhatOneAtATimeWrites) {
  evk::testing::TempDir dir;
  std::ofstream list(dir / "list.tsv");
  for (const char* s : {"1", "2", "3", "4"}) {
    ASSERT_EQ(run_tool("reg_deform", std::string("random-case --seed 3") + s + " --size 18 -o " + (dir / ("s" + std::string(s))).string()).exit_code, 0);
    list << "sub-" << s << " s" << s << "/image.nii.gz\n";
  }
  list.close();
  const std::string templ = (dir / "s1" / "image.nii.gz").string(), opts = " --backend cpu --maxit 8 --ln 2";
  for (const char* o : {"one", "three"}) fs::create_directories(dir / o);
  const auto base = "register-many " + templ + " " + (dir / "list.tsv").string() + " -o ";
  auto r = run_tool("reg_deform", base + (dir / "one").string() + opts);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_tool("reg_deform", base + (dir / "three").string() + opts + " --jobs 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4 registered now"), std::string::npos) << r.out;
  for (const char* s : {"sub-1", "sub-2", "sub-3", "sub-4"}) {
    EXPECT_EQ(bytes(dir / "three" / s / "aff.txt"), bytes(dir / "one" / s / "aff.txt")) << s;
    EXPECT_EQ(bytes(dir / "three" / s / "cpp.nii.gz", true), bytes(dir / "one" / s / "cpp.nii.gz", true)) << s;
    EXPECT_EQ(bytes(dir / "three" / s / "res.nii.gz", true), bytes(dir / "one" / s / "res.nii.gz", true)) << s;
    EXPECT_GT(bytes(dir / "three" / s / "res.nii.gz", true).size(), 352u) << s;
  }
  fs::create_directories(dir / "bad");
  for (const std::string& flag : {std::string(" --devices 0"), std::string(" --jobs 0")}) {
    r = run_tool("reg_deform", base + (dir / "bad").string() + opts + flag);
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find(flag.substr(1, flag.find(' ', 1) - 1)), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(fs::is_empty(dir / "bad")) << flag;
  }
}
