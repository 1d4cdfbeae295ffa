// GPU test support: one launch of the exact kernel with its outputs poisoned (gpu_test.cpp).
#pragma once
#include <vector>

#include "core/gpu_exact.hpp"
#include "core/match.hpp"
#include "evk/gi/problem.hpp"

namespace bct {

// Runs kernel k with cfg over the reads: poisoned output, launch, copy back.
std::vector<evk::barracuda_exact::KL> run_kernel(cudaKernel_t k, const evk::gi::Config& cfg,
                                                 const evk::barracuda_exact::DeviceBwt& bwt,
                                                 const evk::barracuda_exact::PackedReads& p);
// The reads whose (k, l) differ.
int mismatches(const std::vector<evk::barracuda_exact::KL>& a, const std::vector<evk::barracuda_exact::KL>& b);

}  // namespace bct
