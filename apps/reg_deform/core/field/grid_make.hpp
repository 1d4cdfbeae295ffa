// Control-point grids in NiftyReg's convention: g = ceil(n/s + 3) points per axis, grid index i at
// reference voxel (i-1)*s, qform/sform of the reference scaled by s and shifted by -1 control point.
#pragma once
#include <cstdint>
#include <string>

#include "core/types.hpp"

namespace evk::reg_deform {

// The grid geometry for a reference at spacing s (reference voxels, > 0).
Geometry grid_geometry(const Geometry& ref, double s);

// A grid whose control points sit at affine * (their world position): identity by default.
// With B-splines reproducing linear functions, its field is exactly affine * voxel world position.
Grid make_grid(const Geometry& ref, double spacing, const Mat44& affine = Mat44::identity());

// Moves every control point coordinate by a uniform random amount in [-mm, mm] (splitmix64 from
// `seed`): what `reg_deform grid --perturb MM --seed SEED` does.
void perturb_grid(Grid& grid, double mm, std::uint64_t seed);

// Reads the grid's spacing (in reference voxels) from its geometry relative to the reference and
// checks the NiftyReg layout (axis-aligned with the reference, origin one control point before it)
// and that the dims cover the reference. InputError "<what>: ..." otherwise.
void attach_grid(Grid& grid, const Geometry& ref, const std::string& what);

}  // namespace evk::reg_deform
