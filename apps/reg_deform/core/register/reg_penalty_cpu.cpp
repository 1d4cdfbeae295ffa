#include "core/register/reg_penalty_cpu.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "core/register/reg_reduce.hpp"
#include "evk/parallel.hpp"

namespace evk::reg_deform {

namespace {
constexpr double kN[3] = {1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0};
constexpr double kD[3] = {-0.5, 0.0, 0.5};
constexpr double kS[3] = {1.0, -2.0, 1.0};

// The 6 second-order and 3 first-order tensor bases over the 27 neighbours (index a + 3b + 9c).
struct Bases {
  double second[6][27];  // XX, YY, ZZ, XY, YZ, XZ
  double first[3][27];   // d/dx, d/dy, d/dz
  Bases() {
    for (int c = 0; c < 3; ++c)
      for (int b = 0; b < 3; ++b)
        for (int a = 0; a < 3; ++a) {
          const int o = a + 3 * b + 9 * c;
          second[0][o] = kS[a] * kN[b] * kN[c];
          second[1][o] = kN[a] * kS[b] * kN[c];
          second[2][o] = kN[a] * kN[b] * kS[c];
          second[3][o] = kD[a] * kD[b] * kN[c];
          second[4][o] = kN[a] * kD[b] * kD[c];
          second[5][o] = kD[a] * kN[b] * kD[c];
          first[0][o] = kD[a] * kN[b] * kN[c];
          first[1][o] = kN[a] * kD[b] * kN[c];
          first[2][o] = kN[a] * kN[b] * kD[c];
        }
  }
};
const Bases& bases() {
  static const Bases b;
  return b;
}

struct View {
  const Grid& g;
  int gx, gy, gz;
  std::size_t np;
  explicit View(const Grid& grid) : g(grid), gx(grid.geo.nx), gy(grid.geo.ny), gz(grid.geo.nz), np(grid.points()) {}
  bool interior(int i, int j, int k) const { return i > 0 && j > 0 && k > 0 && i < gx - 1 && j < gy - 1 && k < gz - 1; }
  std::size_t index(int i, int j, int k) const { return (static_cast<std::size_t>(k) * gy + j) * gx + i; }
  // the 27 neighbour values of component c around (i, j, k)
  void neighbours(int i, int j, int k, int c, double v[27]) const {
    const float* p = g.data.data() + c * np;
    for (int cc = 0; cc < 3; ++cc)
      for (int b = 0; b < 3; ++b)
        for (int a = 0; a < 3; ++a) v[a + 3 * b + 9 * cc] = p[index(i + a - 1, j + b - 1, k + cc - 1)];
  }
};

// World-to-grid-index 3x3 matrix of the grid.
void world_to_index(const Grid& g, double M[3][3]) {
  const Mat44 inv = g.geo.vox2world.inverse();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) M[r][c] = inv.m[r][c];
}

// A[i][c] = d pos_c / d idx_i at an interior node; J = A^T M.
void jacobian_from(const View& v, const double M[3][3], int i, int j, int k, double A[3][3], double J[3][3]) {
  const Bases& B = bases();
  for (int c = 0; c < 3; ++c) {
    double n[27];
    v.neighbours(i, j, k, c, n);
    for (int d = 0; d < 3; ++d) {
      double s = 0;
      for (int o = 0; o < 27; ++o) s += B.first[d][o] * n[o];
      A[d][c] = s;
    }
  }
  for (int c = 0; c < 3; ++c)
    for (int kk = 0; kk < 3; ++kk) {
      double s = 0;
      for (int d = 0; d < 3; ++d) s += A[d][c] * M[d][kk];
      J[c][kk] = s;
    }
}

double det3(const double m[3][3]) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}
// inverse transposed
bool inv_t(const double m[3][3], double r[3][3]) {
  const double d = det3(m);
  if (d == 0 || !std::isfinite(d)) return false;
  r[0][0] = (m[1][1] * m[2][2] - m[1][2] * m[2][1]) / d;
  r[0][1] = -(m[1][0] * m[2][2] - m[1][2] * m[2][0]) / d;
  r[0][2] = (m[1][0] * m[2][1] - m[1][1] * m[2][0]) / d;
  r[1][0] = -(m[0][1] * m[2][2] - m[0][2] * m[2][1]) / d;
  r[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / d;
  r[1][2] = -(m[0][0] * m[2][1] - m[0][1] * m[2][0]) / d;
  r[2][0] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / d;
  r[2][1] = -(m[0][0] * m[1][2] - m[0][2] * m[1][0]) / d;
  r[2][2] = (m[0][0] * m[1][1] - m[0][1] * m[1][0]) / d;
  return true;
}

// Adds the derivative of a per-node function with dE/dJ = G at node (i, j, k) to per-node first-
// order "adjoint" values: a[d][c] = sum_kk G[c][kk] M[d][kk] (dE/dA[d][c]).
void chain_first(const double G[3][3], const double M[3][3], double a[3][3]) {
  for (int d = 0; d < 3; ++d)
    for (int c = 0; c < 3; ++c) {
      double s = 0;
      for (int kk = 0; kk < 3; ++kk) s += G[c][kk] * M[d][kk];
      a[d][c] = s;
    }
}

// grad[c][k] += weight * sum over interior nodes n = k - o of sum_m adj[n][m][c] * basis_m[o].
// adj: per node, nb x 3 values (basis index m major); bases: nb tables of 27.
void gather(const View& v, const std::vector<double>& adj, int nb, const double (*basis)[27], double weight, double* grad,
            int threads) {
  parallel_for(
      static_cast<std::size_t>(v.gz),
      [&](std::size_t k0, std::size_t k1) {
        for (int k = static_cast<int>(k0); k < static_cast<int>(k1); ++k)
          for (int j = 0; j < v.gy; ++j)
            for (int i = 0; i < v.gx; ++i) {
              double s[3] = {0, 0, 0};
              for (int cc = 0; cc < 3; ++cc)
                for (int b = 0; b < 3; ++b)
                  for (int a = 0; a < 3; ++a) {
                    // node n = k - (offset - 1): the neighbour of n at offset (a, b, cc) is k
                    const int ni = i - (a - 1), nj = j - (b - 1), nk = k - (cc - 1);
                    if (!v.interior(ni, nj, nk)) continue;
                    const double* ad = adj.data() + v.index(ni, nj, nk) * nb * 3;
                    const int o = a + 3 * b + 9 * cc;
                    for (int m = 0; m < nb; ++m)
                      for (int c = 0; c < 3; ++c) s[c] += ad[m * 3 + c] * basis[m][o];
                  }
              const std::size_t idx = v.index(i, j, k);
              for (int c = 0; c < 3; ++c) grad[c * v.np + idx] += weight * s[c];
            }
      },
      threads);
}

template <class Fn>
double sum_interior(const View& v, Fn fn, int threads) {
  return ordered_sum(
      static_cast<std::size_t>(v.gz),
      [&](std::size_t k0, std::size_t k1) {
        double s = 0;
        for (int k = static_cast<int>(k0); k < static_cast<int>(k1); ++k)
          for (int j = 1; j < v.gy - 1; ++j)
            for (int i = 1; i < v.gx - 1; ++i)
              if (v.interior(i, j, k)) s += fn(i, j, k);
        return s;
      },
      threads);
}
}  // namespace

void polar_rotation(const double J[3][3], double R[3][3]) {
  double X[3][3];
  // scale for a well-conditioned start
  double fro = 0;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) fro += J[r][c] * J[r][c];
  const double sc = fro > 0 ? std::sqrt(3.0 / fro) : 1.0;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) X[r][c] = J[r][c] * sc;
  for (int it = 0; it < 100; ++it) {
    double T[3][3];
    if (!inv_t(X, T)) break;
    double diff = 0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        const double n = 0.5 * (X[r][c] + T[r][c]);
        diff += std::fabs(n - X[r][c]);
        X[r][c] = n;
      }
    if (diff < 1e-15) break;
  }
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) R[r][c] = X[r][c];
}

double min_node_jacobian(const Grid& g) {
  View v(g);
  double M[3][3];
  world_to_index(g, M);
  double lo = std::numeric_limits<double>::infinity();
  for (int k = 1; k < v.gz - 1; ++k)
    for (int j = 1; j < v.gy - 1; ++j)
      for (int i = 1; i < v.gx - 1; ++i) {
        double A[3][3], J[3][3];
        jacobian_from(v, M, i, j, k, A, J);
        lo = std::min(lo, det3(J));
      }
  return lo;
}

// ---- bending energy ----------------------------------------------------------------------------
namespace {
void second_derivatives(const View& v, int i, int j, int k, double D[6][3]) {
  const Bases& B = bases();
  for (int c = 0; c < 3; ++c) {
    double n[27];
    v.neighbours(i, j, k, c, n);
    for (int m = 0; m < 6; ++m) {
      double s = 0;
      for (int o = 0; o < 27; ++o) s += B.second[m][o] * n[o];
      D[m][c] = s;
    }
  }
}
}  // namespace

double bending_energy(const Grid& g, int threads) {
  View v(g);
  const double s = sum_interior(
      v,
      [&](int i, int j, int k) {
        double D[6][3];
        second_derivatives(v, i, j, k, D);
        double f = 0;
        for (int c = 0; c < 3; ++c)
          f += D[0][c] * D[0][c] + D[1][c] * D[1][c] + D[2][c] * D[2][c] +
               2.0 * (D[3][c] * D[3][c] + D[4][c] * D[4][c] + D[5][c] * D[5][c]);
        return f;
      },
      threads);
  return s / (3.0 * static_cast<double>(v.np));
}

void bending_energy_gradient(const Grid& g, double weight, double* grad, int threads) {
  View v(g);
  std::vector<double> adj(v.np * 6 * 3, 0.0);
  parallel_for(
      static_cast<std::size_t>(v.gz),
      [&](std::size_t k0, std::size_t k1) {
        for (int k = static_cast<int>(k0); k < static_cast<int>(k1); ++k)
          for (int j = 0; j < v.gy; ++j)
            for (int i = 0; i < v.gx; ++i) {
              if (!v.interior(i, j, k)) continue;
              double D[6][3];
              second_derivatives(v, i, j, k, D);
              double* a = adj.data() + v.index(i, j, k) * 18;
              for (int m = 0; m < 6; ++m)
                for (int c = 0; c < 3; ++c) a[m * 3 + c] = (m < 3 ? 2.0 : 4.0) * D[m][c];
            }
      },
      threads);
  gather(v, adj, 6, bases().second, weight / (3.0 * static_cast<double>(v.np)), grad, threads);
}

// ---- linear elasticity ------------------------------------------------------------------------
double linear_energy(const Grid& g, int threads) {
  View v(g);
  double M[3][3];
  world_to_index(g, M);
  const double s = sum_interior(
      v,
      [&](int i, int j, int k) {
        double A[3][3], J[3][3], R[3][3];
        jacobian_from(v, M, i, j, k, A, J);
        polar_rotation(J, R);
        double fro = 0, nuc = 0;
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) {
            fro += J[r][c] * J[r][c];
            nuc += R[r][c] * J[r][c];  // tr(R^T J) = sum of singular values
          }
        return fro - 2 * nuc + 3;
      },
      threads);
  return s / (3.0 * static_cast<double>(v.np));
}

void linear_energy_gradient(const Grid& g, double weight, double* grad, int threads) {
  View v(g);
  double M[3][3];
  world_to_index(g, M);
  std::vector<double> adj(v.np * 9, 0.0);
  parallel_for(
      static_cast<std::size_t>(v.gz),
      [&](std::size_t k0, std::size_t k1) {
        for (int k = static_cast<int>(k0); k < static_cast<int>(k1); ++k)
          for (int j = 0; j < v.gy; ++j)
            for (int i = 0; i < v.gx; ++i) {
              if (!v.interior(i, j, k)) continue;
              double A[3][3], J[3][3], R[3][3], G[3][3], a[3][3];
              jacobian_from(v, M, i, j, k, A, J);
              polar_rotation(J, R);
              for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) G[r][c] = 2 * (J[r][c] - R[r][c]);
              chain_first(G, M, a);
              double* out = adj.data() + v.index(i, j, k) * 9;
              for (int d = 0; d < 3; ++d)
                for (int c = 0; c < 3; ++c) out[d * 3 + c] = a[d][c];
            }
      },
      threads);
  gather(v, adj, 3, bases().first, weight / (3.0 * static_cast<double>(v.np)), grad, threads);
}

// ---- Jacobian log -----------------------------------------------------------------------------
// log(d)^2, continued below kJacobianFloor by its second-order Taylor polynomial at the floor, so a
// folded node (d <= 0) has a large finite penalty whose gradient points out of the fold.
namespace {
constexpr double kJacobianFloor = 0.05;
double jl_value(double d) {
  if (d >= kJacobianFloor) return std::log(d) * std::log(d);
  const double a = kJacobianFloor, la = std::log(a), e = d - a;
  return la * la + (2 * la / a) * e + 0.5 * ((2 - 2 * la) / (a * a)) * e * e;
}
double jl_slope(double d) {  // d jl_value / d det
  if (d >= kJacobianFloor) return 2 * std::log(d) / d;
  const double a = kJacobianFloor, la = std::log(a);
  return 2 * la / a + ((2 - 2 * la) / (a * a)) * (d - a);
}
// d det / d J = cofactor matrix = det * J^-T (computed directly, valid for any d)
void cofactor(const double m[3][3], double r[3][3]) {
  r[0][0] = m[1][1] * m[2][2] - m[1][2] * m[2][1];
  r[0][1] = -(m[1][0] * m[2][2] - m[1][2] * m[2][0]);
  r[0][2] = m[1][0] * m[2][1] - m[1][1] * m[2][0];
  r[1][0] = -(m[0][1] * m[2][2] - m[0][2] * m[2][1]);
  r[1][1] = m[0][0] * m[2][2] - m[0][2] * m[2][0];
  r[1][2] = -(m[0][0] * m[2][1] - m[0][1] * m[2][0]);
  r[2][0] = m[0][1] * m[1][2] - m[0][2] * m[1][1];
  r[2][1] = -(m[0][0] * m[1][2] - m[0][2] * m[1][0]);
  r[2][2] = m[0][0] * m[1][1] - m[0][1] * m[1][0];
}
}  // namespace

double jacobian_log_penalty(const Grid& g, int threads) {
  View v(g);
  double M[3][3];
  world_to_index(g, M);
  const double count = static_cast<double>(v.gx - 2) * (v.gy - 2) * (v.gz - 2);
  if (count <= 0) return 0;
  const double s = sum_interior(
      v,
      [&](int i, int j, int k) {
        double A[3][3], J[3][3];
        jacobian_from(v, M, i, j, k, A, J);
        return jl_value(det3(J));
      },
      threads);
  return s / count;
}

void jacobian_log_gradient(const Grid& g, double weight, double* grad, int threads) {
  View v(g);
  double M[3][3];
  world_to_index(g, M);
  const double count = static_cast<double>(v.gx - 2) * (v.gy - 2) * (v.gz - 2);
  if (count <= 0) return;
  std::vector<double> adj(v.np * 9, 0.0);
  parallel_for(
      static_cast<std::size_t>(v.gz),
      [&](std::size_t k0, std::size_t k1) {
        for (int k = static_cast<int>(k0); k < static_cast<int>(k1); ++k)
          for (int j = 0; j < v.gy; ++j)
            for (int i = 0; i < v.gx; ++i) {
              if (!v.interior(i, j, k)) continue;
              double A[3][3], J[3][3], C[3][3], G[3][3], a[3][3];
              jacobian_from(v, M, i, j, k, A, J);
              const double slope = jl_slope(det3(J));
              cofactor(J, C);
              for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) G[r][c] = slope * C[r][c];
              chain_first(G, M, a);
              double* out = adj.data() + v.index(i, j, k) * 9;
              for (int dd = 0; dd < 3; ++dd)
                for (int c = 0; c < 3; ++c) out[dd * 3 + c] = a[dd][c];
            }
      },
      threads);
  gather(v, adj, 3, bases().first, weight / count, grad, threads);
}

}  // namespace evk::reg_deform
