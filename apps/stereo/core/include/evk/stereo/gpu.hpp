// The GPU backend: the selected variant of stereoKernel on one GPU. Usable from code built without
// CUDA (the constructor then throws InputError), so the CLI needs no CUDA headers.
#pragma once
#include <memory>
#include <string>

#include "evk/device.hpp"
#include "evk/dispatch.hpp"
#include "evk/stereo/kernel_config.hpp"
#include "evk/stereo/types.hpp"

namespace evk::stereo {

// The registry of stereo kernels (kernel "stereo"; built-in evolved variants are added here).
Registry make_registry();
// Resolves --kernel (auto | original | evolved | FILE) for a device, overlay directory included.
// Genome variants are not runnable yet: throws InputError for a selection that carries a genome.
Selection select_variant(const std::string& choice, const DeviceInfo& device);

struct GpuTimes {
  double load_ms = 0;      // kernel load / NVRTC compile (first use of a configuration)
  double upload_ms = 0;    // images to the GPU
  double kernel_ms = 0;    // the kernel (CUDA events)
  double download_ms = 0;  // disparities back
};

class GpuBackend {
 public:
  // device: CUDA device index; cfg: the kernel configuration (default: the original's).
  explicit GpuBackend(int device = 0, gi::Config cfg = default_config());
  ~GpuBackend();
  GpuBackend(const GpuBackend&) = delete;
  GpuBackend& operator=(const GpuBackend&) = delete;

  // Buffers are kept between calls (re-allocated when the size changes): batches reuse them.
  DisparityMap run(const Image8& left, const Image8& right, const Params& p, GpuTimes* times = nullptr);
  std::string describe() const;  // e.g. "NVIDIA H200, stereoKernel original (embedded fatbin)"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace evk::stereo
