// The expert SSD kernels: Stam's SSD definition, bit for bit (disparity_cpu), with tiles, chunks of
// disparities and sliding vertical/horizontal window sums. v2 (kernels/original/stereo/ssd_expert.cu,
// the GI seed: packed rows, __vabsdiffu4/__dp4a prefix sums) for windows 3..17, v1
// (core/src/ssd_expert_v1.cu) for any window up to 97 and for comparison.
// Runs on any SgmDevice (a GPU through cuda_sgm_device; the CUDA emulator in tests).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/sgm_gpu.hpp"
#include "core/types.hpp"

namespace evk::stereo {

// v2's configuration (the -D macros EX_TY, EX_DC, EX_DS of ssd_expert.cu); the fatbin holds the
// defaults, GI variants any legal value. check() throws InputError naming the parameter.
struct SsdExpertConfig {
  int ty = 32;   // output rows per block, a multiple of 8 (8 ty threads)
  int dc = 3;    // disparities per chunk (one pass of phases 1 and 2)
  int ds = 128;  // disparities per staged right strip
  void check() const;
  int threads() const { return 8 * ty; }
  std::vector<std::string> compile_options(int radius) const;  // -DEX_R=.. -DEX_TY=.. ...
};
constexpr int kSsdExpertV2MaxRadius = 8;  // v2's compile-time radii 1..8
constexpr int kSsdExpertMaxRadius = 48;   // v1's limit (shared memory below Hopper's 227 KiB)

// Dynamic shared memory of v2 (radius 1..8, configuration c) and of v1 (radius r).
std::size_t ssd_expert_smem(int radius, const SsdExpertConfig& c = {});
std::size_t ssd_expert_v1_smem(int radius);

// Launch arguments of v2 in the kernel's parameter order (left, right, out, W, H, dmin, dmax,
// min_ssd), for callers that launch it themselves (the GI problem).
struct SsdExpertLaunch {
  unsigned grid_x = 1, grid_y = 1, threads = 1;
  std::size_t smem = 0;
};
SsdExpertLaunch ssd_expert_launch(int width, int height, int radius, const SsdExpertConfig& c = {});

enum class SsdExpertVersion { v2, v1 };

class SsdExpert {
 public:
  // v2 falls back to v1 for windows wider than 2 kSsdExpertV2MaxRadius + 1.
  SsdExpert(SgmDevice& dev, int width, int height, SsdExpertVersion version = SsdExpertVersion::v2);
  ~SsdExpert();
  SsdExpert(const SsdExpert&) = delete;
  SsdExpert& operator=(const SsdExpert&) = delete;
  int width() const { return w_; }
  int height() const { return h_; }
  void upload(const std::uint8_t* left, const std::uint8_t* right);  // enqueued
  void compute(const Params& p);                                      // enqueued; InputError if r too large
  void download(int* out);                                            // enqueued; width*height ints
  void poison();                                                      // output := 0xA5 bytes (tests)
  DisparityMap run(const Image8& left, const Image8& right, const Params& p);  // synchronous
  // The entry compute() launches for radius r ("ssd_expert_r5", "ssd_expert_v1_r5", "ssd_expert_v1").
  std::string kernel_name(int radius) const;

 private:
  SgmDevice& dev_;
  int w_, h_;
  SsdExpertVersion version_;
  void* img_[2] = {nullptr, nullptr};
  void* out_ = nullptr;
};

}  // namespace evk::stereo
