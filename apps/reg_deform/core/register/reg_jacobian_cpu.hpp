// The Jacobian determinant of a control-point grid's transformation at every reference voxel (the
// exact derivative of the cubic B-spline, world to world), for the "no folding" report.
#pragma once
#include <array>
#include <cstddef>
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

struct JacobianStats {
  double min = 0, max = 0;
  std::size_t folded = 0;  // voxels with determinant <= 0
  std::size_t voxels = 0;  // voxels looked at (mask or all)
};

JacobianStats voxel_jacobian_stats(const Geometry& ref, const Grid& grid, const Mask& mask = {}, int threads = 0);
// A box of reference voxels: [x0, x1) x [y0, y1) x [z0, z1), clipped to the reference when used.
struct VoxelBox {
  int x0 = 0, x1 = 0, y0 = 0, y1 = 0, z0 = 0, z1 = 0;
};
// The same over the voxels of a box, every voxel, with the folded ones listed (x, y, z) in `out` (in
// no particular order).
JacobianStats folded_voxels(const Geometry& ref, const Grid& grid, const VoxelBox& box, std::vector<std::array<int, 3>>& out,
                            int threads = 0);

// The determinant at one voxel (double precision, direct 64-point sum; the reference for the above).
double voxel_jacobian(const Geometry& ref, const Grid& grid, int x, int y, int z);

}  // namespace evk::reg_deform
