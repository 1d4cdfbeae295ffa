// Removes the folding of a control-point grid (voxels of the reference where the determinant of the
// transformation's Jacobian is <= 0), for `register`'s fold-free result. Rounds of: find the folded
// voxels; move each control point whose support holds one halfway to the mean of its face
// neighbours (a local Laplacian step: it leaves a locally affine grid unchanged and damps the rest,
// so the folds shrink). A fold's determinant depends only on its 4x4x4 support, all of which moved,
// so the next round need only look at the voxels those points reach, and the loop ends when that
// look finds none (every voxel changed since the first scan has been looked at again). Rounds
// without success widen the moved neighbourhood by one control point (every 25).
#pragma once
#include <cstddef>

#include "core/types.hpp"

namespace evk::reg_deform {

struct UnfoldReport {
  std::size_t folded_before = 0;  // voxels, whole reference grid
  double min_det_before = 0;
  std::size_t folded_after = 0;   // 0 unless max_rounds ran out
  int rounds = 0;
  std::size_t moves = 0;  // control-point moves summed over the rounds
  double seconds = 0;
};

UnfoldReport unfold_grid(const Geometry& ref, Grid& grid, int threads = 0, int max_rounds = 400);

}  // namespace evk::reg_deform
