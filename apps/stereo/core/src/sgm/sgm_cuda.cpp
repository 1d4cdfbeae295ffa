// A GPU as an SgmDevice: a non-blocking stream and the embedded SGM kernels (census, cost,
// aggregate, wta, median, lr_check fatbins), every call checked.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/sgm_gpu.hpp"
#include "evk/error.hpp"

#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/device.hpp"
#include "evk_kernels/sgm_aggregate_fast_kernels.hpp"
#include "evk_kernels/sgm_aggregate_vec_kernels.hpp"
#include "evk_kernels/sgm_aggregate_variants.hpp"
#include "evk_kernels/sgm_census_kernels.hpp"
#include "evk_kernels/sgm_cost_kernels.hpp"
#include "evk_kernels/sgm_lr_check_kernels.hpp"
#include "evk_kernels/sgm_median_kernels.hpp"
#include "evk_kernels/sgm_rectify_kernels.hpp"
#include "evk_kernels/sgm_wta_kernels.hpp"
#include "evk_kernels/ssd_expert_original.hpp"
#endif

namespace evk::stereo {

#if defined(EVK_HAVE_CUDA)
namespace {
class CudaSgmDevice final : public SgmDevice {
 public:
  explicit CudaSgmDevice(int device) : device_(device) {
    const GpuEnvironment& env = gpu_environment();
    if (!env.usable()) input_error("--backend gpu", env.status);
    if (device < 0 || device >= static_cast<int>(env.devices.size()))
      input_error("--device", "no CUDA device " + std::to_string(device));
    EVK_CUDA(cudaSetDevice(device));
    EVK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    cur_ = stream_;
  }
  ~CudaSgmDevice() override {
    for (cudaStream_t s : {stream_, side_})
      if (s) {
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
      }
    for (cudaEvent_t e : ev_)
      if (e) cudaEventDestroy(e);
    for (cudaEvent_t e : sync_)
      if (e) cudaEventDestroy(e);
  }
  void select(int q) override {
    if (q != 0 && !side_) EVK_CUDA(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    cur_ = q == 0 ? stream_ : side_;
  }
  void record(int e) override { EVK_CUDA(cudaEventRecord(event(e), cur_)); }
  void wait(int e) override { EVK_CUDA(cudaStreamWaitEvent(cur_, event(e), 0)); }
  void host_wait(int e) override { EVK_CUDA(cudaEventSynchronize(event(e))); }
  bool pinned(const void* p) const override {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return a.type == cudaMemoryTypeHost;
  }
  int resident_blocks(const std::string& name, Dim3 block, std::size_t smem) override {
    int per_sm = 0, sms = 0;
    EVK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(kernel(name)),
                                                           static_cast<int>(block.x * block.y * block.z), smem));
    EVK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_));
    return per_sm * sms;
  }
  void* alloc_host(std::size_t n) override {
    void* p = nullptr;
    if (cudaMallocHost(&p, n) != cudaSuccess) {  // pinning refused: pageable memory still works
      cudaGetLastError();
      return SgmDevice::alloc_host(n);
    }
    pinned_.push_back(p);
    return p;
  }
  void release_host(void* p) override {
    auto it = std::find(pinned_.begin(), pinned_.end(), p);
    if (it == pinned_.end()) return SgmDevice::release_host(p);
    pinned_.erase(it);
    cudaFreeHost(p);
  }
  void mark(int i) override {
    if (!ev_[i]) EVK_CUDA(cudaEventCreate(&ev_[i]));
    EVK_CUDA(cudaEventRecord(ev_[i], stream_));
  }
  double elapsed_ms(int a, int b) override {
    float ms = 0;
    if (ev_[a] && ev_[b]) EVK_CUDA(cudaEventElapsedTime(&ms, ev_[a], ev_[b]));
    return ms;
  }
  void* alloc(std::size_t n) override {
    EVK_CUDA(cudaSetDevice(device_));
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, n);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      input_error("--backend gpu", "out of GPU memory (" + std::to_string(n >> 20) +
                                       " MiB more requested; fewer disparities or paths, or a smaller image)");
    }
    EVK_CUDA(e);
    return p;
  }
  void release(void* p) override {
    cudaStreamSynchronize(stream_);  // work issued earlier may still use it
    if (side_) cudaStreamSynchronize(side_);
    cudaFree(p);
  }
  void to_device(void* dst, const void* src, std::size_t n) override {
    EVK_CUDA(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, cur_));
  }
  void to_host(void* dst, const void* src, std::size_t n) override {
    EVK_CUDA(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, cur_));
  }
  void fill(void* dst, int byte, std::size_t n) override { EVK_CUDA(cudaMemsetAsync(dst, byte, n, cur_)); }
  void launch(const std::string& name, Dim3 grid, Dim3 block, std::size_t smem, void** args) override {
    cudaKernel_t k = kernel(name);
    if (smem > 48 * 1024)
      EVK_CUDA(cudaFuncSetAttribute(reinterpret_cast<const void*>(k), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)));
    evk::launch(k, dim3(grid.x, grid.y, grid.z), dim3(block.x, block.y, block.z), args, smem, cur_);
    EVK_CUDA_LAST();
  }
  void synchronize() override {
    EVK_CUDA(cudaStreamSynchronize(stream_));
    if (side_) EVK_CUDA(cudaStreamSynchronize(side_));
  }
  cudaStream_t stream() const { return stream_; }

 private:
  cudaKernel_t kernel(const std::string& name) {
    if (auto it = kernels_.find(name); it != kernels_.end()) return it->second;
    const KernelImage* img = name.rfind("sgm_aggregate2_", 0) == 0   ? &sgm_aggregate_fast_kernels()
                             : name.rfind("sgm_aggregate3", 0) == 0  ? &sgm_aggregate_vec_kernels()  // 3_ and 3s_
                             : name.rfind("sgm_aggregate", 0) == 0  ? &sgm_aggregate_variants()
                             : name.rfind("sgm_census", 0) == 0   ? &sgm_census_kernels()
                             : name.rfind("sgm_cost", 0) == 0     ? &sgm_cost_kernels()
                             : name.rfind("sgm_wta", 0) == 0      ? &sgm_wta_kernels()
                             : name.rfind("sgm_median", 0) == 0   ? &sgm_median_kernels()
                             : name.rfind("sgm_lr_check", 0) == 0 ? &sgm_lr_check_kernels()
                             : name.rfind("sgm_rectify", 0) == 0  ? &sgm_rectify_kernels()
                             : name.rfind("ssd_expert", 0) == 0   ? &ssd_expert_original()
                                                                  : nullptr;
    if (!img) throw std::logic_error("no SGM kernel " + name);
    auto lit = libs_.find(img->symbol);
    if (lit == libs_.end()) lit = libs_.emplace(img->symbol, CudaLibrary(img->fatbin)).first;
    return kernels_[name] = lit->second.kernel(name.c_str());
  }
  cudaEvent_t event(int e) {
    if (e < 0 || e >= kEvents) throw std::logic_error("CudaSgmDevice: no event " + std::to_string(e));
    if (!sync_[e]) EVK_CUDA(cudaEventCreateWithFlags(&sync_[e], cudaEventDisableTiming));
    return sync_[e];
  }
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaStream_t side_ = nullptr;  // made on the first select(1)
  cudaStream_t cur_ = nullptr;   // where copies, fills and launches go
  cudaEvent_t sync_[kEvents] = {};
  cudaEvent_t ev_[4] = {nullptr, nullptr, nullptr, nullptr};
  std::vector<void*> pinned_;
  std::map<std::string, CudaLibrary> libs_;
  std::map<std::string, cudaKernel_t> kernels_;
};
}  // namespace

std::unique_ptr<SgmDevice> cuda_sgm_device(int device) { return std::make_unique<CudaSgmDevice>(device); }
void* cuda_sgm_stream(SgmDevice& dev) {
  auto* c = dynamic_cast<CudaSgmDevice*>(&dev);
  if (!c) throw std::logic_error("cuda_sgm_stream: not a CUDA device");
  return c->stream();
}
#else
std::unique_ptr<SgmDevice> cuda_sgm_device(int) { input_error("--backend gpu", "this build has no CUDA support"); }
#endif

}  // namespace evk::stereo
