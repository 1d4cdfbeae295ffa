#include "evk/device.hpp"

#include <mutex>

#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

namespace evk {

std::string format_cuda_version(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string gpu_status(int driver_version, int runtime_version, const std::string& count_error, int devices) {
  if (driver_version <= 0) return "no NVIDIA driver found";
  if (runtime_version > 0 && driver_version < runtime_version)
    return "the NVIDIA driver supports CUDA up to " + format_cuda_version(driver_version) + ", this build needs CUDA " +
           format_cuda_version(runtime_version) + " or newer (update the driver)";
  if (!count_error.empty()) return "no CUDA device (" + count_error + ")";
  if (devices == 0) return "no CUDA device found";
  return "ok";
}

static GpuEnvironment query() {
  GpuEnvironment env;
#if defined(EVK_HAVE_CUDA)
  env.built_with_cuda = true;
  cudaRuntimeGetVersion(&env.runtime_version);
  if (cudaDriverGetVersion(&env.driver_version) != cudaSuccess) env.driver_version = 0;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    env.status = gpu_status(env.driver_version, env.runtime_version, e != cudaSuccess ? cudaGetErrorString(e) : "", 0);
    cudaGetLastError();
    return env;
  }
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.sm_count = p.multiProcessorCount;
    d.total_mem = p.totalGlobalMem;
    d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
    d.smem_per_block_optin = p.sharedMemPerBlockOptin;
    d.max_threads_per_block = p.maxThreadsPerBlock;
    int clk = 0;
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, i);
    d.clock_khz = clk;
    env.devices.push_back(d);
  }
  env.status = env.devices.empty() ? "device properties unavailable" : "ok";
#else
  env.status = "built without CUDA (CPU-only build)";
#endif
  return env;
}

const GpuEnvironment& gpu_environment() {
  static std::once_flag once;
  static GpuEnvironment env;
  std::call_once(once, [] { env = query(); });
  return env;
}

}  // namespace evk
