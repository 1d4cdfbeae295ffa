// The expert dense-field kernel on the device (kernels/original/reg_deform/field_expert.cu): its
// loaded image (embedded fatbin for the default TILE_Y, else NVRTC through the disk cache, as the GI
// engine compiles a candidate), the per-axis tables, and the one launch path (FieldEngine and the
// expert GI problem both use it).
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/gpu_buffer.hpp"
#include "core/kernel_config.hpp"
#include "core/types.hpp"
#include "evk/cuda_library.hpp"

namespace evk::reg_deform::gpu {

class ExpertKernel {
 public:
  // source empty: the expert seed (kernels/original/reg_deform/field_expert.cu). InputError when
  // NVRTC rejects an evolved source.
  static std::shared_ptr<const ExpertKernel> load(const ExpertConfig& cfg, const std::string& source = "");
  cudaKernel_t entry() const { return entry_; }
  const std::string& origin() const { return origin_; }

 private:
  CudaLibrary lib_;
  cudaKernel_t entry_ = nullptr;
  std::string origin_;
};

// The NVRTC request ExpertKernel::load compiles (the GI problem's compile options + a genome's).
NvrtcRequest expert_request(const ExpertConfig& cfg, const std::string& source, int cc);

// Per-axis tables (expert_axis) on the device for one reference and spacing.
class ExpertTables {
 public:
  // Throws std::invalid_argument for a spacing < 1 voxel or a grid that does not cover the reference.
  ExpertTables(const Geometry& ref, double sx, double sy, double sz, int gx, int gy, int gz);
  const int* first(int axis) const { return first_[axis].get(); }
  const float4* weights(int axis) const { return weights_[axis].get(); }

 private:
  Buffer<int> first_[3];
  Buffer<float4> weights_[3];
};

struct ExpertLaunch {
  const float4* control_points = nullptr;  // (k * gy + j) * gx + i, (x, y, z, unused)
  int gx = 0, gy = 0;
  const ExpertTables* tables = nullptr;
  int nx = 0, ny = 0, nz = 0;
  const std::uint8_t* mask = nullptr;  // nullptr: every voxel active
  Mat44 vox2world;
  bool displacement = false;
  float* field = nullptr;  // planar 3 * nx * ny * nz
};
void launch_expert(cudaKernel_t k, const ExpertLaunch& a, const ExpertConfig& cfg, cudaStream_t s);

}  // namespace evk::reg_deform::gpu
#endif
