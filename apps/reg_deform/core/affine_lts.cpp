#include "affine_lts.hpp"

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "evk/error.hpp"

namespace evk::reg_deform {

namespace {
constexpr int kMaxRefits = 30;        // reg_aladin's MAX_ITERATIONS
constexpr double kTolerance = 0.001;  // reg_aladin's TOLERANCE (mm, on the trimmed sum of distances)

// The points taken into a fit: all (keep == nullptr) or those with keep[i] != 0. Every sum below
// runs in index order (deterministic, whatever the selection algorithm).
struct Moments {
  double n = 0;
  double c1[3] = {0, 0, 0}, c2[3] = {0, 0, 0};  // centroids
  double pp[3][3] = {}, pq[3][3] = {};          // sum (p - c1)(p - c1)^T, sum (p - c1)(q - c2)^T
};
Moments moments(const std::vector<Point3>& from, const std::vector<Point3>& to, const unsigned char* keep) {
  Moments m;
  const std::size_t n = from.size();
  double s1[3] = {0, 0, 0}, s2[3] = {0, 0, 0};
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (keep && !keep[i]) continue;
    for (int a = 0; a < 3; ++a) {
      s1[a] += from[i][a];
      s2[a] += to[i][a];
    }
    ++k;
  }
  m.n = static_cast<double>(k);
  for (int a = 0; a < 3; ++a) {
    m.c1[a] = s1[a] / m.n;
    m.c2[a] = s2[a] / m.n;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (keep && !keep[i]) continue;
    const double p[3] = {from[i][0] - m.c1[0], from[i][1] - m.c1[1], from[i][2] - m.c1[2]};
    const double q[3] = {to[i][0] - m.c2[0], to[i][1] - m.c2[1], to[i][2] - m.c2[2]};
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        m.pp[a][b] += p[a] * p[b];
        m.pq[a][b] += p[a] * q[b];
      }
  }
  return m;
}

// Kabsch: the rotation R minimising sum |R (p - c1) - (q - c2)|^2 (SVD of the cross-covariance).
Mat44 solve_rigid(const Moments& mo) {
  Eigen::Matrix3d h;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) h(a, b) = mo.pq[a][b];
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(h, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d d = Eigen::Matrix3d::Identity();
  d(2, 2) = (svd.matrixV() * svd.matrixU().transpose()).determinant() < 0 ? -1 : 1;  // no reflection
  const Eigen::Matrix3d r = svd.matrixV() * d * svd.matrixU().transpose();
  const Eigen::Vector3d t = Eigen::Vector3d(mo.c2[0], mo.c2[1], mo.c2[2]) - r * Eigen::Vector3d(mo.c1[0], mo.c1[1], mo.c1[2]);
  Mat44 m;
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) m.m[a][b] = r(a, b);
    m.m[a][3] = t(a);
  }
  return m;
}

// Normal equations of the centred problem (3x3, double): [p - c1] X = [q - c2].
Mat44 solve_affine(const Moments& mo) {
  Eigen::Matrix3d ata, atb;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      ata(a, b) = mo.pp[a][b];
      atb(a, b) = mo.pq[a][b];
    }
  const Eigen::Matrix3d x = ata.ldlt().solve(atb);  // rows: input axis, cols: output axis
  if (!x.allFinite() || !(std::fabs(x.determinant()) > 1e-12))
    input_error("registration", "degenerate block correspondences (coplanar or collinear): no affine fit");
  const Eigen::Matrix3d l = x.transpose();
  const Eigen::Vector3d t = Eigen::Vector3d(mo.c2[0], mo.c2[1], mo.c2[2]) - l * Eigen::Vector3d(mo.c1[0], mo.c1[1], mo.c1[2]);
  Mat44 m;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) m.m[r][c] = l(r, c);
    m.m[r][3] = t(r);
  }
  return m;
}

Mat44 fit(const std::vector<Point3>& from, const std::vector<Point3>& to, const unsigned char* keep, bool affine) {
  const Moments mo = moments(from, to, keep);
  return affine ? solve_affine(mo) : solve_rigid(mo);
}
}  // namespace

Mat44 fit_rigid(const std::vector<Point3>& from, const std::vector<Point3>& to) {
  return fit(from, to, nullptr, false);
}

Mat44 fit_affine(const std::vector<Point3>& from, const std::vector<Point3>& to) {
  return fit(from, to, nullptr, true);
}

LtsResult fit_lts(const std::vector<Point3>& from, const std::vector<Point3>& to, int inlier_percent, bool affine) {
  const std::size_t n = from.size();
  const std::size_t need = affine ? 8 : 4;
  if (n < need)
    input_error("registration", "only " + std::to_string(n) + " block correspondences, need " + std::to_string(need) +
                                    " for " + (affine ? "an affine" : "a rigid") + " transformation (images do not overlap?)");
  std::size_t keep = static_cast<std::size_t>(static_cast<double>(n) * inlier_percent / 100.0);
  keep = std::clamp<std::size_t>(keep, affine ? 4 : 3, n);

  LtsResult r;
  r.m = fit(from, to, nullptr, affine);  // all points first
  r.kept = static_cast<int>(n);
  Mat44 last_m = r.m;
  double last = std::numeric_limits<double>::infinity();
  std::vector<double> r2(n), scratch(n);
  std::vector<unsigned char> kept(n);
  for (int it = 0; it < kMaxRefits; ++it) {
    // squared residuals of the current fit
    const Mat44& m = r.m;
    for (std::size_t i = 0; i < n; ++i) {
      const auto p = m.apply(from[i][0], from[i][1], from[i][2]);
      const double dx = p[0] - to[i][0], dy = p[1] - to[i][1], dz = p[2] - to[i][2];
      r2[i] = dx * dx + dy * dy + dz * dz;
    }
    // the `keep` smallest (ties at the threshold: lowest indices first), selected in O(n)
    scratch = r2;
    std::nth_element(scratch.begin(), scratch.begin() + (keep - 1), scratch.end());
    const double thr = scratch[keep - 1];
    std::size_t taken = 0;
    for (std::size_t i = 0; i < n; ++i) {
      kept[i] = r2[i] < thr;
      taken += kept[i];
    }
    for (std::size_t i = 0; i < n && taken < keep; ++i)
      if (r2[i] == thr) kept[i] = 1, ++taken;
    // the trimmed sum of distances, in index order (reg_aladin's criterion)
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (kept[i]) sum += std::sqrt(r2[i]);
    if (!std::isfinite(sum) || sum > last || last - sum < kTolerance) {  // not improving: the previous fit
      r.m = last_m;
      break;
    }
    last = sum;
    last_m = r.m;
    r.trimmed_sum = sum;
    r.kept = static_cast<int>(keep);
    r.refits = it + 1;
    r.m = fit(from, to, kept.data(), affine);
  }
  return r;
}

Mat44 average_log_euclidean(const Mat44& a, const Mat44& b) {
  Eigen::Matrix4d ea, eb;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      ea(i, j) = a.m[i][j];
      eb(i, j) = b.m[i][j];
    }
  Eigen::Matrix4d la = ea.log(), lb = eb.log();
  la.row(3).setZero();
  lb.row(3).setZero();
  const Eigen::Matrix4d e = (0.5 * (la + lb)).exp();
  Mat44 m;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) m.m[i][j] = e(i, j);
  return m;  // last row exactly 0 0 0 1
}

}  // namespace evk::reg_deform
