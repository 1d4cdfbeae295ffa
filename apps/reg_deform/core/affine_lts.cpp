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
constexpr int kMaxRefits = 30;         // reg_aladin's MAX_ITERATIONS
constexpr double kTolerance = 0.001;   // reg_aladin's TOLERANCE (mm^2, trimmed sum)

double sq_residual(const Mat44& m, const Point3& a, const Point3& b) {
  const auto p = m.apply(a[0], a[1], a[2]);
  const double dx = p[0] - b[0], dy = p[1] - b[1], dz = p[2] - b[2];
  return dx * dx + dy * dy + dz * dz;
}
}  // namespace

Mat44 fit_rigid(const std::vector<Point3>& from, const std::vector<Point3>& to) {
  const std::size_t n = from.size();
  Eigen::Vector3d c1 = Eigen::Vector3d::Zero(), c2 = Eigen::Vector3d::Zero();
  for (std::size_t i = 0; i < n; ++i) {
    c1 += Eigen::Vector3d(from[i][0], from[i][1], from[i][2]);
    c2 += Eigen::Vector3d(to[i][0], to[i][1], to[i][2]);
  }
  c1 /= static_cast<double>(n);
  c2 /= static_cast<double>(n);
  Eigen::Matrix3d h = Eigen::Matrix3d::Zero();  // sum (p - c1)(q - c2)^T
  for (std::size_t i = 0; i < n; ++i)
    h += (Eigen::Vector3d(from[i][0], from[i][1], from[i][2]) - c1) *
         (Eigen::Vector3d(to[i][0], to[i][1], to[i][2]) - c2).transpose();
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(h, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d d = Eigen::Matrix3d::Identity();
  d(2, 2) = (svd.matrixV() * svd.matrixU().transpose()).determinant() < 0 ? -1 : 1;  // no reflection
  const Eigen::Matrix3d r = svd.matrixV() * d * svd.matrixU().transpose();
  const Eigen::Vector3d t = c2 - r * c1;
  Mat44 m;
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) m.m[a][b] = r(a, b);
    m.m[a][3] = t(a);
  }
  return m;
}

Mat44 fit_affine(const std::vector<Point3>& from, const std::vector<Point3>& to) {
  const std::size_t n = from.size();
  // Centre both sets (conditioning), then solve [p - c1] * X = [q - c2] for the 3x3 part.
  Eigen::Vector3d c1 = Eigen::Vector3d::Zero(), c2 = Eigen::Vector3d::Zero();
  for (std::size_t i = 0; i < n; ++i) {
    c1 += Eigen::Vector3d(from[i][0], from[i][1], from[i][2]);
    c2 += Eigen::Vector3d(to[i][0], to[i][1], to[i][2]);
  }
  c1 /= static_cast<double>(n);
  c2 /= static_cast<double>(n);
  // Normal equations of the centred problem (3x3, double): O(n) with a tiny constant, so the LTS
  // refits stay cheap on tens of thousands of blocks; centring keeps them well conditioned.
  Eigen::Matrix3d ata = Eigen::Matrix3d::Zero(), atb = Eigen::Matrix3d::Zero();
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::Vector3d p = Eigen::Vector3d(from[i][0], from[i][1], from[i][2]) - c1;
    const Eigen::Vector3d q = Eigen::Vector3d(to[i][0], to[i][1], to[i][2]) - c2;
    ata += p * p.transpose();
    atb += p * q.transpose();
  }
  const Eigen::Matrix3d x = ata.ldlt().solve(atb);  // rows: input axis, cols: output axis
  if (!x.allFinite() || !(std::fabs(x.determinant()) > 1e-12))
    input_error("registration", "degenerate block correspondences (coplanar or collinear): no affine fit");
  const Eigen::Matrix3d l = x.transpose();
  const Eigen::Vector3d t = c2 - l * c1;
  Mat44 m;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) m.m[r][c] = l(r, c);
    m.m[r][3] = t(r);
  }
  return m;
}

LtsResult fit_lts(const std::vector<Point3>& from, const std::vector<Point3>& to, int inlier_percent, bool affine) {
  const std::size_t n = from.size();
  const std::size_t need = affine ? 8 : 4;
  if (n < need)
    input_error("registration", "only " + std::to_string(n) + " block correspondences, need " + std::to_string(need) +
                                    " for " + (affine ? "an affine" : "a rigid") + " transformation (images do not overlap?)");
  auto fit = [&](const std::vector<Point3>& f, const std::vector<Point3>& t) {
    return affine ? fit_affine(f, t) : fit_rigid(f, t);
  };
  std::size_t keep = static_cast<std::size_t>(static_cast<double>(n) * inlier_percent / 100.0);
  keep = std::clamp<std::size_t>(keep, affine ? 4 : 3, n);

  LtsResult best;
  best.m = fit(from, to);
  best.kept = static_cast<int>(n);
  double last = std::numeric_limits<double>::infinity();
  Mat44 current = best.m;
  std::vector<std::pair<double, std::size_t>> res(n);
  std::vector<Point3> f, t;
  for (int it = 0; it < kMaxRefits; ++it) {
    for (std::size_t i = 0; i < n; ++i) res[i] = {sq_residual(current, from[i], to[i]), i};
    std::nth_element(res.begin(), res.begin() + (keep - 1), res.end());
    // the keep smallest (ties broken by index so the result does not depend on the partition)
    std::sort(res.begin(), res.begin() + keep);
    double ssd = 0;
    f.clear();
    t.clear();
    for (std::size_t k = 0; k < keep; ++k) {
      ssd += res[k].first;
      f.push_back(from[res[k].second]);
      t.push_back(to[res[k].second]);
    }
    if (!(ssd < last - kTolerance)) break;  // no longer improving: keep the previous best
    last = ssd;
    best.m = current;
    best.kept = static_cast<int>(keep);
    best.trimmed_ssd = ssd;
    best.refits = it + 1;
    current = fit(f, t);
  }
  return best;
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
