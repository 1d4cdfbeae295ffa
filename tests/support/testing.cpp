#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "evk_testing.hpp"

namespace fs = std::filesystem;

namespace evk::testing {

static fs::path env_or(const char* var, const fs::path& fallback) {
  if (const char* v = std::getenv(var); v && *v) return v;
  return fallback;
}

fs::path shared_data_dir() {
  fs::path p = env_or("EVK_SHARED_DATA", fs::path(EVK_SOURCE_DIR) / ".." / "shared" / "data");
  std::error_code ec;
  return fs::is_directory(p, ec) ? fs::canonical(p, ec) : fs::path();
}

fs::path project_data_dir() { return env_or("EVK_DATA_DIR", fs::path(EVK_SOURCE_DIR) / "data"); }

fs::path bin_dir() { return env_or("EVK_BIN_DIR", fs::path(EVK_BIN_DIR)); }

static std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult run(const std::string& cmd) {
  TempDir t;
  fs::path o = t / "out", e = t / "err";
  std::string full = "(" + cmd + ") >'" + o.string() + "' 2>'" + e.string() + "' </dev/null";
  int st = std::system(full.c_str());
  CommandResult r;
  r.exit_code = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  r.out = slurp(o);
  r.err = slurp(e);
  return r;
}

CommandResult run_tool(const std::string& tool, const std::string& args) {
  std::string cmd = "'";  // appended: GCC 12 warns falsely on "lit" + string (PR105329)
  cmd.append((bin_dir() / tool).string()).append("' ").append(args);
  return run(cmd);
}

TempDir::TempDir() {
  std::random_device rd;
  for (int i = 0; i < 100; ++i) {
    fs::path p = fs::temp_directory_path() / ("evk-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::error_code ec;
    if (fs::create_directory(p, ec)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace evk::testing
