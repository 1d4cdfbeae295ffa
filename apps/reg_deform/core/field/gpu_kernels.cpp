#include "core/field/gpu_kernels.hpp"
#if defined(EVK_HAVE_CUDA)
#include <map>
#include <mutex>

#include "evk/cuda_check.hpp"
#include "evk/device.hpp"
#include "evk/embedded.hpp"
#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "evk/parallel.hpp"
#include "evk_kernels/reg_deform_original.hpp"

namespace evk::reg_deform::gpu {

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

}  // namespace evk::reg_deform::gpu
#endif
