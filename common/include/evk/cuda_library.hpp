// Loading and launching kernels from images (an embedded fatbin, or a cubin from NVRTC) through the
// runtime's library API, so built-in, evolved and GI-candidate kernels share one launch path.
// And NVRTC compilation, which needs no GPU.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace evk {

struct NvrtcResult {
  bool ok = false;
  std::string log;             // compiler log (errors, warnings)
  std::vector<char> cubin;     // SASS for the requested architecture (when ok and want_cubin)
  std::vector<char> ptx;       // when want_ptx
  double seconds = 0;
};

struct NvrtcRequest {
  std::string source;
  std::string name = "kernel.cu";     // for the log
  std::vector<std::string> options;   // e.g. "-DBLOCK_W=64", "-Xptxas=-dlcm=cg"
  int cc = 90;                        // target architecture (sm_XY)
  bool want_cubin = true;             // false: stop after PTX (syntax/type check only)
  bool want_ptx = false;
};

// Thread-safe; never throws for compile errors (those are in log), only for NVRTC misuse.
NvrtcResult nvrtc_compile(const NvrtcRequest& req);
std::string nvrtc_version();  // "13.0"; "" when built without CUDA

// A small content-addressed disk cache for compiled cubins: key = hash of (source, options, arch,
// NVRTC version). Default dir: $EVK_CACHE_DIR, else $XDG_CACHE_HOME/evokernels, else ~/.cache/evokernels.
class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path dir = default_dir());
  static std::filesystem::path default_dir();
  static std::string key(const NvrtcRequest& req);
  bool get(const std::string& key, std::vector<char>& cubin) const;
  void put(const std::string& key, const std::vector<char>& cubin) const;  // best effort
  // Compiles through the cache.
  NvrtcResult compile(const NvrtcRequest& req) const;

 private:
  std::filesystem::path dir_;
};

std::uint64_t fnv1a64(const void* data, std::size_t n, std::uint64_t seed = 1469598103934665603ull);
std::string hex64(std::uint64_t v);

}  // namespace evk

#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>
namespace evk {
class CudaLibrary {
 public:
  CudaLibrary() = default;
  explicit CudaLibrary(const void* image);  // fatbin, cubin or PTX, loaded into the current device
  ~CudaLibrary();
  CudaLibrary(CudaLibrary&& o) noexcept;
  CudaLibrary& operator=(CudaLibrary&& o) noexcept;
  CudaLibrary(const CudaLibrary&) = delete;
  CudaLibrary& operator=(const CudaLibrary&) = delete;

  cudaKernel_t kernel(const char* name) const;  // throws CudaError if absent
  bool loaded() const { return lib_ != nullptr; }

 private:
  cudaLibrary_t lib_ = nullptr;
};

// Launches with an argument array (pointers to each argument), as cudaLaunchKernel takes them.
void launch(cudaKernel_t k, dim3 grid, dim3 block, void** args, size_t smem = 0, cudaStream_t stream = nullptr);
}  // namespace evk
#endif
