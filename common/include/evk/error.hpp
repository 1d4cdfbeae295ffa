// Error types shared by every tool. Libraries throw; CLIs catch in evk::run_cli and turn the
// exception into one line on stderr and an exit code:
//   InputError    -> exit 2  (bad input file, bad argument, unusable output path)
//   anything else -> exit 1  (internal failure, CUDA error, bug)
#pragma once
#include <stdexcept>
#include <string>

namespace evk {

enum ExitCode : int { kExitOk = 0, kExitInternal = 1, kExitInput = 2 };

// Bad input or usage. The message names the file or argument first: "reads.fq: truncated gzip".
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The command worked but its answer is "no" (e.g. `gi validate` refusing a variant): exit 1 with
// the message, not reported as an internal error.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void input_error(const std::string& what_or_where, const std::string& problem) {
  throw InputError(what_or_where + ": " + problem);
}

}  // namespace evk
