// A small but non-trivial gi::Problem for the engine's tests: tests/gi/toy_kernel.cu (loops, ifs,
// shared memory, two config macros) against an exact CPU reference.
#pragma once
#include <memory>

#include "evk/gi/problem.hpp"

namespace evk::gi::testing {
std::unique_ptr<Problem> make_toy_problem();
// The toy problem with a replaced kernel source (fake candidates for the worker-isolation test).
std::unique_ptr<Problem> make_toy_problem_with_source(const std::string& source);
}  // namespace evk::gi::testing
