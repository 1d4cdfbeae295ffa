// Stage 2 of `register` on the CPU: the floating image resampled through the deformation (trilinear,
// as reg_f3d's registration loop) and its spatial gradient, per reference voxel in the mask.
// reg_f3d's padding rule: a voxel whose 2x2x2 stencil leaves the floating image (floor(p) < 0 or
// floor(p) + 1 > n - 1 on any axis) is NaN, i.e. left out of the measure; so are voxels outside the
// reference mask and, with a floating mask, those whose nearest floating voxel is outside it (our
// extension; reg_f3d has no floating mask). The gradient is the derivative of the trilinear
// interpolant, in world units (floating voxel gradient times the transposed world-to-voxel
// matrix, which reg_f3d applies later at the control points); 0 where the value is NaN.
#pragma once
#include "core/types.hpp"

namespace evk::reg_deform {

// field: deformation (3 * ref.voxels() planar, world mm). warped: ref.voxels(); grad: 3 * ref.voxels()
// or nullptr. flo_mask: empty or flo.geo.voxels() entries.
void warp_field_cpu(const Volume& flo, const Mask& flo_mask, const Geometry& ref, const Mask& ref_mask,
                     const float* field, float* warped, float* grad, int threads = 0);

}  // namespace evk::reg_deform
