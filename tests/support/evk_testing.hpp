// Helpers shared by all test suites.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "evk/device.hpp"

namespace evk::testing {

// ../shared/data beside the checkout, or $EVK_SHARED_DATA (set by the GPU bundle's runner).
// Empty path when absent: tests using it must GTEST_SKIP().
std::filesystem::path shared_data_dir();
// The project's ignored data/ folder filled by scripts/fetch-data.sh, or $EVK_DATA_DIR.
std::filesystem::path project_data_dir();
// build/bin (or $EVK_BIN_DIR): where the tool executables are.
std::filesystem::path bin_dir();

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};
// Runs a shell command line, capturing stdout and stderr.
CommandResult run(const std::string& command_line);
// Runs one of the tools in bin_dir() with the given argument string.
CommandResult run_tool(const std::string& tool, const std::string& args);

// A fresh empty directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace evk::testing

// Skips the current test when no usable GPU is present (never passes it).
#define EVK_REQUIRE_GPU()                                                                 \
  do {                                                                                    \
    if (!::evk::gpu_environment().usable())                                               \
      GTEST_SKIP() << "no usable GPU: " << ::evk::gpu_environment().status;               \
  } while (0)
