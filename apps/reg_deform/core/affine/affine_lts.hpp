// The transformation from block correspondences (reg_aladin's optimisation step, Ourselin et al.
// 2001): least squares (rigid: Kabsch/SVD; affine: 12-parameter linear least squares), trimmed
// (least trimmed squares as reg_aladin's optimize_3D: fit all points, then refit on the given
// percentage of points with the smallest residuals until the trimmed sum of distances stops falling
// by at least 0.001 mm, at most 30 refits; then the last fit). Double precision throughout; every
// sum runs in point order, so the result is a deterministic function of the points. And the log-Euclidean mean of two affine matrices (reg_aladin's symmetric
// update).
#pragma once
#include <array>
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

using Point3 = std::array<double, 3>;

// Best rigid (rotation + translation) or affine map from `from` to `to` in the least-squares sense.
Mat44 fit_rigid(const std::vector<Point3>& from, const std::vector<Point3>& to);
Mat44 fit_affine(const std::vector<Point3>& from, const std::vector<Point3>& to);

struct LtsResult {
  Mat44 m;
  int kept = 0;            // points in the final trimmed set
  int refits = 0;          // LTS refits made
  double trimmed_sum = 0;  // sum of the distances of the last trimmed set (mm)
};
// Least trimmed squares with `inlier_percent` of the points kept (at least the minimum for the
// model: 4 for affine, 3 for rigid). Needs >= 4 (rigid) / 8 (affine) points, else InputError.
LtsResult fit_lts(const std::vector<Point3>& from, const std::vector<Point3>& to, int inlier_percent, bool affine);

// exp((log A + log B) / 2): the average reg_aladin applies to the forward matrix and the inverted
// backward matrix (both close to each other after a few iterations).
Mat44 average_log_euclidean(const Mat44& a, const Mat44& b);

}  // namespace evk::reg_deform
