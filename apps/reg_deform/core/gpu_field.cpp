#include "gpu_field.hpp"
#if defined(EVK_HAVE_CUDA)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "active.hpp"
#include "evk/gi/genome.hpp"
#include "evk/cuda_check.hpp"
#include "evk/device.hpp"
#include "evk/embedded.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#include "evk_kernels/reg_deform_helpers.hpp"
#include "evk_kernels/reg_deform_original.hpp"
#include "field_expert_host.hpp"
#include "gpu_field_expert.hpp"

namespace evk::reg_deform::gpu {

// ---- buffers ----------------------------------------------------------------------------------
template <class T>
void Buffer<T>::resize(std::size_t n) {
  if (n == n_) return;
  release();
  if (n) EVK_CUDA(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
  n_ = n;
}
template <class T>
void Buffer<T>::upload(const T* src, std::size_t n, cudaStream_t s) {
  if (n > n_) resize(n);
  if (n) EVK_CUDA(cudaMemcpyAsync(p_, src, n * sizeof(T), cudaMemcpyHostToDevice, s));
}
template <class T>
void Buffer<T>::download(T* dst, std::size_t n, cudaStream_t s) const {
  if (n) EVK_CUDA(cudaMemcpyAsync(dst, p_, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  EVK_CUDA(cudaStreamSynchronize(s));
}
template <class T>
void Buffer<T>::release() {
  if (p_) cudaFree(p_);
  p_ = nullptr;
  n_ = 0;
}
template class Buffer<float>;
template class Buffer<float4>;
template class Buffer<std::uint32_t>;
template class Buffer<std::uint8_t>;
template class Buffer<double>;
template class Buffer<int>;

namespace {
struct Affine34 {
  float m[12];
};
Affine34 affine34(const Mat44& a) {
  Affine34 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) r.m[i * 4 + j] = static_cast<float>(a.m[i][j]);
  return r;
}

template <class T>
cudaTextureObject_t linear_texture(T* ptr, std::size_t n) {
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeLinear;
  res.res.linear.devPtr = ptr;
  res.res.linear.desc = cudaCreateChannelDesc<T>();
  res.res.linear.sizeInBytes = n * sizeof(T);
  cudaTextureDesc td{};
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t t = 0;
  EVK_CUDA(cudaCreateTextureObject(&t, &res, &td, nullptr));
  return t;
}

struct Helpers {
  CudaLibrary lib;
  cudaKernel_t fill, scatter_voxels, scatter_tiles, scatter_tiles_naive, resample, field_diff;
  Helpers() : lib(reg_deform_helpers().fatbin) {
    fill = lib.kernel("reg_fill_identity");
    scatter_voxels = lib.kernel("reg_scatter_voxels");
    scatter_tiles = lib.kernel("reg_scatter_tiles");
    scatter_tiles_naive = lib.kernel("reg_scatter_tiles_naive");
    resample = lib.kernel("reg_resample");
    field_diff = lib.kernel("reg_field_diff");
  }
};
const Helpers& helpers() {
  static Helpers h;
  return h;
}
unsigned blocks_for(std::size_t n, unsigned bs) { return static_cast<unsigned>((n + bs - 1) / bs); }
}  // namespace

// ---- kernels ----------------------------------------------------------------------------------
NvrtcRequest kernel_request(const KernelConfig& cfg, const std::string& source, int cc) {
  NvrtcRequest req;
  req.source = source.empty() ? std::string(reg_deform_original().text()) : source;
  req.name = "reg_deform.cu";
  req.options = cfg.compile_options();  // as the GI problem compiles
  for (auto& o : evk::gi::source_nvrtc_options(req.source)) req.options.push_back(o);  // a genome's option genes
  req.cc = cc;
  return req;
}

void Kernels::precompile(const std::vector<KernelConfig>& cfgs, int cc) {
  parallel_for(cfgs.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      if (!cfgs[i].macros_default()) CompileCache().compile(kernel_request(cfgs[i], "", cc));
  });
}

std::shared_ptr<const Kernels> Kernels::load(const KernelConfig& cfg, const std::string& source) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Kernels>> cache;
  const std::vector<std::string> options = cfg.compile_options();  // as the GI problem compiles
  std::string key;
  for (const auto& d : options) key += d + " ";
  if (!source.empty()) key += "src:" + hex64(fnv1a64(source.data(), source.size()));
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto k = std::shared_ptr<Kernels>(new Kernels());
  if (source.empty() && cfg.macros_default()) {  // block size is a launch parameter only
    k->lib_ = CudaLibrary(reg_deform_original().fatbin);
    k->origin_ = "embedded fatbin";
  } else {
    int dev = 0;
    EVK_CUDA(cudaGetDevice(&dev));
    const auto& env = gpu_environment();
    const int cc = dev < static_cast<int>(env.devices.size()) ? env.devices[dev].cc() : 90;
    const NvrtcRequest req = kernel_request(cfg, source, cc);
    if (const EmbeddedVariant* e = find_embedded_variant(req.source, req.options)) {
      k->lib_ = CudaLibrary(e->fatbin);
      k->origin_ = std::string("embedded fatbin (") + e->id + ")";
    } else {
      NvrtcResult r = CompileCache().compile(req);
      if (!r.ok) {
        std::string first = r.log.substr(0, r.log.find('\n'));  // one line for the CLI
        throw InputError("reg_deform kernel (" + cfg.describe() + (source.empty() ? "" : ", evolved source") +
                         "): NVRTC failed: " + first);
      }
      k->lib_ = CudaLibrary(r.cubin.data());
      k->origin_ = "NVRTC sm_" + std::to_string(cc) + (r.log == "(cached)" ? " (cached)" : "");
    }
  }
  k->tile5_ = k->lib_.kernel("reg_deform_tile5");
  k->generic_ = k->lib_.kernel("reg_deform_generic");
  cache[key] = k;
  return k;
}

// ---- grid and basis ---------------------------------------------------------------------------
DeviceGrid::~DeviceGrid() {
  if (tex_) cudaDestroyTextureObject(tex_);
}

void DeviceGrid::upload(const Grid& g, cudaStream_t s) {
  const std::size_t np = g.points();
  std::vector<float4> host(np);
  for (std::size_t i = 0; i < np; ++i) host[i] = make_float4(g.data[i], g.data[np + i], g.data[2 * np + i], 0.0f);
  const bool same = buf_.size() == np && tex_;
  if (!same) {
    if (tex_) cudaDestroyTextureObject(tex_);
    tex_ = 0;
    buf_.resize(np);
  }
  buf_.upload(host.data(), np, s);
  EVK_CUDA(cudaStreamSynchronize(s));  // host staging buffer goes out of scope
  if (!same) tex_ = linear_texture(buf_.get(), np);
  gx = g.geo.nx;
  gy = g.geo.ny;
  gz = g.geo.nz;
}

std::vector<float> DeviceBasis::table(bool basis_a) {
  std::vector<float> t(20);
  for (int o = 0; o < 5; ++o) {
    double w[4];
    bspline_weights(o / 5.0, w);
    for (int k = 0; k < 4; ++k) t[basis_a ? o * 4 + k : k * 5 + o] = static_cast<float>(w[k]);
  }
  return t;
}

DeviceBasis::DeviceBasis(bool basis_a) {
  const auto t = table(basis_a);
  buf_.upload(t.data(), t.size());
  EVK_CUDA(cudaDeviceSynchronize());
  tex_ = linear_texture(buf_.get(), t.size());
}
DeviceBasis::~DeviceBasis() {
  if (tex_) cudaDestroyTextureObject(tex_);
}

// ---- launches ---------------------------------------------------------------------------------
void launch_tile5(cudaKernel_t k, const TileLaunch& a, int block_size, cudaStream_t s) {
  if (block_size < 32 || block_size > 1024 || block_size % 32) throw InputError("BLOCK_SIZE: must be a multiple of 32 in [32, 1024]");
  if (a.count == 0) return;
  const int warps = block_size / 32;
  const unsigned blocks = static_cast<unsigned>((a.count + warps - 1) / warps);
  TileLaunch v = a;
  void* args[] = {&v.tiles, &v.count, &v.nx, &v.tiles_y, &v.gx, &v.gy, &v.control_points, &v.basis,
                  &v.use_bspline, &v.spacing, &v.out};
  launch(k, dim3(blocks), dim3(block_size), args, static_cast<size_t>(warps) * 16 * sizeof(float4), s);
}

void launch_generic(cudaKernel_t k, const GenericLaunch& a, int block_size, cudaStream_t s) {
  if (block_size < 32 || block_size > 1024 || block_size % 32) throw InputError("BLOCK_SIZE: must be a multiple of 32 in [32, 1024]");
  if (a.count == 0) return;
  GenericLaunch v = a;
  void* args[] = {&v.voxels, &v.count, &v.nx, &v.ny, &v.gx, &v.gy, &v.sx, &v.sy, &v.sz, &v.control_points,
                  &v.use_bspline, &v.out};
  launch(k, dim3(blocks_for(a.count, block_size)), dim3(block_size), args, 0, s);
}

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
  Affine34 m = affine34(ref_.vox2world);
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

// ---- resampling -------------------------------------------------------------------------------
Volume resample(const Volume& flo, const Field& field, const ResampleOptions& opt) {
  const Helpers& h = helpers();
  std::vector<float> coef;
  const std::vector<float>* src = &flo.data;
  if (opt.interp == Interp::cubic) {
    coef = bspline_coefficients(flo, opt.threads);
    src = &coef;
  }
  Buffer<float> d_field, d_flo, d_out;
  d_field.upload(field.data.data(), field.data.size());
  d_flo.upload(src->data(), src->size());
  const std::size_t nv = field.geo.voxels();
  d_out.resize(nv);
  const float* pf = d_field.get();
  const float* pflo = d_flo.get();
  float* pout = d_out.get();
  int nx = field.geo.nx, ny = field.geo.ny, nz = field.geo.nz, disp = field.displacement ? 1 : 0;
  int fx = flo.geo.nx, fy = flo.geo.ny, fz = flo.geo.nz;
  int interp = opt.interp == Interp::nearest ? 0 : opt.interp == Interp::linear ? 1 : 3;
  float pad = opt.pad;
  Affine34 rv = affine34(field.geo.vox2world), fw = affine34(flo.geo.vox2world.inverse());
  void* args[] = {&pf, &nx, &ny, &nz, &rv, &disp, &pflo, &fx, &fy, &fz, &fw, &interp, &pad, &pout};
  launch(h.resample, dim3(blocks_for(nv, 256)), dim3(256), args);
  EVK_CUDA_LAST();
  Volume out;
  out.geo = field.geo;
  out.data.resize(nv);
  d_out.download(out.data.data(), nv);
  return out;
}

// ---- the GI check ------------------------------------------------------------------------------
FieldDiff field_diff_gpu(const float* got, DiffLayout gl, const float* ref, DiffLayout rl, const std::uint8_t* inside,
                         std::size_t n, double tol, double wrong_tol, Buffer<double>& out, cudaStream_t s) {
  out.resize(4);  // 4 x 64 bits: max error bits, unset, over, wrong
  EVK_CUDA(cudaMemsetAsync(out.get(), 0, 4 * sizeof(double), s));
  FieldDiff d;
  if (n) {
    long long gs = gl.elem, gc = gl.comp, rs = rl.elem, rc = rl.comp, count = static_cast<long long>(n);
    void* res = out.get();
    void* args[] = {&got, &gs, &gc, &ref, &rs, &rc, &inside, &count, &tol, &wrong_tol, &res};
    int dev = 0, sms = 0;
    EVK_CUDA(cudaGetDevice(&dev));
    EVK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const unsigned blocks = std::min<unsigned>(blocks_for(n, 256), static_cast<unsigned>(sms) * 8);
    launch(helpers().field_diff, dim3(blocks), dim3(256), args, 0, s);
    EVK_CUDA_LAST();
  }
  unsigned long long h[4];
  EVK_CUDA(cudaMemcpyAsync(h, out.get(), sizeof h, cudaMemcpyDeviceToHost, s));
  EVK_CUDA(cudaStreamSynchronize(s));
  std::memcpy(&d.worst, &h[0], sizeof d.worst);
  d.unset = h[1];
  d.over = h[2];
  d.wrong = h[3];
  return d;
}

}  // namespace evk::reg_deform::gpu
#endif
