// reg_deform's GPU backend: device-resident control points (float4 texture object), basis table,
// active lists, compact kernel output and the dense planar field, with a stream API, so a later
// full registration can keep everything on the device and re-run the kernel per iteration.
// The kernel image comes from the embedded fatbin (default macros) or NVRTC (cached) otherwise;
// launch_tile5 / launch_generic are the one launch path, shared with the GI problem.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/field/gpu_helpers.hpp"
#include "core/field/gpu_kernels.hpp"
#include "core/kernel_config.hpp"
#include "core/types.hpp"

namespace evk::reg_deform::gpu {

class ExpertKernel;  // gpu_field_expert.hpp
class ExpertTables;

struct FieldOptions {
  KernelConfig config;
  bool generic = false;  // force the one-thread-per-voxel kernel (also used when spacing != 5)
  std::string source;    // kernel source override (empty: the embedded original; with expert: the
                         // expert kernel's source, e.g. an evolved one)
  bool naive_scatter = false;  // assemble with the first, uncoalesced scatter (benchmark baseline)
  // The expert dense-field kernel (field_expert.cu) writes the planar field directly, no compact
  // list and no scatter; any spacing >= 1 voxel (smaller spacings run the generic kernel).
  bool expert = false;
  ExpertConfig expert_config;
};

// One reference geometry + mask on the device; grids are uploaded per call to set_grid.
class FieldEngine {
 public:
  FieldEngine(const Geometry& ref, const Mask& mask, double sx, double sy, double sz, const FieldOptions& opt = {});
  ~FieldEngine();
  void set_grid(const Grid& g, cudaStream_t s = nullptr);
  // Paper/generic kernels: compact positions only. Expert kernel: the dense deformation field.
  void run_kernel(cudaStream_t s = nullptr);
  // Paper/generic kernels: compact -> dense planar field. Expert kernel: nothing for a deformation
  // field (run_kernel wrote it), a re-launch writing displacements for a displacement field.
  void assemble(bool displacement, cudaStream_t s = nullptr);
  // The dense field (one launch with the expert kernel; kernel + scatter otherwise).
  void compute(bool displacement, cudaStream_t s = nullptr);
  // Fills the compact output and the dense field with NaN (tests: unwritten elements show).
  void poison(cudaStream_t s = nullptr);
  Field download(bool displacement, cudaStream_t s = nullptr) const;
  std::vector<float4> download_compact(cudaStream_t s = nullptr) const;

  bool tiled() const { return tiled_; }
  bool expert() const { return expert_; }
  // "tile5 (1x5x5 tiles)", "generic (one thread per voxel)" or "expert (dense, 32xN tiles)"
  std::string path() const;
  const std::string& kernel_origin() const;
  std::size_t active_voxels() const { return active_voxels_; }
  std::size_t compact_entries() const { return tiled_ ? tiles_host_.size() * 25 : voxels_host_.size(); }
  const std::vector<std::uint32_t>& tiles() const { return tiles_host_; }
  const std::vector<std::uint32_t>& voxels() const { return voxels_host_; }
  const Geometry& reference() const { return ref_; }
  float* device_field() const { return field_.get(); }  // planar 3 * voxels
  // The control points the kernel reads (after set_grid), for updates on the device (register).
  float4* device_control_points() const { return grid_.data(); }
  const Kernels& kernels() const { return *kernels_; }
  const FieldOptions& options() const { return opt_; }

 private:
  Geometry ref_;
  FieldOptions opt_;
  bool tiled_ = false, masked_ = false, expert_ = false;
  double sx_, sy_, sz_;
  std::shared_ptr<const ExpertKernel> expert_kernel_;
  std::unique_ptr<ExpertTables> expert_tables_;
  void launch_expert_field(bool displacement, cudaStream_t s);
  std::size_t active_voxels_ = 0;
  std::vector<std::uint32_t> tiles_host_, voxels_host_;
  int tiles_y_ = 0;
  std::shared_ptr<const Kernels> kernels_;
  std::unique_ptr<DeviceBasis> basis_;
  DeviceGrid grid_;
  Buffer<std::uint32_t> list_;
  Buffer<std::uint8_t> mask_;
  Buffer<float4> compact_;
  Buffer<float> field_;
};

}  // namespace evk::reg_deform::gpu
#endif
