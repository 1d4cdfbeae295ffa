// Which distinct programs of the kernel space a GPU test runs when it cannot run them all: every
// program of one block width, then for every other block width a set covering every pair of values
// of the other 14 parameters that occurs in a legal combination with it (so every triple with
// BLOCK_W in it), then the rest in enumeration order (small block widths first).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/kernel_space.hpp"

namespace evk::barracuda_exact {

struct CoveragePlan {
  std::vector<std::size_t> full;      // every program with BLOCK_W == full_block_w
  std::vector<std::size_t> pairwise;  // per other BLOCK_W: greedy pairwise cover (over member combinations)
  std::vector<std::size_t> rest;      // every other program, in enumeration order
};

// Deterministic. Pairs are of the legal combinations (a program covers the pairs of all its members).
CoveragePlan plan_coverage(const KernelSpace& s, const std::string& full_block_w);

// Index of the pair (a=va, b=vb) of the 14 non-BLOCK_W parameters, for the plan and its tests;
// -1 when a == b. Values are positions in kernel_params()'s value lists.
int value_pair_index(int param_a, int value_a, int param_b, int value_b);
constexpr int kValuePairCount = 33 * 33;  // 7 cache_threads values + 13 booleans x 2, squared

}  // namespace evk::barracuda_exact
