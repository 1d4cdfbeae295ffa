// Device side of one stereo pair: images (CUDA arrays for textures + linear copies for plain loads),
// output and scratch buffers, texture objects per texture setting, and the one launch function
// every caller uses (GPU backend, gi problem, tests, benchmarks). CUDA builds only.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/kernel_config.hpp"
#include "core/types.hpp"
#include "evk/cuda_library.hpp"

namespace evk::stereo {

// Kernel output as floats, whatever OUT_TYPE was (uchar 255 -> -1); unset[i] = 1 where the
// element still holds the poison written by DeviceFrame::poison.
struct RawOutput {
  int width = 0, height = 0;
  std::vector<float> value;
  std::vector<unsigned char> unset;
};

class DeviceFrame {
 public:
  DeviceFrame() = default;
  ~DeviceFrame();
  DeviceFrame(const DeviceFrame&) = delete;
  DeviceFrame& operator=(const DeviceFrame&) = delete;

  // Copies the pair to the current device (synchronously); buffers are reused for equal sizes.
  void upload(const Image8& left, const Image8& right);
  int width() const { return w_; }
  int height() const { return h_; }

  // Fills every output element with a value no correct kernel writes.
  void poison(cudaStream_t s);
  // Enqueues stereoKernel k compiled for ks: geometry, shared memory, cache preference, textures.
  // Throws InputError when the configuration cannot run with these parameters on this device.
  void launch(cudaKernel_t k, const KernelSettings& ks, const Params& p, cudaStream_t s);
  // Synchronises s and copies the output back.
  RawOutput download(const KernelSettings& ks, cudaStream_t s);

 private:
  std::pair<cudaTextureObject_t, cudaTextureObject_t> textures(const KernelSettings& ks);
  void release();
  int w_ = 0, h_ = 0;
  cudaArray_t arr_[2] = {nullptr, nullptr};
  unsigned char* lin_[2] = {nullptr, nullptr};
  void* out_ = nullptr;   // w*h elements of up to 4 bytes
  int* minssd_ = nullptr; // w*h ints (STORE_disparityMinSSD=GLOBAL)
  std::map<std::string, std::pair<cudaTextureObject_t, cudaTextureObject_t>> tex_;
};

// A loaded kernel for one configuration: the embedded fatbin for the built-in configuration of the
// original source, else an NVRTC compile (disk-cached) for the device's architecture. source: the
// kernel text (empty: the original; an evolved variant's patched text otherwise). Throws
// std::runtime_error with the compiler log when compilation fails.
struct LoadedKernel {
  CudaLibrary lib;
  cudaKernel_t kernel = nullptr;
  std::string origin;  // "embedded fatbin" or "NVRTC sm_90 (cached)" ...
};
LoadedKernel load_kernel(const KernelSettings& ks, int cc, const std::string& source = {});
// The NVRTC request load_kernel compiles for a configuration and source (also what the build
// compiles shipped evolved variants from: an identical request loads their embedded fatbin).
NvrtcRequest kernel_request(const KernelSettings& ks, int cc, const std::string& source = {});

// Converts raw output to a DisparityMap; throws std::runtime_error on unset or out-of-range values.
DisparityMap to_disparity(const RawOutput& raw, const Params& p);

}  // namespace evk::stereo
#endif
