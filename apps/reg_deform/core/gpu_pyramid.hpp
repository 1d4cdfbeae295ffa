// The image pyramid (pyramid.hpp's make_pyramid) computed on the GPU (pyramid_kernels.cu), bit-
// identical to the CPU's: the same double operations in the same order, no FMA on either side.
// Returns host volumes like make_pyramid (the coarser levels are downloaded; the input level is
// copied on the host). Without CUDA this header declares nothing.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <vector>

#include "types.hpp"

namespace evk::reg_deform::gpu {

std::vector<Volume> make_pyramid(const Volume& v, int levels, int used);

}  // namespace evk::reg_deform::gpu
#endif
