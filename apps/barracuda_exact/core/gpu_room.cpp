#include "core/gpu_room.hpp"

#include <algorithm>
#include <cstdio>

#include "evk/device.hpp"
#ifdef EVK_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace evk::barracuda_exact {
namespace {
std::string gib(std::uint64_t b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f GiB", static_cast<double>(b) / (1ull << 30));
  return s;
}
}  // namespace

std::uint64_t index_device_bytes(const BwtIndex& idx) {
  return static_cast<std::uint64_t>(idx.occ.size()) * sizeof(idx.occ[0]) + static_cast<std::uint64_t>(idx.sa.size()) * sizeof(idx.sa[0]);
}

std::string gpu_index_room(const BwtIndex& idx, const std::vector<int>& devices, std::uint64_t cap) {
  const std::uint64_t need = index_device_bytes(idx);
  for (const int d : devices) {
    std::uint64_t avail = cap ? cap : ~0ull;
    std::string name = "GPU " + std::to_string(d);
#ifdef EVK_HAVE_CUDA
    std::size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(d) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) avail = std::min<std::uint64_t>(avail, free_b);
    cudaGetLastError();  // a failed query is the mapper's to report
    for (const auto& dev : gpu_environment().devices)
      if (dev.index == d) name += " (" + dev.name + ")";
#endif
    if (need > avail)
      return name + ": the index needs " + gib(need) + ", " + gib(avail) + " available" + (cap ? " (--gpu-memory)" : "");
  }
  return "";
}

std::future<void> gpu_start(std::vector<int> devices) {
  return std::async(std::launch::async, [devices = std::move(devices)] {
#ifdef EVK_HAVE_CUDA
    for (const int d : devices)
      if (cudaSetDevice(d) == cudaSuccess) cudaFree(nullptr);
    cudaGetLastError();
#else
    (void)devices;
#endif
  });
}

}  // namespace evk::barracuda_exact
