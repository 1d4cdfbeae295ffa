#include <atomic>
#include <new>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <filesystem>

#include "evk/cli.hpp"
#include "evk/error.hpp"
#include "evk/install_dirs.hpp"
#include "evk/main_guard.hpp"
#include "evk/parallel.hpp"
#include "evk/progress.hpp"
#include "evk/strings.hpp"
#include "evk/stats.hpp"
#include "evk/strings.hpp"
#include "evk_testing.hpp"

TEST(Stats, MedianMinMaxStdev) {
  auto t = evk::summarize({5, 1, 3, 2, 4});
  EXPECT_DOUBLE_EQ(t.median_ms, 3);
  EXPECT_DOUBLE_EQ(t.min_ms, 1);
  EXPECT_DOUBLE_EQ(t.max_ms, 5);
  EXPECT_DOUBLE_EQ(t.mean_ms, 3);
  EXPECT_NEAR(t.stdev_ms, 1.5811388, 1e-6);
  EXPECT_NEAR(t.spread(), 4.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(evk::summarize({1, 2, 3, 10}).median_ms, 2.5);
  EXPECT_EQ(evk::summarize({}).repeats, 0);
}

TEST(Parallel, CoversEveryIndexExactlyOnce) {
  for (size_t n : {0, 1, 7, 1000, 12345}) {
    std::vector<std::atomic<int>> hits(n);
    evk::parallel_for(n, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) hits[i]++;
    }, 4);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
  }
}

TEST(Parallel, RethrowsWorkerExceptions) {
  EXPECT_THROW(evk::parallel_for(100, [](size_t b, size_t) {
                 if (b > 0) throw std::runtime_error("boom");
               }, 4),
               std::runtime_error);
}

TEST(Progress, FormatsDurations) {
  EXPECT_EQ(evk::Progress::format_duration(0), "00:00");
  EXPECT_EQ(evk::Progress::format_duration(75), "01:15");
  EXPECT_EQ(evk::Progress::format_duration(3725), "1:02:05");
  EXPECT_EQ(evk::Progress::format_duration(-1), "--:--");
}

TEST(Progress, NonTtyPrintsLines) {
  evk::testing::TempDir d;
  std::FILE* f = std::fopen((d / "p.txt").c_str(), "w+");
  ASSERT_NE(f, nullptr);
  {
    evk::Progress p("work", 10, "items", true, f);
    p.update(5);
    p.finish();
  }
  std::fflush(f);
  std::rewind(f);
  char buf[512] = {};
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::string s(buf, n);
  EXPECT_NE(s.find("work: 5/10 items (50.0%)"), std::string::npos) << s;
}

// The install layout: a binary in <prefix>/bin finds <prefix>/share/evokernels (the build tree
// mirrors it: build/bin and build/share/evokernels); $EVK_SHARE_DIR overrides.
TEST(InstallDirs, DataDirFromTheBinarysLocation) {
  unsetenv("EVK_SHARE_DIR");
  const auto exe = evk::this_binary();
  ASSERT_FALSE(exe.empty());
  EXPECT_EQ(exe.filename(), "common_tests");
  if (exe.parent_path().filename() != "bin") GTEST_SKIP() << "not run from a bin/ directory: " << exe;
  EXPECT_EQ(evk::install_prefix(), exe.parent_path().parent_path());
  EXPECT_EQ(evk::data_dir(), exe.parent_path().parent_path() / "share" / "evokernels");
  evk::testing::TempDir d;
  setenv("EVK_SHARE_DIR", d.path().c_str(), 1);
  EXPECT_EQ(evk::data_dir(), d.path());
  EXPECT_TRUE(evk::installed_evolved_dir().empty());  // no evolved/ in it
  std::filesystem::create_directories(d / "evolved");
  EXPECT_EQ(evk::installed_evolved_dir(), d / "evolved");
  setenv("EVK_SHARE_DIR", (d / "missing").c_str(), 1);
  EXPECT_TRUE(evk::data_dir().empty());
  unsetenv("EVK_SHARE_DIR");
}

TEST(Strings, TrimDropsSpaceTabsAndNewlinesAtBothEnds) {
  EXPECT_EQ(evk::trim("  a b\t\r\n"), "a b");
  EXPECT_EQ(evk::trim("\n\t "), "");
  EXPECT_EQ(evk::trim(""), "");
  EXPECT_EQ(evk::trim("x"), "x");
}

TEST(ParseDevices, AllListsAndErrors) {
  EXPECT_EQ(evk::parse_devices("all", [] { return 3; }), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(evk::parse_devices("2, 0"), (std::vector<int>{2, 0}));
  EXPECT_EQ(evk::parse_devices("1"), (std::vector<int>{1}));
  for (const char* bad : {"", ",", "1,", "a", "-1", "0,x"}) {
    try {
      evk::parse_devices(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const evk::InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--devices: expected 'all'", 0), 0u) << e.what();
    }
  }
  try {
    evk::parse_devices("1,1");
    ADD_FAILURE() << "accepted a device given twice";
  } catch (const evk::InputError& e) {
    EXPECT_STREQ(e.what(), "--devices: device 1 given twice");
  }
}

TEST(RunGuarded, MapsEachExceptionToItsExitCode) {
  EXPECT_EQ(evk::run_guarded("t", [] { return 7; }), 7);
  EXPECT_EQ(evk::run_guarded("t", []() -> int { throw evk::InputError("f: bad"); }), evk::kExitInput);
  EXPECT_EQ(evk::run_guarded("t", []() -> int { throw evk::Refused("no"); }), evk::kExitInternal);
  EXPECT_EQ(evk::run_guarded("t", []() -> int { throw std::bad_alloc(); }), evk::kExitInternal);
  EXPECT_EQ(evk::run_guarded("t", []() -> int { throw std::runtime_error("bug"); }), evk::kExitInternal);
  testing::internal::CaptureStderr();
  evk::run_guarded("tool", []() -> int { throw evk::InputError("a.txt: line\nbreak"); });
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "tool: a.txt: line\\nbreak\n");
}

TEST(Strings, ParseSizeScalesByTheStepAndRefusesTheRest) {
  EXPECT_EQ(evk::parse_size("500M", "--size", 1000), 500000000u);
  EXPECT_EQ(evk::parse_size("3.1G", "--size", 1000), 3100000000u);
  EXPECT_EQ(evk::parse_size("2Mbp", "--size", 1000), 2000000u);
  EXPECT_EQ(evk::parse_size("8G", "--gpu-memory", 1024), 8ull << 30);
  EXPECT_EQ(evk::parse_size("64k", "--gpu-memory", 1024), 65536u);
  EXPECT_EQ(evk::parse_size("12345", "--x", 1024), 12345u);
  for (const char* bad : {"", "abc", "12Q", "0", "-5M", "1T"}) {
    try {
      evk::parse_size(bad, "--gpu-memory", 1024);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const evk::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--gpu-memory"), std::string::npos) << e.what();
    }
  }
}
