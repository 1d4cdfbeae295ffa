// An SgmDevice that runs the SGM kernel sources in the CUDA emulator (tests only).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "evk/stereo/sgm_gpu.hpp"

namespace stereo_test {

// Kernel name -> host-compiled kernel taking CUDA-style argument arrays.
const std::map<std::string, std::function<void(void**)>>& emulated_sgm_kernels();

class EmuSgmDevice final : public evk::stereo::SgmDevice {
 public:
  explicit EmuSgmDevice(std::uint64_t seed = 1) : seed_(seed) {}
  void* alloc(std::size_t bytes) override;
  void release(void* p) override;
  void to_device(void* dst, const void* src, std::size_t n) override;
  void to_host(void* dst, const void* src, std::size_t n) override;
  void fill(void* dst, int byte, std::size_t n) override;
  void launch(const std::string& kernel, evk::stereo::Dim3 grid, evk::stereo::Dim3 block, std::size_t smem,
              void** args) override;
  void synchronize() override {}
  int launches() const { return launches_; }

 private:
  std::uint64_t seed_;
  int launches_ = 0;
};

}  // namespace stereo_test
