// The expert SSD kernel (kernels/original/stereo/ssd_expert.cu): Stam's SSD definition, bit for bit
// (disparity_cpu), with tiles, chunks of disparities and sliding vertical/horizontal window sums.
// Runs on any SgmDevice (a GPU through cuda_sgm_device; the CUDA emulator in tests).
#pragma once
#include <cstdint>

#include "evk/stereo/sgm_gpu.hpp"
#include "evk/stereo/types.hpp"

namespace evk::stereo {

// Dynamic shared memory the kernel needs for window radius r; kSsdExpertMaxRadius bounds it below
// Hopper's 227 KiB per block.
std::size_t ssd_expert_smem(int radius);
constexpr int kSsdExpertMaxRadius = 48;

class SsdExpert {
 public:
  SsdExpert(SgmDevice& dev, int width, int height);
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

 private:
  SgmDevice& dev_;
  int w_, h_;
  void* img_[2] = {nullptr, nullptr};
  void* out_ = nullptr;
};

}  // namespace evk::stereo
