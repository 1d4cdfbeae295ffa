// main() of every command: exceptions mapped to one line on stderr and an exit code (evk/error.hpp).
#pragma once
#include <functional>
#include <string>

#include "evk/error.hpp"

namespace evk {
// Installs the cleanup signal handlers (evk/atomic_file.hpp), runs `body` and returns its exit code,
// or maps the exception it throws to one line "tool: message" on stderr and an exit code:
// InputError 2, Refused 1, CudaError 1 ("CUDA error: ..."), bad_alloc 1 ("out of memory"), any other
// exception 1 ("internal error: ..."). evk::run_cli (evk/cli.hpp) runs the CLI11 tools through it.
int run_guarded(const std::string& tool, const std::function<int()>& body);
// One line "tool: message" on stderr (control characters in the message shown escaped); returns code.
int report_error(const std::string& tool, const std::string& message, int code);
}  // namespace evk
