// The GPU backend of `register`: every stage of an iteration on the device (the field through the
// dispatched field kernel, warp + spatial gradient, joint histogram + NMI or SSD, voxel-wise
// gradient, B-spline adjoint onto the control points, penalties, the optimiser's vector work);
// only scalars (objective values, reductions) come back to the host.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <memory>

#include "core/field/gpu_field.hpp"
#include "core/register/reg_engine.hpp"

namespace evk::reg_deform {

struct GpuEngineOptions {
  gpu::FieldOptions field;  // kernel variant (config, evolved source) for stage 1
};

std::unique_ptr<LevelEngine> make_gpu_engine(const LevelInput& in, const GpuEngineOptions& opt = {});

}  // namespace evk::reg_deform
#endif
