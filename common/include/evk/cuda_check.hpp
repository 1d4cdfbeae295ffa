// Checked CUDA runtime / driver / NVRTC calls. Every failing call throws evk::CudaError whose
// message holds file:line, the call's text and the CUDA error name and string.
#pragma once
#include <stdexcept>
#include <string>

namespace evk {
struct CudaError : std::runtime_error {
  int code;
  CudaError(const std::string& msg, int c) : std::runtime_error(msg), code(c) {}
};
namespace detail {
[[noreturn]] void throw_cuda_error(int code, const char* name, const char* text, const char* call,
                                   const char* file, int line);
}
}  // namespace evk

#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>
#include <nvrtc.h>

namespace evk::detail {
inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear a non-sticky error so it does not resurface at the next check
    throw_cuda_error(e, cudaGetErrorName(e), cudaGetErrorString(e), call, file, line);
  }
}
inline void check_nvrtc(nvrtcResult e, const char* call, const char* file, int line) {
  if (e != NVRTC_SUCCESS) throw_cuda_error(e, "NVRTC", nvrtcGetErrorString(e), call, file, line);
}
}  // namespace evk::detail

#define EVK_CUDA(call) ::evk::detail::check_cuda((call), #call, __FILE__, __LINE__)
#define EVK_NVRTC(call) ::evk::detail::check_nvrtc((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch errors now, execution errors at the next synchronisation.
#define EVK_CUDA_LAST() ::evk::detail::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
#endif
