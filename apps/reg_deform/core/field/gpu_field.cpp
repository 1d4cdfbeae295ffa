#include "core/field/gpu_field.hpp"
#if defined(EVK_HAVE_CUDA)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "core/field/active.hpp"
#include "evk/gi/genome.hpp"
#include "evk/cuda_check.hpp"
#include "evk/device.hpp"
#include "evk/embedded.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#include "core/field/field_expert_host.hpp"
#include "core/field/gpu_field_expert.hpp"

namespace evk::reg_deform::gpu {

// ---- engine -----------------------------------------------------------------------------------
FieldEngine::FieldEngine(const Geometry& ref, const Mask& mask, double sx, double sy, double sz, const FieldOptions& opt)
    : ref_(ref), opt_(opt), masked_(!mask.empty()), sx_(sx), sy_(sy), sz_(sz) {
  if (!mask.empty() && mask.size() != ref.voxels()) input_error("mask", "size does not match the reference");
  expert_ = opt.expert && expert_supports(sx, sy, sz);
  tiled_ = !expert_ && !opt.generic && sx == 5 && sy == 5 && sz == 5;
  active_voxels_ = count_active(ref, mask);
  // (an expert request at a spacing below 1 voxel runs the original generic kernel)
  kernels_ = opt.expert ? Kernels::load(KernelConfig{}) : Kernels::load(opt.config, opt.source);
  if (expert_) {
    expert_kernel_ = ExpertKernel::load(opt.expert_config, opt.source);
  } else if (tiled_) {
    const TileLayout l = tile_layout(ref, 5);
    tiles_y_ = l.nty;
    tiles_host_ = active_tiles(ref, mask, l);
    list_.upload(tiles_host_.data(), tiles_host_.size());
    compact_.resize(tiles_host_.size() * 25 + 32);  // slack: a mutant writing 32 lanes stays in bounds
    basis_ = std::make_unique<DeviceBasis>(opt.config.basis_a);
  } else {
    voxels_host_ = reg_deform::active_voxels(ref, mask);
    list_.upload(voxels_host_.data(), voxels_host_.size());
    compact_.resize(voxels_host_.size() + 32);
  }
  if (masked_) mask_.upload(mask.data(), mask.size());
  field_.resize(3 * ref.voxels());
  EVK_CUDA(cudaDeviceSynchronize());
}

FieldEngine::~FieldEngine() = default;

const std::string& FieldEngine::kernel_origin() const { return expert_ ? expert_kernel_->origin() : kernels_->origin(); }

std::string FieldEngine::path() const {
  if (expert_) return "expert (dense, 32x" + std::to_string(opt_.expert_config.tile_y) + " tiles)";
  return tiled_ ? "tile5 (1x5x5 tiles)" : "generic (one thread per voxel)";
}

void FieldEngine::set_grid(const Grid& g, cudaStream_t s) {
  if (g.sx != sx_ || g.sy != sy_ || g.sz != sz_) throw std::invalid_argument("FieldEngine: grid spacing differs from the engine's");
  const bool new_dims = g.geo.nx != grid_.gx || g.geo.ny != grid_.gy || g.geo.nz != grid_.gz;
  grid_.upload(g, s);
  if (expert_ && (new_dims || !expert_tables_))
    expert_tables_ = std::make_unique<ExpertTables>(ref_, sx_, sy_, sz_, grid_.gx, grid_.gy, grid_.gz);
}

void FieldEngine::launch_expert_field(bool displacement, cudaStream_t s) {
  if (!grid_.texture() || !expert_tables_) throw std::logic_error("FieldEngine: set_grid first");
  ExpertLaunch a;
  a.control_points = grid_.data();
  a.gx = grid_.gx;
  a.gy = grid_.gy;
  a.tables = expert_tables_.get();
  a.nx = ref_.nx;
  a.ny = ref_.ny;
  a.nz = ref_.nz;
  a.mask = masked_ ? mask_.get() : nullptr;
  a.vox2world = ref_.vox2world;
  a.displacement = displacement;
  a.field = field_.get();
  launch_expert(expert_kernel_->entry(), a, opt_.expert_config, s);
  EVK_CUDA_LAST();
}

void FieldEngine::compute(bool displacement, cudaStream_t s) {
  if (expert_) return launch_expert_field(displacement, s);
  run_kernel(s);
  assemble(displacement, s);
}

void FieldEngine::run_kernel(cudaStream_t s) {
  if (!grid_.texture()) throw std::logic_error("FieldEngine: set_grid first");
  if (expert_) return launch_expert_field(false, s);
  if (tiled_) {
    TileLaunch a;
    a.tiles = list_.get();
    a.count = static_cast<int>(tiles_host_.size());
    a.nx = ref_.nx;
    a.tiles_y = tiles_y_;
    a.gx = grid_.gx;
    a.gy = grid_.gy;
    a.control_points = grid_.texture();
    a.basis = basis_->texture();
    a.out = compact_.get();
    launch_tile5(kernels_->tile5(), a, opt_.config.block_size, s);
  } else {
    GenericLaunch a;
    a.voxels = list_.get();
    a.count = static_cast<int>(voxels_host_.size());
    a.nx = ref_.nx;
    a.ny = ref_.ny;
    a.gx = grid_.gx;
    a.gy = grid_.gy;
    a.sx = static_cast<float>(sx_);
    a.sy = static_cast<float>(sy_);
    a.sz = static_cast<float>(sz_);
    a.control_points = grid_.texture();
    a.out = compact_.get();
    launch_generic(kernels_->generic(), a, opt_.config.block_size, s);
  }
  EVK_CUDA_LAST();
}

void FieldEngine::assemble(bool displacement, cudaStream_t s) {
  if (expert_) {
    if (displacement) launch_expert_field(true, s);
    return;
  }
  const Helpers& h = helpers();
  Affine34 m = affine34f(ref_.vox2world);
  int nx = ref_.nx, ny = ref_.ny, nz = ref_.nz, disp = displacement ? 1 : 0;
  float* field = field_.get();
  if (masked_) {
    void* args[] = {&field, &nx, &ny, &nz, &m, &disp};
    launch(h.fill, dim3(std::min<unsigned>(blocks_for(ref_.voxels(), 256), 65535u)), dim3(256), args, 0, s);
  }
  const float4* compact = compact_.get();
  const std::uint32_t* list = list_.get();
  if (tiled_) {
    int count = static_cast<int>(tiles_host_.size()), ty = tiles_y_;
    const std::uint8_t* mask = masked_ ? mask_.get() : nullptr;
    void* args[] = {&compact, &list, &count, &ty, &mask, &field, &nx, &ny, &nz, &m, &disp};
    if (!count) {
    } else if (opt_.naive_scatter) {
      launch(h.scatter_tiles_naive, dim3(blocks_for(static_cast<std::size_t>(count) * 25, 256)), dim3(256), args, 0, s);
    } else {  // one block per 32 tiles (SCATTER_TILES in helpers.cu)
      launch(h.scatter_tiles, dim3(blocks_for(static_cast<std::size_t>(count), 32)), dim3(256), args, 0, s);
    }
  } else {
    int count = static_cast<int>(voxels_host_.size());
    void* args[] = {&compact, &list, &count, &field, &nx, &ny, &nz, &m, &disp};
    if (count) launch(h.scatter_voxels, dim3(blocks_for(count, 256)), dim3(256), args, 0, s);
  }
  EVK_CUDA_LAST();
}

void FieldEngine::poison(cudaStream_t s) {
  if (compact_.size()) EVK_CUDA(cudaMemsetAsync(compact_.get(), 0xff, compact_.size() * sizeof(float4), s));
  EVK_CUDA(cudaMemsetAsync(field_.get(), 0xff, field_.size() * sizeof(float), s));
}

Field FieldEngine::download(bool displacement, cudaStream_t s) const {
  Field f;
  f.geo = ref_;
  f.displacement = displacement;
  f.data.resize(3 * ref_.voxels());
  field_.download(f.data.data(), f.data.size(), s);
  return f;
}

std::vector<float4> FieldEngine::download_compact(cudaStream_t s) const {
  std::vector<float4> c(compact_entries());
  compact_.download(c.data(), c.size(), s);
  return c;
}

}  // namespace evk::reg_deform::gpu
#endif
