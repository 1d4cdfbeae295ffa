// The transformation from block correspondences (reg_aladin's optimisation step, Ourselin et al.
// 2001): least squares (rigid: Kabsch/SVD; affine: 12-parameter linear least squares), trimmed
// (least trimmed squares: refit on the given percentage of points with the smallest residuals until
// the trimmed sum of squares stops falling by more than 0.001 mm^2, at most 30 refits). Double
// precision throughout. And the log-Euclidean mean of two affine matrices (reg_aladin's symmetric
// update).
#pragma once
#include <array>
#include <vector>

#include "types.hpp"

namespace evk::reg_deform {

using Point3 = std::array<double, 3>;

// Best rigid (rotation + translation) or affine map from `from` to `to` in the least-squares sense.
Mat44 fit_rigid(const std::vector<Point3>& from, const std::vector<Point3>& to);
Mat44 fit_affine(const std::vector<Point3>& from, const std::vector<Point3>& to);

struct LtsResult {
  Mat44 m;
  int kept = 0;        // points in the final trimmed set
  int refits = 0;      // LTS iterations
  double trimmed_ssd = 0;  // sum of squared residuals of the kept points (mm^2)
};
// Least trimmed squares with `inlier_percent` of the points kept (at least the minimum for the
// model: 4 for affine, 3 for rigid). Needs >= 4 (rigid) / 8 (affine) points, else InputError.
LtsResult fit_lts(const std::vector<Point3>& from, const std::vector<Point3>& to, int inlier_percent, bool affine);

// exp((log A + log B) / 2): the average reg_aladin applies to the forward matrix and the inverted
// backward matrix (both close to each other after a few iterations).
Mat44 average_log_euclidean(const Mat44& a, const Mat44& b);

}  // namespace evk::reg_deform
