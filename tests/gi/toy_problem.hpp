// A small but non-trivial gi::Problem for the engine's tests: tests/gi/toy_kernel.cu (loops, ifs,
// shared memory, two config macros) against an exact CPU reference.
#pragma once
#include <memory>
#include <string>

#include "evk/gi/grammar.hpp"
#include "evk/gi/problem.hpp"

namespace evk::gi::testing {
std::unique_ptr<Problem> make_toy_problem();
// The toy problem with a replaced kernel source (fake candidates for the worker-isolation test).
std::unique_ptr<Problem> make_toy_problem_with_source(const std::string& source);
// The toy kernel's grammar.
Grammar toy_grammar();
// 1-based number of the first source line containing `needle`, -1 if none.
int line_of(const Grammar& g, const std::string& needle);
}  // namespace evk::gi::testing
