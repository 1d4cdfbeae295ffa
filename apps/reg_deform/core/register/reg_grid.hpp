// Control-point grids of a registration level (reg_f3d's reg_createControlPointGrid and
// reg_spline_refineControlPointGrid, per-axis spacing): the grid for a level reference at a world
// spacing in mm, initialised to an affine, and the refinement of a coarse grid onto the next level.
#pragma once
#include <array>

#include "core/types.hpp"

namespace evk::reg_deform {

// Spacings within 1e-6 (relative) of a multiple of 0.5 voxel snapped to it (rounding of mm / pixdim).
std::array<double, 3> snap_spacing(std::array<double, 3> s);

// Grid geometry for `ref` with per-axis spacing s (reference voxels): g = ceil(n/s + 3) points,
// grid index i at reference voxel (i-1)*s (qform and sform of the reference, scaled, shifted).
Geometry grid_geometry3(const Geometry& ref, const std::array<double, 3>& s);

// A grid on `ref` at spacing s whose control points sit at affine * (their world position).
Grid make_grid3(const Geometry& ref, const std::array<double, 3>& s, const Mat44& affine = Mat44::identity());

// Cubic B-spline subdivision of `coarse` (world spacing S) onto the grid of `ref` at spacing S/2:
// fine index I = 2i - 1; even fine points (c[i-1] + 6 c[i] + c[i+1]) / 8, odd points
// (c[i] + c[i+1]) / 2 per axis (tensor product). The deformation is unchanged. Coarse values
// beyond the grid are extrapolated linearly (reg_f3d uses 0 there; no voxel depends on them).
Grid refine_grid(const Grid& coarse, const Geometry& ref);

}  // namespace evk::reg_deform
