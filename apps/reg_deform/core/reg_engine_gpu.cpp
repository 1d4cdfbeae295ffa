#include "reg_engine_gpu.hpp"
#if defined(EVK_HAVE_CUDA)
#include <stdexcept>
namespace evk::reg_deform {
std::unique_ptr<LevelEngine> make_gpu_engine(const LevelInput&, const GpuEngineOptions&) {
  throw std::runtime_error("register: GPU backend under construction");  // TEMPORARY (replaced below)
}
}  // namespace evk::reg_deform
#endif
