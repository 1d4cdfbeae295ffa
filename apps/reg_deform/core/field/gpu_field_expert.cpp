#include "core/field/gpu_field_expert.hpp"
#if defined(EVK_HAVE_CUDA)
#include <map>
#include <mutex>
#include <stdexcept>

#include "core/field/field_expert_host.hpp"
#include "evk/cuda_check.hpp"
#include "evk/device.hpp"
#include "evk/embedded.hpp"
#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "evk_kernels/reg_field_expert.hpp"

namespace evk::reg_deform::gpu {

namespace {
struct ExpertAffine {  // as the kernel's struct: world = M * (i, j, k, 1), rows of 4
  float m[12];
};
}  // namespace

NvrtcRequest expert_request(const ExpertConfig& cfg, const std::string& source, int cc) {
  NvrtcRequest req;
  req.source = source.empty() ? std::string(reg_field_expert().text()) : source;
  req.name = "field_expert.cu";
  req.options = cfg.compile_options();  // as the expert GI problem compiles
  for (auto& o : evk::gi::source_nvrtc_options(req.source)) req.options.push_back(o);  // a genome's option genes
  req.cc = cc;
  return req;
}

std::shared_ptr<const ExpertKernel> ExpertKernel::load(const ExpertConfig& cfg, const std::string& source) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const ExpertKernel>> cache;
  std::string key;
  for (const auto& d : cfg.compile_options()) key += d + " ";
  if (!source.empty()) key += "src:" + hex64(fnv1a64(source.data(), source.size()));
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto k = std::shared_ptr<ExpertKernel>(new ExpertKernel());
  if (source.empty() && cfg.is_default()) {
    k->lib_ = CudaLibrary(reg_field_expert().fatbin);
    k->origin_ = "embedded fatbin (expert)";
  } else {
    int dev = 0;
    EVK_CUDA(cudaGetDevice(&dev));
    const auto& env = gpu_environment();
    const int cc = dev < static_cast<int>(env.devices.size()) ? env.devices[dev].cc() : 90;
    const NvrtcRequest req = expert_request(cfg, source, cc);
    if (const EmbeddedVariant* e = find_embedded_variant(req.source, req.options)) {  // a shipped expert genome
      k->lib_ = CudaLibrary(e->fatbin);
      k->origin_ = std::string("embedded fatbin (") + e->id + ", expert)";
      k->entry_ = k->lib_.kernel("reg_field_expert");
      cache[key] = k;
      return k;
    }
    NvrtcResult r = CompileCache().compile(req);
    if (!r.ok) {
      const std::string first = r.log.substr(0, r.log.find('\n'));
      throw InputError("reg_deform expert kernel (" + cfg.describe() + (source.empty() ? "" : ", evolved source") +
                       "): NVRTC failed: " + first);
    }
    k->lib_ = CudaLibrary(r.cubin.data());
    k->origin_ = "NVRTC sm_" + std::to_string(cc) + (r.log == "(cached)" ? " (cached)" : "") + " (expert)";
  }
  k->entry_ = k->lib_.kernel("reg_field_expert");
  cache[key] = k;
  return k;
}

ExpertTables::ExpertTables(const Geometry& ref, double sx, double sy, double sz, int gx, int gy, int gz) {
  if (!expert_supports(sx, sy, sz)) throw std::invalid_argument("expert field kernel: control-point spacing below 1 voxel");
  const int n[3] = {ref.nx, ref.ny, ref.nz}, g[3] = {gx, gy, gz};
  const double s[3] = {sx, sy, sz};
  for (int a = 0; a < 3; ++a) {
    const ExpertAxis t = expert_axis(n[a], s[a]);
    if (n[a] > 0 && t.first.back() + 3 >= g[a])
      throw std::invalid_argument("expert field kernel: the grid does not cover the reference");
    first_[a].upload(t.first.data(), t.first.size());
    weights_[a].upload(reinterpret_cast<const float4*>(t.weights.data()), t.first.size());
  }
  EVK_CUDA(cudaDeviceSynchronize());  // host tables go out of scope
}

void launch_expert(cudaKernel_t k, const ExpertLaunch& a, const ExpertConfig& cfg, cudaStream_t s) {
  if (a.nx <= 0 || a.ny <= 0 || a.nz <= 0) return;
  if (a.nz > 65535) throw std::invalid_argument("expert field kernel: more than 65535 slices");
  ExpertAffine m;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) m.m[i * 4 + j] = static_cast<float>(a.vox2world.m[i][j]);
  const float4* cp = a.control_points;
  int gx = a.gx, gy = a.gy, nx = a.nx, ny = a.ny, nz = a.nz, disp = a.displacement ? 1 : 0;
  const int* ix = a.tables->first(0);
  const int* iy = a.tables->first(1);
  const int* iz = a.tables->first(2);
  const float4* wx = a.tables->weights(0);
  const float4* wy = a.tables->weights(1);
  const float4* wz = a.tables->weights(2);
  const std::uint8_t* mask = a.mask;
  float* field = a.field;
  void* args[] = {&cp, &gx, &gy, &ix, &wx, &iy, &wy, &iz, &wz, &nx, &ny, &nz, &mask, &m, &disp, &field};
  const dim3 grid(static_cast<unsigned>((nx + kExpertTileX - 1) / kExpertTileX),
                  static_cast<unsigned>((ny + cfg.tile_y - 1) / cfg.tile_y), static_cast<unsigned>(nz));
  launch(k, grid, dim3(kExpertThreads), args, 0, s);
}

}  // namespace evk::reg_deform::gpu
#endif
