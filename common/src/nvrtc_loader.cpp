// NVRTC loaded at run time (dlopen) instead of linked, so the tools start, and run the embedded
// fatbins and their CPU backends, on machines without the CUDA toolkit's NVRTC (an installed
// Debian package must not need it). The ten NVRTC entry points the suite calls are defined here
// with nvrtc.h's signatures and forward to the library, opened on first use from the loader's
// search path, $CUDA_HOME/lib64, /usr/local/cuda/lib64, and the build machine's CUDA directory.
// When it cannot be opened every call fails with NVRTC_ERROR_BUILTIN_OPERATION_FAILURE and
// nvrtcGetErrorString says why (which file, and how to get it).
#if defined(EVK_HAVE_CUDA)
#include <dlfcn.h>
#include <nvrtc.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#ifndef EVK_NVRTC_SONAME
#define EVK_NVRTC_SONAME "libnvrtc.so"
#endif
#ifndef EVK_NVRTC_BUILD_DIR
#define EVK_NVRTC_BUILD_DIR ""
#endif

namespace {

struct Nvrtc {
  void* handle = nullptr;
  std::string error;  // why it could not be loaded
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetErrorString) error_string = nullptr;
  decltype(&::nvrtcCreateProgram) create = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy = nullptr;
  decltype(&::nvrtcCompileProgram) compile = nullptr;
  decltype(&::nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) log = nullptr;
  decltype(&::nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) ptx = nullptr;
  decltype(&::nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) cubin = nullptr;
};

template <class F>
bool bind(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  return f != nullptr;
}

const Nvrtc& nvrtc() {
  static Nvrtc n;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string so = EVK_NVRTC_SONAME;
    std::vector<std::string> tries{so};
    if (const char* c = std::getenv("CUDA_HOME"); c && *c) tries.push_back(std::string(c) + "/lib64/" + so);
    tries.push_back("/usr/local/cuda/lib64/" + so);
    if (*EVK_NVRTC_BUILD_DIR) tries.push_back(std::string(EVK_NVRTC_BUILD_DIR) + "/" + so);
    std::string first_error;
    for (const auto& t : tries) {
      n.handle = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (n.handle) break;
      if (first_error.empty()) {
        const char* e = dlerror();
        first_error = e ? e : so + ": cannot be opened";
      }
    }
    if (!n.handle) {
      n.error = "NVRTC is not available (" + first_error +
                "); evolved kernel variants and `gi` need CUDA's NVRTC runtime library " + so +
                " (CUDA toolkit, or NVIDIA's cuda-nvrtc package) on the library path";
      return;
    }
    const bool ok = bind(n.handle, "nvrtcVersion", n.version) && bind(n.handle, "nvrtcGetErrorString", n.error_string) &&
                    bind(n.handle, "nvrtcCreateProgram", n.create) && bind(n.handle, "nvrtcDestroyProgram", n.destroy) &&
                    bind(n.handle, "nvrtcCompileProgram", n.compile) &&
                    bind(n.handle, "nvrtcGetProgramLogSize", n.log_size) &&
                    bind(n.handle, "nvrtcGetProgramLog", n.log) && bind(n.handle, "nvrtcGetPTXSize", n.ptx_size) &&
                    bind(n.handle, "nvrtcGetPTX", n.ptx) && bind(n.handle, "nvrtcGetCUBINSize", n.cubin_size) &&
                    bind(n.handle, "nvrtcGetCUBIN", n.cubin);
    if (!ok) {
      n.error = "NVRTC library " + so + " lacks an entry point this build needs (older than the CUDA it was built with?)";
      dlclose(n.handle);
      n.handle = nullptr;
    }
  });
  return n;
}

constexpr nvrtcResult kUnavailable = NVRTC_ERROR_BUILTIN_OPERATION_FAILURE;

}  // namespace

extern "C" {

nvrtcResult nvrtcVersion(int* major, int* minor) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.version(major, minor) : kUnavailable;
}
const char* nvrtcGetErrorString(nvrtcResult result) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.error_string(result) : n.error.c_str();
}
nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name, int numHeaders,
                               const char* const* headers, const char* const* includeNames) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.create(prog, src, name, numHeaders, headers, includeNames) : kUnavailable;
}
nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.destroy(prog) : kUnavailable;
}
nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char* const* options) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.compile(prog, numOptions, options) : kUnavailable;
}
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* size) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.log_size(prog, size) : kUnavailable;
}
nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char* log) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.log(prog, log) : kUnavailable;
}
nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t* size) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.ptx_size(prog, size) : kUnavailable;
}
nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char* ptx) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.ptx(prog, ptx) : kUnavailable;
}
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* size) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.cubin_size(prog, size) : kUnavailable;
}
nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* cubin) {
  const Nvrtc& n = nvrtc();
  return n.handle ? n.cubin(prog, cubin) : kUnavailable;
}

}  // extern "C"
#endif
