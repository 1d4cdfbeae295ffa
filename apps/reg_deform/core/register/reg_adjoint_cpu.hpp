// Stage 5 of `register` on the CPU: a voxel-wise gradient (3 planar components on the level
// reference) carried back onto the control points through the B-spline weights of stage 1:
// node[k] = sum over voxels v of B_k(v) * g(v), the exact adjoint (transpose) of the field
// evaluation, so the node gradient is the true derivative with respect to the control points.
// reg_f3d instead convolves with a normalised B-spline kernel and samples at the nodes: the same
// in the interior, larger near the image border. Separable: x, then y, then z.
#pragma once
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

// voxel: 3 * ref.voxels() floats; node: 3 * grid.points() doubles (overwritten).
void spline_adjoint_cpu(const Geometry& ref, const Grid& grid, const float* voxel, double* node, int threads = 0);

}  // namespace evk::reg_deform
