// The image pyramid (pyramid.hpp's make_pyramid) computed on the GPU (pyramid_kernels.cu), bit-
// identical to the CPU's: the same double operations in the same order, no FMA on either side.
// Without CUDA this header declares nothing.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <vector>

#include "core/pyramid.hpp"
#include "core/types.hpp"

namespace evk::reg_deform::gpu {

// The input uploaded once, every level computed on the device and kept there (ImagePyramid::device
// owns the buffers; LevelImage::device is a `const float*` of the level's voxels), the levels other
// than the input downloaded for the host (block selection reads them).
ImagePyramid make_image_pyramid(const Volume& v, int levels, int used);
// The same as host volumes like make_pyramid (the input level copied on the host).
std::vector<Volume> make_pyramid(const Volume& v, int levels, int used);
// A device level's voxels back on the host (tests).
std::vector<float> download_level(const LevelImage& l);

}  // namespace evk::reg_deform::gpu
#endif
