// The helper kernels (helpers.cu): the identity fill and scatters of the field assembly,
// resampling on the GPU, and the GI check's field difference on the device.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>

#include "core/field/field_diff.hpp"
#include "core/field/resample_cpu.hpp"
#include "core/gpu_buffer.hpp"
#include "core/types.hpp"
#include "evk/cuda_library.hpp"

namespace evk::reg_deform::gpu {

// A 3x4 affine as the kernels take it (row major, float).
struct Affine34 {
  float m[12];
};
inline Affine34 affine34f(const Mat44& a) {
  Affine34 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) r.m[i * 4 + j] = static_cast<float>(a.m[i][j]);
  return r;
}

// helpers.cu's entries, loaded once from the embedded fatbin.
struct Helpers {
  CudaLibrary lib;
  cudaKernel_t fill, scatter_voxels, scatter_tiles, scatter_tiles_naive, resample, field_diff;
  Helpers();
};
const Helpers& helpers();

// field_diff_cpu's figures for device arrays (reg_field_diff in helpers.cu), without downloading the
// field: a few hundred microseconds where the host loop over a 1 mm head takes a quarter of a second.
// scratch: 4 doubles of device memory (resized here). Waits for the stream.
FieldDiff field_diff_gpu(const float* got, DiffLayout gl, const float* ref, DiffLayout rl, const std::uint8_t* inside,
                         std::size_t n, double tol, double wrong_tol, Buffer<double>& scratch, cudaStream_t s);

// Resampling on the GPU (cubic: the coefficients are prefiltered on the CPU).
Volume resample(const Volume& flo, const Field& field, const ResampleOptions& opt);

}  // namespace evk::reg_deform::gpu
#endif
