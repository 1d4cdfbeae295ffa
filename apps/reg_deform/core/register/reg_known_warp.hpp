// Known-deformation cases for `register`'s accuracy tests and benchmarks: a random smooth cubic
// B-spline transformation (control points every `spacing_mm`, displacements drawn uniformly and
// scaled so that the largest displacement over the image is `max_mm`), the reference made by
// warping an image through it (so that registering it back to the image should recover it), and
// the error between two transformations over a set of voxels.
#pragma once
#include <cstdint>

#include "core/types.hpp"

namespace evk::reg_deform {

struct KnownWarp {
  Grid truth;       // on the new reference's geometry (= the image's)
  Volume reference; // image warped through `truth` (cubic B-spline interpolation, pad 0)
  double max_displacement = 0;  // mm, over the image
};

// Folding is avoided by shrinking the displacements until the minimum voxel Jacobian is >= 0.5.
KnownWarp make_known_warp(const Volume& image, double spacing_mm, double max_mm, std::uint64_t seed, int threads = 0);

struct WarpError {
  double mean = 0, p95 = 0, max = 0;  // mm
  std::size_t voxels = 0;
};
// |T1(x) - T2(x)| over the voxels of `where` (nonzero), both grids on `ref`.
WarpError warp_error(const Geometry& ref, const Grid& a, const Grid& b, const Mask& where, int threads = 0);

// Voxels of `v` above `fraction` of its 99th-percentile intensity (a head mask for T1 images).
Mask intensity_mask(const Volume& v, double fraction = 0.1);

}  // namespace evk::reg_deform
