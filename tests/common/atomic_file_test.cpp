#include <fstream>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"

namespace fs = std::filesystem;

static size_t count_entries(const fs::path& d) {
  size_t n = 0;
  for ([[maybe_unused]] auto& e : fs::directory_iterator(d)) ++n;
  return n;
}

TEST(AtomicOutput, NothingLeftWithoutCommit) {
  evk::testing::TempDir d;
  {
    evk::AtomicOutput out(d / "result.txt");
    std::ofstream(out.temp_path()) << "half written";
    EXPECT_TRUE(fs::exists(out.temp_path()));
    EXPECT_FALSE(fs::exists(d / "result.txt"));
  }
  EXPECT_EQ(count_entries(d.path()), 0u);
}

TEST(AtomicOutput, CommitRenames) {
  evk::testing::TempDir d;
  {
    evk::AtomicOutput out(d / "result.txt");
    std::ofstream(out.temp_path()) << "done";
    out.commit();
  }
  std::ifstream in(d / "result.txt");
  std::string s;
  in >> s;
  EXPECT_EQ(s, "done");
  EXPECT_EQ(count_entries(d.path()), 1u);
}

TEST(AtomicOutput, ReplacesExistingOnlyOnCommit) {
  evk::testing::TempDir d;
  std::ofstream(d / "r.txt") << "old";
  {
    evk::AtomicOutput out(d / "r.txt");
    std::ofstream(out.temp_path()) << "new";
  }
  std::ifstream in(d / "r.txt");
  std::string s;
  in >> s;
  EXPECT_EQ(s, "old");
}

TEST(AtomicOutput, BadTargetsAreInputErrors) {
  evk::testing::TempDir d;
  EXPECT_THROW(evk::AtomicOutput(d / "no_such_dir" / "x.txt"), evk::InputError);
  EXPECT_THROW(evk::AtomicOutput(d.path()), evk::InputError);  // a directory
  if (::geteuid() != 0) {  // root can write anywhere
    fs::create_directory(d / "ro");
    fs::permissions(d / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_THROW(evk::AtomicOutput(d / "ro" / "x.txt"), evk::InputError);
  }
  try {
    evk::AtomicOutput o(d / "no_such_dir" / "x.txt");
    FAIL() << "no exception";
  } catch (const evk::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.txt"), std::string::npos) << "names the file: " << e.what();
  }
}
