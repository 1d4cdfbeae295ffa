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

#include "evk/cuda_library.hpp"
#include "field_diff.hpp"
#include "kernel_config.hpp"
#include "resample_cpu.hpp"
#include "types.hpp"

namespace evk::reg_deform::gpu {

// A typed device allocation.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) { resize(n); }
  ~Buffer() { release(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_, n_ = o.n_;
      o.p_ = nullptr, o.n_ = 0;
    }
    return *this;
  }
  void resize(std::size_t n);  // discards contents
  void upload(const T* src, std::size_t n, cudaStream_t s = nullptr);
  void download(T* dst, std::size_t n, cudaStream_t s = nullptr) const;
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  void release();

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

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

// field_diff_cpu's figures for device arrays (reg_field_diff in helpers.cu), without downloading the
// field: a few hundred microseconds where the host loop over a 1 mm head takes a quarter of a second.
// scratch: 4 doubles of device memory (resized here). Waits for the stream.
FieldDiff field_diff_gpu(const float* got, DiffLayout gl, const float* ref, DiffLayout rl, const std::uint8_t* inside,
                         std::size_t n, double tol, double wrong_tol, Buffer<double>& scratch, cudaStream_t s);

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

// Resampling on the GPU (cubic: the coefficients are prefiltered on the CPU).
Volume resample(const Volume& flo, const Field& field, const ResampleOptions& opt);

}  // namespace evk::reg_deform::gpu
#endif
