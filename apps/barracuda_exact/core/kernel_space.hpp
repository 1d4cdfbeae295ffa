// Every combination of the kernel's 15 parameters, and the distinct programs the legal ones compile
// to. A combination's program key is what NVRTC and the launch are actually given: the kernel source
// after conditional compilation and object-like macro expansion with its -D options (the GI engine's
// preprocessor, gi::preprocess), the non-macro compile options and the launch geometry. Legal
// combinations with equal keys are the same program, so testing one of them tests all.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "evk/gi/problem.hpp"

namespace evk::barracuda_exact {

std::string program_key(const std::string& source, const gi::Config& cfg);  // cfg must be legal

struct KernelProgram {
  gi::Config config;          // the first legal combination (enumeration order) with this key
  std::uint64_t members = 0;  // legal combinations with this key
  std::uint64_t hash = 0;     // fnv1a64 of the key
};

struct KernelSpace {
  std::uint64_t combinations = 0;      // walked (the whole space: product of the value counts)
  std::uint64_t legal = 0;             // accepted by kernel_compile_options
  std::uint64_t rejected = 0;          // refused by it with InputError (so never compiled)
  std::uint64_t legal_with_error = 0;  // legal, yet a #error of the kernel is active (must be 0)
  std::vector<KernelProgram> programs;         // distinct keys, in order of first appearance
  std::vector<std::uint64_t> legal_combination;  // per legal combination: its index (kernel_combination)
  std::vector<std::uint32_t> legal_program;      // per legal combination: its program (index into programs)
};

struct KernelSpaceOptions {
  int threads = 0;                      // 0: all hardware threads
  std::uint64_t first = 0, last = ~0ull;  // walk only combinations [first, last) (clamped)
};

// Walks the combinations (parameters in kernel_params() order, the last varying fastest, so BLOCK_W
// varies slowest); the result does not depend on the thread count. Grouping is exact: keys with
// equal hashes are compared in full.
KernelSpace enumerate_kernel_space(const std::string& source, const KernelSpaceOptions& o = {});

std::uint64_t kernel_combinations();              // the size of the whole space
gi::Config kernel_combination(std::uint64_t i);   // the i-th combination, every parameter present

}  // namespace evk::barracuda_exact
