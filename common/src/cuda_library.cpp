#include "evk/cuda_library.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "evk/cuda_check.hpp"

namespace fs = std::filesystem;

namespace evk {

std::uint64_t fnv1a64(const void* data, std::size_t n, std::uint64_t h) {
  auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

#if defined(EVK_HAVE_CUDA)
namespace {
// NVRTC's (EDG's) diagnostic #549, "variable \"x\" is used before its value is set"
constexpr const char* kUsedBeforeSet = "is used before its value is set";
}  // namespace

std::string nvrtc_version() {
  int ma = 0, mi = 0;
  if (nvrtcVersion(&ma, &mi) != NVRTC_SUCCESS) return "";
  return std::to_string(ma) + "." + std::to_string(mi);
}

NvrtcResult nvrtc_compile(const NvrtcRequest& req) {
  NvrtcResult r;
  auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram prog;
  EVK_NVRTC(nvrtcCreateProgram(&prog, req.source.c_str(), req.name.c_str(), 0, nullptr, nullptr));
  std::vector<std::string> opts = req.options;
  opts.push_back("--gpu-architecture=" + std::string(req.want_cubin ? "sm_" : "compute_") + std::to_string(req.cc));
  opts.push_back("-std=c++17");
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  nvrtcResult res = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t logsz = 0;
  nvrtcGetProgramLogSize(prog, &logsz);
  r.log.resize(logsz);
  if (logsz) nvrtcGetProgramLog(prog, r.log.data());
  while (!r.log.empty() && (r.log.back() == '\0' || r.log.back() == '\n')) r.log.pop_back();
  r.ok = res == NVRTC_SUCCESS;
  // A program that reads a variable before it is set has undefined behaviour: NVRTC compiles it and
  // what runs is whatever the optimiser chose. A GI edit that swapped a loop's initialisation for
  // another loop's (`<for1_K_174><for1_K_240>` in stereo.cu: d0 never set) passed the GPU check
  // with penalty 0 (why it also timed 169x faster is not established). Such programs are refused for
  // every caller (GI candidates, genome files, overlays), and so never enter the compile cache.
  if (r.ok && r.log.find(kUsedBeforeSet) != std::string::npos) {
    r.ok = false;
    r.log = "refused: undefined behaviour (a variable is read before it is set)\n" + r.log;
  }
  if (r.ok && req.want_cubin) {
    size_t n = 0;
    EVK_NVRTC(nvrtcGetCUBINSize(prog, &n));
    r.cubin.resize(n);
    EVK_NVRTC(nvrtcGetCUBIN(prog, r.cubin.data()));
  }
  if (r.ok && req.want_ptx) {
    size_t n = 0;
    EVK_NVRTC(nvrtcGetPTXSize(prog, &n));
    r.ptx.resize(n);
    EVK_NVRTC(nvrtcGetPTX(prog, r.ptx.data()));
  }
  nvrtcDestroyProgram(&prog);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

CudaLibrary::CudaLibrary(const void* image) {
  EVK_CUDA(cudaLibraryLoadData(&lib_, image, nullptr, nullptr, 0, nullptr, nullptr, 0));
}
CudaLibrary::~CudaLibrary() {
  if (lib_) cudaLibraryUnload(lib_);
}
CudaLibrary::CudaLibrary(CudaLibrary&& o) noexcept : lib_(o.lib_) { o.lib_ = nullptr; }
CudaLibrary& CudaLibrary::operator=(CudaLibrary&& o) noexcept {
  if (this != &o) {
    if (lib_) cudaLibraryUnload(lib_);
    lib_ = o.lib_;
    o.lib_ = nullptr;
  }
  return *this;
}
cudaKernel_t CudaLibrary::kernel(const char* name) const {
  cudaKernel_t k = nullptr;
  EVK_CUDA(cudaLibraryGetKernel(&k, lib_, name));
  return k;
}

void launch(cudaKernel_t k, dim3 grid, dim3 block, void** args, size_t smem, cudaStream_t stream) {
  EVK_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k), grid, block, args, smem, stream));
}
#else
std::string nvrtc_version() { return ""; }
NvrtcResult nvrtc_compile(const NvrtcRequest&) {
  NvrtcResult r;
  r.log = "built without CUDA: NVRTC unavailable";
  return r;
}
#endif

CompileCache::CompileCache(fs::path dir) : dir_(std::move(dir)) {}

fs::path CompileCache::default_dir() {
  if (const char* d = std::getenv("EVK_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "evokernels";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "evokernels";
  return fs::temp_directory_path() / "evokernels-cache";
}

std::string CompileCache::key(const NvrtcRequest& req) {
  std::uint64_t h = fnv1a64(req.source.data(), req.source.size());
  for (const auto& o : req.options) {
    h = fnv1a64("\x1f", 1, h);
    h = fnv1a64(o.data(), o.size(), h);
  }
  // "|ub1": cubins cached before use-before-set programs were refused are not reused
  std::string tail = "|sm_" + std::to_string(req.cc) + "|nvrtc " + nvrtc_version() + (req.want_cubin ? "|cubin" : "|ptx") +
                     "|ub1";
  h = fnv1a64(tail.data(), tail.size(), h);
  return hex64(h);
}

bool CompileCache::get(const std::string& key, std::vector<char>& cubin) const {
  std::ifstream in(dir_ / (key + ".cubin"), std::ios::binary);
  if (!in) return false;
  cubin.assign(std::istreambuf_iterator<char>(in), {});
  return !cubin.empty();
}

void CompileCache::put(const std::string& key, const std::vector<char>& cubin) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return;
  static std::atomic<int> counter{0};
  fs::path tmp = dir_ / (key + ".cubin.tmp" + std::to_string(::getpid()) + "." + std::to_string(counter++));
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return;
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    if (!out) return;
  }
  fs::rename(tmp, dir_ / (key + ".cubin"), ec);
  if (ec) fs::remove(tmp, ec);
}

NvrtcResult CompileCache::compile(const NvrtcRequest& req) const {
  std::string k = key(req);
  NvrtcResult r;
  if (req.want_cubin && !req.want_ptx && get(k, r.cubin)) {
    r.ok = true;
    r.log = "(cached)";
    return r;
  }
  r = nvrtc_compile(req);
  if (r.ok && req.want_cubin) put(k, r.cubin);
  return r;
}

}  // namespace evk
