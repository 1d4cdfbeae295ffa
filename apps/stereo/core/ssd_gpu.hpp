// The SSD GPU backend: the selected variant of Stam's stereoKernel on one GPU, and the registry of
// its variants. Usable from code built without CUDA (the constructor then throws InputError).
#pragma once
#include <memory>
#include <string>

#include "core/kernel_config.hpp"
#include "core/types.hpp"
#include "evk/device.hpp"
#include "evk/dispatch.hpp"

namespace evk::stereo {

// The registry of stereo kernels: kernel "stereo" with the variants compiled into this binary
// (kernels/evolved/stereo) and the constraints a genome's configuration implies.
Registry make_registry();
// The size class of a w x h pair (the classes the gi problem trains and validates in): 320x240
// (< 100 k pixels), middlebury (< 300 k), kitti (< 1 M), 1080p.
std::string size_class_of(int width, int height);
// What a job asks of a kernel variant: its size class and properties (disparities, max_disparity,
// window, width, height) for the registry's applicability checks.
Request make_request(const Params& p, int width, int height);
// Resolves --kernel (auto | original | evolved | FILE) for a device and a job, overlay included.
Selection select_variant(const std::string& choice, const DeviceInfo& device, const Request& request = {});
// True when --kernel names a genome file (not auto / original / evolved).
bool is_genome_file_choice(const std::string& choice);

// A runnable variant of stereoKernel: the original, or a genome applied to it (evk::gi::apply_genome).
struct KernelVariant {
  std::string id = "original";  // registry id, e.g. "original", "sm90-NVIDIA_H200", a file stem
  std::string genome;           // genome text; empty: the original
  std::string source;           // patched kernel text; empty: the original (embedded fatbin when possible)
  gi::Config config = default_config();  // the fixed part; launch geometry, textures, cache come from it
  bool is_original() const { return genome.empty(); }
};
// Applies a registry variant's genome to the kernel. Pure CPU (no GPU needed): a malformed genome or
// one that does not fit this kernel throws InputError naming the variant's file (or id).
KernelVariant make_kernel_variant(const Variant& v);

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
  // An evolved (or original) variant: its source compiled with NVRTC for the device (disk-cached).
  GpuBackend(int device, KernelVariant variant);
  ~GpuBackend();
  GpuBackend(const GpuBackend&) = delete;
  GpuBackend& operator=(const GpuBackend&) = delete;

  // Buffers are kept between calls (re-allocated when the size changes): batches reuse them.
  DisparityMap run(const Image8& left, const Image8& right, const Params& p, GpuTimes* times = nullptr);
  std::string describe() const;  // e.g. "NVIDIA H200, stereoKernel original (embedded fatbin)"
  const KernelVariant& variant() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace evk::stereo
