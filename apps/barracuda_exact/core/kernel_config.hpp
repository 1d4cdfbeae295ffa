// The paper's 15 fixed parameters of the exact-match kernel (Table 2): legal values, defaults,
// legality rules and the NVRTC options for a configuration. Shared by the GPU backend and the GI problem.
#pragma once
#include <string>
#include <vector>

#include "evk/gi/problem.hpp"

namespace evk::barracuda_exact {

std::vector<gi::ConfigParam> kernel_params();
gi::Config default_kernel_config();
// Throws InputError ("kernel config: ...") for unknown names, values outside the legal list and
// illegal combinations. Missing parameters take their defaults.
gi::Config validate_kernel_config(const gi::Config& cfg);
// "-DNAME=value" for all 15 parameters (booleans as 0/1, cache_threads "off" as 0); validates first.
std::vector<std::string> kernel_compile_options(const gi::Config& cfg);
bool is_default_config(const gi::Config& cfg);

struct KernelGeometry {
  int block_w = 64;
  int threads_per_seq = 1;  // cache_threads (or 1) x 2 with kl_par
  bool many_blocks = false;
};
KernelGeometry kernel_geometry(const gi::Config& cfg);  // of a validated config

// Parses "NAME=value NAME=value" (a genome's fixed part) into a config; other tokens are ignored.
gi::Config parse_config_text(const std::string& text);

constexpr const char* kKernelEntry = "cuda_find_exact_matches";
constexpr int kMaxReadLen = 1024;  // MAX_READ_WORDS * 8 in the kernel

}  // namespace evk::barracuda_exact
