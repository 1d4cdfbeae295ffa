// The paper's tile kernel on the device: its loaded image (embedded fatbin for the default macros,
// else NVRTC through the disk cache, as the GI engine compiles a candidate), the control points and
// basis table behind textures, and the one launch path of each entry (FieldEngine and the GI
// problem both use it).
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/gpu_buffer.hpp"
#include "core/kernel_config.hpp"
#include "core/types.hpp"
#include "evk/cuda_library.hpp"

namespace evk::reg_deform::gpu {

// The loaded kernel for one configuration (entries reg_deform_tile5, reg_deform_generic).
// source empty: the embedded original (nvcc fatbin for the default macros, else NVRTC); otherwise
// an evolved source (evk::gi::apply_genome), compiled through NVRTC + the disk cache with
// KernelConfig::compile_options(), exactly as the GI engine compiled it. Throws InputError when
// NVRTC rejects it.
class Kernels {
 public:
  static std::shared_ptr<const Kernels> load(const KernelConfig& cfg, const std::string& source = "");
  // Compiles the non-default configurations into the NVRTC disk cache in parallel (for cc), with
  // exactly the requests load() makes, so later loads only read the cache (tests, benchmarks).
  static void precompile(const std::vector<KernelConfig>& cfgs, int cc);
  cudaKernel_t tile5() const { return tile5_; }
  cudaKernel_t generic() const { return generic_; }
  // "embedded fatbin", "embedded fatbin (ID)" for a shipped evolved variant, or "NVRTC sm_90 ..."
  const std::string& origin() const { return origin_; }

 private:
  CudaLibrary lib_;
  cudaKernel_t tile5_ = nullptr, generic_ = nullptr;
  std::string origin_;
};

// The NVRTC request Kernels::load compiles for a configuration and source (the build compiles the
// shipped evolved variants from the same request; an identical request loads their fatbin).
NvrtcRequest kernel_request(const KernelConfig& cfg, const std::string& source, int cc);

// Control points on the device as float4 (x, y, z, 0) behind a texture object.
class DeviceGrid {
 public:
  DeviceGrid() = default;
  ~DeviceGrid();
  DeviceGrid(const DeviceGrid&) = delete;
  DeviceGrid& operator=(const DeviceGrid&) = delete;
  void upload(const Grid& g, cudaStream_t s = nullptr);  // re-upload keeps the texture when dims match
  cudaTextureObject_t texture() const { return tex_; }
  float4* data() const { return buf_.get(); }  // the texture's memory (device-side updates)
  int gx = 0, gy = 0, gz = 0;

 private:
  Buffer<float4> buf_;
  cudaTextureObject_t tex_ = 0;
};

// The 20 basis values (4 weights x 5 offsets, spacing 5) behind a float texture, in BasisA order.
class DeviceBasis {
 public:
  explicit DeviceBasis(bool basis_a);
  ~DeviceBasis();
  DeviceBasis(const DeviceBasis&) = delete;
  DeviceBasis& operator=(const DeviceBasis&) = delete;
  cudaTextureObject_t texture() const { return tex_; }
  static std::vector<float> table(bool basis_a);

 private:
  Buffer<float> buf_;
  cudaTextureObject_t tex_ = 0;
};

struct TileLaunch {
  const std::uint32_t* tiles = nullptr;
  int count = 0;
  int nx = 0, tiles_y = 0;
  int gx = 0, gy = 0;
  cudaTextureObject_t control_points = 0, basis = 0;
  int use_bspline = 1, spacing = 5;
  float4* out = nullptr;  // count * 25 entries (+ 32 slack)
};
void launch_tile5(cudaKernel_t k, const TileLaunch& a, int block_size, cudaStream_t s);

struct GenericLaunch {
  const std::uint32_t* voxels = nullptr;
  int count = 0;
  int nx = 0, ny = 0, gx = 0, gy = 0;
  float sx = 5, sy = 5, sz = 5;
  cudaTextureObject_t control_points = 0;
  int use_bspline = 1;
  float4* out = nullptr;  // count entries
};
void launch_generic(cudaKernel_t k, const GenericLaunch& a, int block_size, cudaStream_t s);

}  // namespace evk::reg_deform::gpu
#endif
