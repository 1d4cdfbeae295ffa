#include "evk/cuda_check.hpp"

namespace evk::detail {
void throw_cuda_error(int code, const char* name, const char* text, const char* call, const char* file,
                      int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + name + " (" +
                      text + ")",
                  code);
}
}  // namespace evk::detail
