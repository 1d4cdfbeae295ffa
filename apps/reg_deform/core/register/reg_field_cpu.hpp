// Stage 1 of `register` on the CPU: the deformation (world mm, planar float) of a control-point
// grid at every active voxel of a level reference. Same values as compute_field_cpu (the exact
// reference), computed row by row: per (y, z) row the 16 y/z weights are folded into one x-line
// of the grid first, so each voxel costs 4 x-weights instead of 64.
#pragma once
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

// out: 3 * ref.voxels() floats (x plane, y plane, z plane). Voxels outside the mask are not
// written (the registration never reads them). threads <= 0: all cores.
void spline_field_cpu(const Geometry& ref, const Grid& grid, const Mask& mask, float* out, int threads = 0);

// The B-spline weights and first grid index along one axis for voxel coordinate v at spacing s
// (t = v / s, i0 = floor(t), weights of the formula at u = t - i0), shared by every stage.
struct AxisWeights {
  int i0;
  double w[4];
};
inline AxisWeights axis_weights_at(int v, double s) {
  const double t = v / s;
  AxisWeights a;
  a.i0 = static_cast<int>(t);  // t >= 0
  if (a.i0 > t) --a.i0;
  bspline_weights(t - a.i0, a.w);
  return a;
}

}  // namespace evk::reg_deform
