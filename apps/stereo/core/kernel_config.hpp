// The original kernel's configuration parameters (the paper's Table 2 plus BLOCK_W and
// ROWSperTHREAD), their legal values, and what a configuration means for compiling and launching.
// Pure host logic (no CUDA needed): shared by the GPU backend, the gi problem and the tests.
#pragma once
#include <string>
#include <vector>

#include "evk/gi/problem.hpp"

namespace evk::stereo {

// The 14 parameters with legal values and defaults (the human-written kernel's settings).
std::vector<gi::ConfigParam> config_params();
gi::Config default_config();

struct KernelSettings {
  int block_w = 64, rows = 40, dper = 1, radius = 5;
  bool xhalo = false, mul24 = true, normalized = false;
  std::string cache = "none", dlcm = "none", out_type = "float";
  std::string store_pixel = "GLOBAL", store_minssd = "GLOBAL";
  std::string read_mode = "NormalizedFloat", filter = "Linear", address = "Clamp";

  // Parses and checks cfg (missing keys take defaults; unknown keys or values, or an illegal
  // combination, throw InputError naming the parameter). radius = window / 2.
  static KernelSettings from(const gi::Config& cfg, int radius = 5);
  gi::Config config() const;  // without radius

  // The texture settings actually used: combinations CUDA does not support fall back to legal ones
  // (element-type reads cannot filter linearly -> point; wrap/mirror need normalized coordinates
  // -> clamp), as the paper's host code did.
  std::string effective_filter() const;
  std::string effective_address() const;

  std::vector<std::string> compile_options() const;  // -D..., --ptxas-options=-dlcm=..
  bool is_builtin() const;   // the configuration the embedded fatbin was compiled with
  int out_w() const { return block_w - (xhalo ? 2 * radius : 0); }
  int threads() const { return block_w * dper; }
  int out_bytes() const;     // size of one output element
  std::size_t smem_bytes() const;
  // Whether this configuration reproduces the CPU reference exactly (see docs/STEREO.md): all but
  // normalized coordinates combined with wrap/mirror addressing, which change the edge reads.
  bool keeps_identity() const;
};

}  // namespace evk::stereo
