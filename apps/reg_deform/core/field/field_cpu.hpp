// The exact CPU reference: the cubic B-spline control-point grid evaluated at every reference voxel
// (double precision, multi-threaded, any spacing). Voxels outside the mask get the identity.
#pragma once
#include <array>
#include <string>

#include "core/types.hpp"

namespace evk::reg_deform {

struct FieldOptions {
  bool displacement = false;  // subtract each voxel's own world position
  int threads = 0;            // <= 0: all cores
};

// Grid indices needed along an axis of n voxels at spacing s: floor((n-1)/s) + 4.
int grid_points_needed(int n, double s);
// NiftyReg's grid size for n voxels at spacing s: ceil(n/s + 3).
int grid_points_niftyreg(int n, double s);
// InputError "<what>: ..." when the grid does not cover the reference at its spacing.
void check_grid_fits(const Geometry& ref, const Grid& grid, const std::string& what);

// The B-spline position (world mm) at reference voxel (x, y, z).
std::array<double, 3> bspline_position(const Grid& grid, int x, int y, int z);

// mask: empty or ref.voxels() entries (nonzero = active).
Field compute_field_cpu(const Geometry& ref, const Grid& grid, const Mask& mask = {}, const FieldOptions& opt = {});

// Displacement -> deformation (adds each voxel's world position), in place.
void to_deformation(Field& f);

}  // namespace evk::reg_deform
