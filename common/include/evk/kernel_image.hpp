// A kernel embedded into a binary by cmake/EvkKernel.cmake: its source text (what NVRTC and the GI
// engine work on) and, when built with CUDA, an nvcc fatbin for the configured architectures.
#pragma once
#include <cstddef>
#include <string_view>

namespace evk {
struct KernelImage {
  const char* symbol;
  const unsigned char* fatbin;  // nullptr-free; fatbin_size == 0 when built without CUDA
  std::size_t fatbin_size;
  const char* source;           // NUL-terminated
  std::size_t source_size;
  const char* source_path;      // relative to the project root, e.g. kernels/original/stereo/stereo.cu
  std::string_view text() const { return {source, source_size}; }
};
}  // namespace evk
