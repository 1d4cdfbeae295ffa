#if defined(EVK_HAVE_CUDA)
#include "core/gpu_frame.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "evk/gi/genome.hpp"
#include "evk/cuda_check.hpp"
#include "evk/device.hpp"
#include "evk/embedded.hpp"
#include "evk/error.hpp"
#include "evk_kernels/stereo_kernel_original.hpp"

namespace evk::stereo {

namespace {
// Poison byte 0xFE: as float -1.7e38, as int -16843010, as short -258, as uchar 254 (uchar output
// requires max disparity <= 253): never a value a correct kernel writes.
constexpr unsigned char kPoison = 0xFE;
}  // namespace

DeviceFrame::~DeviceFrame() { release(); }

void DeviceFrame::release() {
  for (auto& [k, t] : tex_) {
    cudaDestroyTextureObject(t.first);
    cudaDestroyTextureObject(t.second);
  }
  tex_.clear();
  for (int i = 0; i < 2; ++i) {
    if (arr_[i]) cudaFreeArray(arr_[i]);
    if (lin_[i]) cudaFree(lin_[i]);
    arr_[i] = nullptr;
    lin_[i] = nullptr;
  }
  if (out_) cudaFree(out_);
  if (minssd_) cudaFree(minssd_);
  out_ = nullptr;
  minssd_ = nullptr;
  w_ = h_ = 0;
}

void DeviceFrame::upload(const Image8& L, const Image8& R) {
  validate_pair(L, R);
  if (L.width != w_ || L.height != h_) {
    release();
    const std::size_t n = static_cast<std::size_t>(L.width) * L.height;
    cudaChannelFormatDesc fmt = cudaCreateChannelDesc<unsigned char>();
    for (int i = 0; i < 2; ++i) {
      EVK_CUDA(cudaMallocArray(&arr_[i], &fmt, L.width, L.height));
      EVK_CUDA(cudaMalloc(&lin_[i], n));
    }
    EVK_CUDA(cudaMalloc(&out_, n * 4));
    EVK_CUDA(cudaMalloc(&minssd_, n * 4));
    w_ = L.width;
    h_ = L.height;
  }
  const Image8* im[2] = {&L, &R};
  for (int i = 0; i < 2; ++i) {
    EVK_CUDA(cudaMemcpy2DToArray(arr_[i], 0, 0, im[i]->pixels.data(), w_, w_, h_, cudaMemcpyHostToDevice));
    EVK_CUDA(cudaMemcpy(lin_[i], im[i]->pixels.data(), im[i]->pixels.size(), cudaMemcpyHostToDevice));
  }
}

std::pair<cudaTextureObject_t, cudaTextureObject_t> DeviceFrame::textures(const KernelSettings& ks) {
  if (ks.read_mode == "NoTextures") return {0, 0};
  const std::string filter = ks.effective_filter(), address = ks.effective_address();
  const std::string key = ks.read_mode + "/" + filter + "/" + address + "/" + (ks.normalized ? "n" : "u");
  if (auto it = tex_.find(key); it != tex_.end()) return it->second;
  cudaTextureDesc td;
  std::memset(&td, 0, sizeof td);
  const cudaTextureAddressMode am = address == "Mirror" ? cudaAddressModeMirror
                                    : address == "Wrap" ? cudaAddressModeWrap
                                                        : cudaAddressModeClamp;
  td.addressMode[0] = td.addressMode[1] = am;
  td.filterMode = filter == "Linear" ? cudaFilterModeLinear : cudaFilterModePoint;
  td.readMode = ks.read_mode == "ElementType" ? cudaReadModeElementType : cudaReadModeNormalizedFloat;
  td.normalizedCoords = ks.normalized ? 1 : 0;
  cudaTextureObject_t t[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    cudaResourceDesc rd;
    std::memset(&rd, 0, sizeof rd);
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = arr_[i];
    EVK_CUDA(cudaCreateTextureObject(&t[i], &rd, &td, nullptr));
  }
  return tex_[key] = {t[0], t[1]};
}

void DeviceFrame::poison(cudaStream_t s) {
  EVK_CUDA(cudaMemsetAsync(out_, kPoison, static_cast<std::size_t>(w_) * h_ * 4, s));
}

void DeviceFrame::launch(cudaKernel_t k, const KernelSettings& ks, const Params& p, cudaStream_t s) {
  validate(p);
  if (p.radius() != ks.radius)
    throw std::logic_error("stereo: kernel compiled for radius " + std::to_string(ks.radius) + ", params want " +
                           std::to_string(p.radius()));
  if (ks.out_type == "uchar" && p.max_disparity > 253)
    input_error("kernel config OUT_TYPE", "uchar output needs --max-disparity <= 253");
  if (ks.out_type == "short" && p.max_disparity > 32000)
    input_error("kernel config OUT_TYPE", "short output needs --max-disparity <= 32000");
  int dev = 0;
  EVK_CUDA(cudaGetDevice(&dev));
  int smem_optin = 0;
  EVK_CUDA(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  const std::size_t smem = ks.smem_bytes();
  if (smem > static_cast<std::size_t>(smem_optin))
    input_error("kernel config", std::to_string(smem) + " bytes of shared memory per block; this GPU allows " +
                                     std::to_string(smem_optin));
  const void* f = reinterpret_cast<const void*>(k);
  EVK_CUDA(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  const cudaFuncCache pref = ks.cache == "shared" ? cudaFuncCachePreferShared
                             : ks.cache == "L1"   ? cudaFuncCachePreferL1
                             : ks.cache == "equal" ? cudaFuncCachePreferEqual
                                                   : cudaFuncCachePreferNone;
  EVK_CUDA(cudaFuncSetCacheConfig(f, pref));
  auto [tl, tr] = textures(ks);
  dim3 grid((w_ + ks.out_w() - 1) / ks.out_w(), (h_ + ks.rows - 1) / ks.rows);
  dim3 block(ks.threads());
  int pitch = w_, width = w_, height = h_, mind = p.min_disparity, maxd = p.max_disparity, minssd = p.min_ssd;
  void* args[] = {&out_, &pitch, &minssd_, &tl, &tr, &lin_[0], &lin_[1], &width, &height, &mind, &maxd, &minssd};
  evk::launch(k, grid, block, args, smem, s);
}

RawOutput DeviceFrame::download(const KernelSettings& ks, cudaStream_t s) {
  const std::size_t n = static_cast<std::size_t>(w_) * h_;
  std::vector<unsigned char> bytes(n * ks.out_bytes());
  EVK_CUDA(cudaMemcpyAsync(bytes.data(), out_, bytes.size(), cudaMemcpyDeviceToHost, s));
  EVK_CUDA(cudaStreamSynchronize(s));
  RawOutput r{w_, h_, std::vector<float>(n), std::vector<unsigned char>(n, 0)};
  const unsigned char pb = kPoison;
  const int eb = ks.out_bytes();
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char* e = &bytes[i * eb];
    bool poisoned = true;
    for (int b = 0; b < eb; ++b) poisoned = poisoned && e[b] == pb;
    r.unset[i] = poisoned;
    if (ks.out_type == "float") {
      std::memcpy(&r.value[i], e, 4);
    } else if (ks.out_type == "int") {
      int v;
      std::memcpy(&v, e, 4);
      r.value[i] = static_cast<float>(v);
    } else if (ks.out_type == "short") {
      short v;
      std::memcpy(&v, e, 2);
      r.value[i] = v;
    } else {
      r.value[i] = e[0] == 255 ? -1.0f : e[0];
    }
  }
  return r;
}

DisparityMap to_disparity(const RawOutput& raw, const Params& p) {
  DisparityMap m{raw.width, raw.height, std::vector<int>(raw.value.size())};
  for (std::size_t i = 0; i < raw.value.size(); ++i) {
    const float v = raw.value[i];
    if (raw.unset[i]) throw std::runtime_error("stereo kernel left pixel " + std::to_string(i) + " unset");
    if (!std::isfinite(v) || v != std::floor(v) || (v != -1.0f && (v < p.min_disparity || v > p.max_disparity)))
      throw std::runtime_error("stereo kernel wrote an impossible disparity " + std::to_string(v) + " at pixel " +
                               std::to_string(i));
    m.d[i] = static_cast<int>(v);
  }
  return m;
}

NvrtcRequest kernel_request(const KernelSettings& ks, int cc, const std::string& source) {
  NvrtcRequest req;
  req.source = source.empty() ? std::string(stereo_kernel_original().text()) : source;
  req.name = "stereo.cu";
  req.options = ks.compile_options();
  for (auto& o : gi::source_nvrtc_options(req.source)) req.options.push_back(o);  // a genome's option genes
  req.cc = cc;
  return req;
}

LoadedKernel load_kernel(const KernelSettings& ks, int cc, const std::string& source) {
  LoadedKernel lk;
  const KernelImage& img = stereo_kernel_original();
  if (source.empty() && ks.is_builtin() && img.fatbin_size > 0) {
    lk.lib = CudaLibrary(img.fatbin);
    lk.origin = "embedded fatbin";
  } else {
    const NvrtcRequest req = kernel_request(ks, cc, source);
    if (const EmbeddedVariant* e = find_embedded_variant(req.source, req.options)) {
      lk.lib = CudaLibrary(e->fatbin);
      lk.origin = std::string("embedded fatbin (") + e->id + ")";
    } else {
      NvrtcResult r = CompileCache().compile(req);
      if (!r.ok) throw std::runtime_error("NVRTC failed to compile stereoKernel: " + r.log);
      lk.lib = CudaLibrary(r.cubin.data());
      lk.origin = "NVRTC sm_" + std::to_string(cc) + (r.log == "(cached)" ? " (cached)" : "");
    }
  }
  lk.kernel = lk.lib.kernel("stereoKernel");
  return lk;
}

}  // namespace evk::stereo
#endif
