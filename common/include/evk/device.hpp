// What GPUs this process can use. Works on machines without a GPU or without CUDA at all: then
// `devices` is empty and `status` says why.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace evk {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t total_mem = 0;
  std::size_t l2_bytes = 0;
  std::size_t smem_per_block_optin = 0;
  int max_threads_per_block = 0;
  int clock_khz = 0;
  int cc() const { return cc_major * 10 + cc_minor; }  // 90 for 9.0
};

struct GpuEnvironment {
  bool built_with_cuda = false;
  int driver_version = 0;   // e.g. 13000; 0 when no driver
  int runtime_version = 0;  // e.g. 13000
  std::string status;       // "ok", or why no GPU can be used
  std::vector<DeviceInfo> devices;
  bool usable() const { return !devices.empty(); }
};

// Queries the CUDA runtime once (cached). Never throws.
const GpuEnvironment& gpu_environment();

std::string format_cuda_version(int v);  // 13000 -> "13.0"

// Why no GPU can be used, from what the CUDA runtime reported: its version and the driver's (0: no
// driver), the error of the device count (empty: none) and the devices counted. "no NVIDIA driver
// found" without a driver; the two versions when the driver is too old for this build.
std::string gpu_status(int driver_version, int runtime_version, const std::string& count_error, int devices);

}  // namespace evk
