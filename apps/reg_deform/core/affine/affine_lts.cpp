#include "core/affine/affine_lts.hpp"

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>

#include "evk/error.hpp"

namespace evk::reg_deform {

namespace {
constexpr int kMaxRefits = 30;        // reg_aladin's MAX_ITERATIONS
constexpr double kTolerance = 0.001;  // reg_aladin's TOLERANCE (mm, on the trimmed sum of distances)

// The points as six columns (from x, y, z, to x, y, z): the loops below run over contiguous arrays.
struct Columns {
  std::size_t n = 0;
  std::vector<double> c;  // 6 * n
  Columns(const std::vector<Point3>& from, const std::vector<Point3>& to) : n(from.size()), c(6 * from.size()) {
    for (std::size_t i = 0; i < n; ++i)
      for (int a = 0; a < 3; ++a) {
        c[a * n + i] = from[i][a];
        c[(3 + a) * n + i] = to[i][a];
      }
  }
  const double* col(int k) const { return c.data() + k * n; }
};

// The points taken into a fit: idx[0..k), ascending. Every sum below runs in index order, one
// correctly rounded operation at a time (this file is compiled without FMA contraction), so the fit
// is a deterministic function of the points and of the kept set.
struct Moments {
  double n = 0;
  double c1[3] = {0, 0, 0}, c2[3] = {0, 0, 0};  // centroids
  double pp[3][3] = {}, pq[3][3] = {};          // sum (p - c1)(p - c1)^T, sum (p - c1)(q - c2)^T
};
Moments moments(const Columns& P, const std::uint32_t* idx, std::size_t k) {
  Moments m;
  const double *fx = P.col(0), *fy = P.col(1), *fz = P.col(2), *tx = P.col(3), *ty = P.col(4), *tz = P.col(5);
  double s10 = 0, s11 = 0, s12 = 0, s20 = 0, s21 = 0, s22 = 0;
  for (std::size_t t = 0; t < k; ++t) {
    const std::uint32_t i = idx[t];
    s10 += fx[i];
    s11 += fy[i];
    s12 += fz[i];
    s20 += tx[i];
    s21 += ty[i];
    s22 += tz[i];
  }
  m.n = static_cast<double>(k);
  m.c1[0] = s10 / m.n, m.c1[1] = s11 / m.n, m.c1[2] = s12 / m.n;
  m.c2[0] = s20 / m.n, m.c2[1] = s21 / m.n, m.c2[2] = s22 / m.n;
  // pp is symmetric: p[a] * p[b] == p[b] * p[a] exactly, so six sums give all nine entries. The 15
  // sums are independent lanes, each in point order; pairs of them share a two-lane vector (GCC/Clang
  // vector extension: each lane is the same IEEE double operation as scalar code, on any target).
  using V2 = double __attribute__((vector_size(16)));
  V2 acc[8] = {};
  const V2 cp01 = {m.c1[0], m.c1[1]}, cq01 = {m.c2[0], m.c2[1]};
  for (std::size_t t = 0; t < k; ++t) {
    const std::uint32_t i = idx[t];
    const V2 p01 = V2{fx[i], fy[i]} - cp01, q01 = V2{tx[i], ty[i]} - cq01;
    const double p0 = p01[0], p1 = p01[1], p2 = fz[i] - m.c1[2];
    const double q0 = q01[0], q1 = q01[1], q2 = tz[i] - m.c2[2];
    acc[0] += V2{p0, p0} * V2{p0, p1};  // pp00 pp01
    acc[1] += V2{p0, p1} * V2{p2, p1};  // pp02 pp11
    acc[2] += V2{p1, p2} * V2{p2, p2};  // pp12 pp22
    acc[3] += V2{p0, p0} * V2{q0, q1};  // pq00 pq01
    acc[4] += V2{p0, p1} * V2{q2, q0};  // pq02 pq10
    acc[5] += V2{p1, p1} * V2{q1, q2};  // pq11 pq12
    acc[6] += V2{p2, p2} * V2{q0, q1};  // pq20 pq21
    acc[7] += V2{p2, 0.0} * V2{q2, 0.0};  // pq22 -
  }
  const double pp[3][3] = {{acc[0][0], acc[0][1], acc[1][0]}, {acc[0][1], acc[1][1], acc[2][0]},
                           {acc[1][0], acc[2][0], acc[2][1]}};
  const double pq[3][3] = {{acc[3][0], acc[3][1], acc[4][0]}, {acc[4][1], acc[5][0], acc[5][1]},
                           {acc[6][0], acc[6][1], acc[7][0]}};
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) m.pp[a][b] = pp[a][b], m.pq[a][b] = pq[a][b];
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

Mat44 fit(const Columns& P, const std::uint32_t* idx, std::size_t k, bool affine) {
  const Moments mo = moments(P, idx, k);
  return affine ? solve_affine(mo) : solve_rigid(mo);
}

Mat44 fit_all(const std::vector<Point3>& from, const std::vector<Point3>& to, bool affine) {
  const Columns P(from, to);
  std::vector<std::uint32_t> all(P.n);
  std::iota(all.begin(), all.end(), 0u);
  return fit(P, all.data(), all.size(), affine);
}

std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
double double_of(std::uint64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// The k-th smallest (0-based) of n doubles >= +0, exactly, and how many are smaller than it:
// non-negative doubles order as their bit patterns do (+inf above every finite value, NaN above
// +inf), so a radix selection on the bits (12-bit digits from the top: sign and exponent, then
// mantissa bits) narrows them down and nth_element finishes on the few left.
double kth_smallest(const double* v, std::size_t n, std::size_t k, std::vector<std::uint64_t>& cand,
                    std::size_t& below) {
  cand.resize(n);
  for (std::size_t i = 0; i < n; ++i) cand[i] = bits_of(v[i]);
  std::size_t m = n;
  below = 0;
  for (int shift = 52; shift >= 28 && m > 1024; shift -= 12) {
    // Elements left: cand[0..m), all sharing the bits above `shift + 12`.
    std::uint32_t hist[4096] = {};
    for (std::size_t i = 0; i < m; ++i) ++hist[(cand[i] >> shift) & 4095];
    std::uint64_t digit = 0;
    while (k >= hist[digit]) k -= hist[digit], below += hist[digit++];  // smaller digit: smaller value
    std::size_t w = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const std::uint64_t b = cand[i];
      cand[w] = b;
      w += ((b >> shift) & 4095) == digit;
    }
    m = w;
  }
  std::nth_element(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(k), cand.begin() + static_cast<std::ptrdiff_t>(m));
  const std::uint64_t t = cand[k];
  for (std::size_t i = 0; i < k; ++i) below += cand[i] < t;  // cand[0..k) <= t after nth_element
  return double_of(t);
}
}  // namespace

Mat44 fit_rigid(const std::vector<Point3>& from, const std::vector<Point3>& to) { return fit_all(from, to, false); }

Mat44 fit_affine(const std::vector<Point3>& from, const std::vector<Point3>& to) { return fit_all(from, to, true); }

LtsResult fit_lts(const std::vector<Point3>& from, const std::vector<Point3>& to, int inlier_percent, bool affine) {
  const std::size_t n = from.size();
  const std::size_t need = affine ? 8 : 4;
  if (n < need)
    input_error("registration", "only " + std::to_string(n) + " block correspondences, need " + std::to_string(need) +
                                    " for " + (affine ? "an affine" : "a rigid") + " transformation (images do not overlap?)");
  if (n > std::numeric_limits<std::uint32_t>::max()) input_error("registration", "too many block correspondences");
  std::size_t keep = static_cast<std::size_t>(static_cast<double>(n) * inlier_percent / 100.0);
  keep = std::clamp<std::size_t>(keep, affine ? 4 : 3, n);

  const Columns P(from, to);
  const double *fx = P.col(0), *fy = P.col(1), *fz = P.col(2), *tx = P.col(3), *ty = P.col(4), *tz = P.col(5);
  std::vector<std::uint32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0u);
  LtsResult r;
  r.m = fit(P, idx.data(), n, affine);  // all points first
  r.kept = static_cast<int>(n);
  Mat44 last_m = r.m;
  double last = std::numeric_limits<double>::infinity();
  std::vector<double> r2(n);
  std::vector<std::uint64_t> scratch;
  for (int it = 0; it < kMaxRefits; ++it) {
    // squared residuals of the current fit (Mat44::apply's operations, in its order). With finite
    // points and a finite fit they are finite; an infinite one would sort last, a NaN never be kept.
    const auto& m = r.m.m;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = fx[i], y = fy[i], z = fz[i];
      const double dx = m[0][0] * x + m[0][1] * y + m[0][2] * z + m[0][3] - tx[i];
      const double dy = m[1][0] * x + m[1][1] * y + m[1][2] * z + m[1][3] - ty[i];
      const double dz = m[2][0] * x + m[2][1] * y + m[2][2] * z + m[2][3] - tz[i];
      r2[i] = dx * dx + dy * dy + dz * dz;
    }
    // the `keep` smallest (ties at the threshold: lowest indices first), ascending in idx[0..keep)
    std::size_t below = 0;
    const double thr = kth_smallest(r2.data(), n, keep - 1, scratch, below);
    const std::size_t ties = keep - below;  // of the points at the threshold, the first `ties`
    std::size_t k = 0, seen = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool lt = r2[i] < thr, eq = r2[i] == thr;
      idx[k] = static_cast<std::uint32_t>(i);
      k += lt | (eq & (seen < ties));
      seen += eq;
    }
    // the trimmed sum of distances, in index order (reg_aladin's criterion)
    double sum = 0;
    for (std::size_t t = 0; t < keep; ++t) sum += std::sqrt(r2[idx[t]]);
    if (!std::isfinite(sum) || sum > last || last - sum < kTolerance) {  // not improving: the previous fit
      r.m = last_m;
      break;
    }
    last = sum;
    last_m = r.m;
    r.trimmed_sum = sum;
    r.kept = static_cast<int>(keep);
    r.refits = it + 1;
    r.m = fit(P, idx.data(), keep, affine);
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
