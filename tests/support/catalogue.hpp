// The bad-input catalogue (docs/ROBUSTNESS.md): one test per hostile input, run through the real
// executable. A rejected input must give exit 2 (1 for internal faults), exactly one line on stderr
// naming the file or argument and the problem, and leave no output or temporary file behind.
//
//   EVK_CATALOGUE_CASE(StereoCatalogue, T01_PgmDataCut, "stereo", "truncation", "P5 pixel data cut",
//                      "reject") { ... rec.run(...) ...; expect_rejected(...); }
//
// Every case registers itself (tool, id, category, input, expected behaviour); with
// $EVK_CATALOGUE_OUT set each run appends a JSON line with the observed exit code, stderr line and
// pass/fail, from which scripts/robustness-table.sh writes the table in docs/ROBUSTNESS.md.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "evk_testing.hpp"

namespace evk::testing::catalogue {

namespace fs = std::filesystem;

struct Case {
  std::string tool, id, category, input, expect;
};

inline std::vector<Case>& registry() {
  static std::vector<Case> r;
  return r;
}
struct Registrar {
  explicit Registrar(Case c) { registry().push_back(std::move(c)); }
};

// Single-quoted for the shell (names with spaces, newlines and non-UTF-8 bytes pass unchanged).
inline std::string q(const fs::path& p) {
  std::string s = "'";
  for (char c : p.string()) {
    if (c == '\'') s += "'\\''";
    else s += c;
  }
  return s + "'";
}

// Every file and directory below dir (relative names), to see what a run left behind.
inline std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> s;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    s.insert(fs::relative(it->path(), dir, ec).string());
  return s;
}

inline int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline void spit(const fs::path& p, const std::string& s) {
  std::ofstream o(p, std::ios::binary);
  o << s;
}

class Recorder {
 public:
  Recorder(Case c, const fs::path& dir) : c_(std::move(c)), dir_(dir) {}
  ~Recorder() {
    const char* out = std::getenv("EVK_CATALOGUE_OUT");
    if (!out || !*out) return;
    std::string err = r_.err;
    if (!err.empty() && err.back() == '\n') err.pop_back();
    for (std::size_t at; !dir_.empty() && (at = err.find(dir_.string())) != std::string::npos;)
      err.replace(at, dir_.string().size(), "DIR");
    nlohmann::json j = {{"tool", c_.tool},       {"id", c_.id},         {"category", c_.category},
                        {"input", c_.input},     {"expect", c_.expect}, {"exit_code", ran_ ? r_.exit_code : -1},
                        {"stderr", err},
                        {"result", ::testing::Test::IsSkipped() ? "skipped"
                                   : ::testing::Test::HasFailure() ? "FAIL"
                                                                   : "pass"}};
    std::ofstream o(out, std::ios::app);
    o << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  // Runs a shell command line (stdout and stderr captured) and keeps it for the record.
  const CommandResult& run(const std::string& cmd) {
    r_ = evk::testing::run(cmd);
    ran_ = true;
    return r_;
  }
  const CommandResult& tool(const std::string& args) {
    return run("'" + (evk::testing::bin_dir() / c_.tool).string() + "' " + args);
  }
  const CommandResult& result() const { return r_; }

 private:
  Case c_;
  fs::path dir_;
  CommandResult r_;
  bool ran_ = false;
};

// A shell snippet that starts `command` in the background (SIGINT not ignored, as from a terminal),
// waits until the tool runs (not yet the shell or env that start it: a SIGINT then would be lost, the
// background shell ignoring it) with its SIGINT handler installed, then until `ready` (a shell condition) holds,
// sends SIGINT and prints "exit N" on stderr.
// `feed`: a command whose output is piped into it (empty: none).
inline std::string interrupt_when(const std::string& command, const std::string& ready = "true",
                                  const std::string& feed = "") {
  return (feed.empty() ? "" : feed + " | ") + "env --default-signal=INT " + command + " & pid=$!; "
         "for i in $(seq 2000); do e=$(readlink /proc/$pid/exe 2>/dev/null); "
         "case \"${e##*/}\" in bash|sh|dash|env|'') sleep 0.01; continue ;; esac; "
         "m=$(awk '/SigCgt/{print $2}' /proc/$pid/status 2>/dev/null); "
         "[ -n \"$m\" ] && [ $(( 0x$m & 2 )) -ne 0 ] && break; sleep 0.01; done; "
         "for i in $(seq 2000); do " + ready + " && break; sleep 0.01; done; "
         "kill -INT $pid; wait $pid; echo \"exit $?\" >&2";
}

// The rule for a rejected input. `mentions`: strings the one stderr line must contain (the file or
// argument, the problem). `before`: the files in dir before the run (nothing may be added).
inline void expect_rejected(const CommandResult& r, const std::vector<std::string>& mentions, const fs::path& dir,
                            const std::set<std::string>& before, int code = 2) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << "stderr must be one line:\n" << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  for (const auto& m : mentions) EXPECT_NE(r.err.find(m), std::string::npos) << "expected '" << m << "' in: " << r.err;
  const auto after = files_in(dir);
  for (const auto& f : after) EXPECT_TRUE(before.count(f)) << "left behind: " << f;
}

// All cases of `tool` must be rows of the table in docs/ROBUSTNESS.md with their expectation.
inline void expect_documented(const std::string& tool) {
  const std::string doc = slurp(fs::path(EVK_SOURCE_DIR) / "docs" / "ROBUSTNESS.md");
  ASSERT_FALSE(doc.empty()) << "docs/ROBUSTNESS.md missing";
  int n = 0;
  for (const auto& c : registry()) {
    if (c.tool != tool) continue;
    ++n;
    const std::string row = "| " + c.tool + " | " + c.id + " | " + c.category + " | " + c.input + " | " + c.expect + " |";
    const auto at = doc.find(row);
    EXPECT_NE(at, std::string::npos) << "not in docs/ROBUSTNESS.md (run scripts/robustness-table.sh): " << row;
    if (at != std::string::npos) {
      const std::string line = doc.substr(at, doc.find('\n', at) - at);
      EXPECT_NE(line.find("| pass |"), std::string::npos) << "documented result is not 'pass': " << line;
    }
  }
  EXPECT_GE(n, 30) << tool << ": the catalogue needs at least 30 cases";
}

}  // namespace evk::testing::catalogue

// One catalogue case: a gtest named suite.id whose body gets `rec` (a Recorder) and `dir` (a fresh
// temporary directory).
#define EVK_CATALOGUE_CASE(suite, id, tool, category, input, expect)                                         \
  static void suite##_##id##_body(::evk::testing::catalogue::Recorder& rec, const ::std::filesystem::path& dir); \
  static ::evk::testing::catalogue::Registrar suite##_##id##_reg({tool, #id, category, input, expect});       \
  TEST(suite, id) {                                                                                           \
    ::evk::testing::TempDir tmp_;                                                                             \
    ::evk::testing::catalogue::Recorder rec({tool, #id, category, input, expect}, tmp_.path());               \
    suite##_##id##_body(rec, tmp_.path());                                                                    \
  }                                                                                                           \
  static void suite##_##id##_body(::evk::testing::catalogue::Recorder& rec, const ::std::filesystem::path& dir)
