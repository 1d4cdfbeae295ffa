// `register`'s stages one at a time against naive host versions on small odd-sized volumes:
// (1) field rows vs the exact field, (2) warp + spatial gradient, (3) joint histogram + NMI / SSD,
// (4) voxel-wise gradient (finite differences of exact-Parzen NMI and of SSD), (5) B-spline adjoint
// (inner-product identity + direct sums), (6) penalties (values on known transformations, gradients
// by finite differences), (7) the optimiser's line search and counters, and the grid refinement.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/field/field_cpu.hpp"
#include "core/register/reg_adjoint_cpu.hpp"
#include "core/register/reg_field_cpu.hpp"
#include "core/register/reg_grid.hpp"
#include "core/register/reg_jacobian_cpu.hpp"
#include "core/register/reg_measure_cpu.hpp"
#include "core/register/reg_measure_grad_cpu.hpp"
#include "core/register/reg_optimiser.hpp"
#include "core/register/reg_penalty_cpu.hpp"
#include "core/register/reg_warp_cpu.hpp"
#include "register_fixtures.hpp"

namespace rd = evk::reg_deform;
using rd::testing::blobs;
using rd::testing::oblique;
using rd::testing::random_grid;
using rd::testing::uniform;

namespace {
rd::Mask holes(const rd::Geometry& g) {
  rd::Mask m(g.voxels());
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) m[g.index(x, y, z)] = ((x * 7 + y * 3 + z) % 11) != 0;
  return m;
}
}  // namespace

// ---- (1) field ---------------------------------------------------------------------------------
TEST(RegStages, FieldRowsMatchTheExactField) {
  const rd::Geometry ref = oblique(23, 19, 17);
  const rd::Mask mask = holes(ref);
  for (auto s : {std::array<double, 3>{5, 5, 5}, std::array<double, 3>{4, 3, 2.5}}) {
    const rd::Grid grid = random_grid(ref, s, 3.0, 7);
    const rd::Field want = rd::compute_field_cpu(ref, grid, mask);
    std::vector<float> got(3 * ref.voxels(), std::numeric_limits<float>::quiet_NaN());
    rd::spline_field_cpu(ref, grid, mask, got.data(), 2);
    double worst = 0;
    std::size_t unset = 0;
    for (std::size_t v = 0; v < ref.voxels(); ++v) {
      if (!mask[v]) continue;
      for (int a = 0; a < 3; ++a) {
        const float x = got[a * ref.voxels() + v];
        if (!std::isfinite(x)) ++unset;
        else worst = std::max(worst, double(std::fabs(x - want.data[a * ref.voxels() + v])));
      }
    }
    EXPECT_EQ(unset, 0u);
    EXPECT_LT(worst, 1e-4) << "spacing " << s[0] << "," << s[1] << "," << s[2];  // float output, ~30 mm values
  }
}

// ---- (2) warp --------------------------------------------------------------------------------
namespace {
// Trilinear value at floating voxel position q, NaN when the 2x2x2 stencil leaves the image.
double naive_trilinear(const rd::Volume& f, double qx, double qy, double qz) {
  const int x0 = static_cast<int>(std::floor(qx)), y0 = static_cast<int>(std::floor(qy)), z0 = static_cast<int>(std::floor(qz));
  if (x0 < 0 || y0 < 0 || z0 < 0 || x0 + 1 >= f.geo.nx || y0 + 1 >= f.geo.ny || z0 + 1 >= f.geo.nz)
    return std::numeric_limits<double>::quiet_NaN();
  double s = 0;
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b)
      for (int a = 0; a < 2; ++a) {
        const double w = (a ? qx - x0 : 1 - (qx - x0)) * (b ? qy - y0 : 1 - (qy - y0)) * (c ? qz - z0 : 1 - (qz - z0));
        s += w * f.data[f.geo.index(x0 + a, y0 + b, z0 + c)];
      }
  return s;
}
}  // namespace

TEST(RegStages, WarpAndGradientMatchNaive) {
  const rd::Volume flo = blobs(oblique(21, 25, 19, 1.2, 1.0, 0.8), 3);
  const rd::Geometry ref = oblique(17, 15, 13, 1.5, 1.5, 1.5);
  const rd::Mask mask = holes(ref);
  const rd::Grid grid = random_grid(ref, {4, 4, 4}, 4.0, 11);
  const rd::Field field = rd::compute_field_cpu(ref, grid);
  const std::size_t nv = ref.voxels();
  rd::Mask fmask(flo.geo.voxels(), 1);
  for (int z = 0; z < flo.geo.nz; ++z)
    for (int y = 0; y < flo.geo.ny; ++y) fmask[flo.geo.index(3, y, z)] = 0;  // a plane left out
  std::vector<float> warped(nv), grad(3 * nv);
  rd::warp_field_cpu(flo, fmask, ref, mask, field.data.data(), warped.data(), grad.data(), 2);
  const rd::Mat44 w2v = flo.geo.vox2world.inverse();
  std::size_t nan_naive = 0, nan_got = 0, checked = 0;
  for (std::size_t v = 0; v < nv; ++v) {
    nan_got += std::isnan(warped[v]);
    const double p[3] = {field.data[v], field.data[nv + v], field.data[2 * nv + v]};
    const auto q = w2v.apply(p[0], p[1], p[2]);
    double want = naive_trilinear(flo, q[0], q[1], q[2]);
    if (!mask[v]) want = std::numeric_limits<double>::quiet_NaN();
    if (std::isfinite(want) && !fmask[flo.geo.index(static_cast<int>(std::lround(q[0])), static_cast<int>(std::lround(q[1])),
                                                    static_cast<int>(std::lround(q[2])))])
      want = std::numeric_limits<double>::quiet_NaN();
    if (std::isnan(want)) {
      ++nan_naive;
      EXPECT_TRUE(std::isnan(warped[v])) << v;
      for (int a = 0; a < 3; ++a) EXPECT_EQ(grad[a * nv + v], 0.0f);
      continue;
    }
    ++checked;
    ASSERT_NEAR(warped[v], want, 1e-4 * (1 + std::fabs(want))) << v;
    // world gradient by central differences of the naive interpolant (piecewise linear: exact
    // unless a cell face lies within h)
    const double h = 1e-6;
    for (int a = 0; a < 3; ++a) {
      double pp[3] = {p[0], p[1], p[2]}, pm[3] = {p[0], p[1], p[2]};
      pp[a] += h;
      pm[a] -= h;
      const auto qp = w2v.apply(pp[0], pp[1], pp[2]), qm = w2v.apply(pm[0], pm[1], pm[2]);
      const double fd = (naive_trilinear(flo, qp[0], qp[1], qp[2]) - naive_trilinear(flo, qm[0], qm[1], qm[2])) / (2 * h);
      if (std::isfinite(fd)) {
        EXPECT_NEAR(grad[a * nv + v], fd, 1e-3 * (1 + std::fabs(fd))) << v << " axis " << a;
      }
    }
  }
  EXPECT_EQ(nan_got, nan_naive);
  EXPECT_GT(checked, nv / 3);        // most voxels are inside
  EXPECT_GT(nan_naive, nv / 20);     // and some are not (mask holes, edges, the left-out plane)
}

// ---- (3) histogram + NMI + SSD ------------------------------------------------------------------
TEST(RegStages, JointHistogramAndNmiMatchNaive) {
  const int nb = 68;
  const std::size_t n = 2001;
  std::vector<float> r(n), w(n);
  std::uint64_t s = 5;
  for (std::size_t i = 0; i < n; ++i) {
    r[i] = static_cast<float>(uniform(s, 2, 65));
    w[i] = static_cast<float>(std::clamp(0.7 * r[i] + uniform(s, -6, 9), 2.0, 65.0));
  }
  w[7] = std::numeric_limits<float>::quiet_NaN();
  rd::Mask mask(n, 1);
  mask[9] = 0;
  std::vector<double> counts;
  rd::nmi_counts_cpu(r.data(), w.data(), mask, n, nb, counts, 2);
  std::vector<double> naive(static_cast<std::size_t>(nb) * nb, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (i != 7 && i != 9) naive[static_cast<int>(r[i]) + nb * static_cast<int>(w[i])] += 1;
  ASSERT_EQ(counts, naive);
  rd::NmiHistogram h;
  rd::nmi_from_counts(counts, nb, h);
  // naive: 2-D convolution with the 3x3 outer product of [1/6, 2/3, 1/6], then entropies
  const double k[3] = {1.0 / 6, 2.0 / 3, 1.0 / 6};
  std::vector<double> p(naive.size(), 0);
  double tot = 0;
  for (int b = 0; b < nb; ++b)
    for (int a = 0; a < nb; ++a) {
      double v = 0;
      for (int j = -1; j <= 1; ++j)
        for (int i = -1; i <= 1; ++i)
          if (a + i >= 0 && a + i < nb && b + j >= 0 && b + j < nb) v += k[i + 1] * k[j + 1] * naive[(a + i) + nb * (b + j)];
      p[a + nb * b] = v;
      tot += v;
    }
  double hr = 0, hw = 0, hj = 0;
  for (int a = 0; a < nb; ++a) {
    double pr = 0, pw = 0;
    for (int b = 0; b < nb; ++b) {
      pr += p[a + nb * b] / tot;
      pw += p[b + nb * a] / tot;
    }
    if (pr > 0) hr -= pr * std::log(pr);
    if (pw > 0) hw -= pw * std::log(pw);
  }
  for (double v : p)
    if (v > 0) hj -= v / tot * std::log(v / tot);
  EXPECT_NEAR(h.total, 1999.0, 1e-9);  // no mass leaves the histogram for values in [2, 65]
  EXPECT_NEAR(h.h_ref, hr, 1e-12);
  EXPECT_NEAR(h.h_war, hw, 1e-12);
  EXPECT_NEAR(h.h_joint, hj, 1e-12);
  EXPECT_NEAR(h.nmi(), (hr + hw) / hj, 1e-12);
  EXPECT_GT(h.nmi(), 1.0);
  // SSD
  std::size_t valid = 0;
  const double ssd = rd::ssd_value_cpu(r.data(), w.data(), mask, n, &valid, 2);
  double want = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (i != 7 && i != 9) want += (double(r[i]) - w[i]) * (double(r[i]) - w[i]);
  EXPECT_EQ(valid, 1999u);
  EXPECT_NEAR(ssd, -want / 1999, 1e-9 * want);
}

TEST(RegStages, RescalingIsReg_f3ds) {
  rd::Volume a;
  a.geo = rd::Geometry::make(3, 2, 1);
  a.data = {10, 20, 30, 40, 50, 110};
  rd::Volume b = a;
  rd::rescale_for_nmi(a, 64);
  EXPECT_FLOAT_EQ(a.data[0], 2.0f);
  EXPECT_FLOAT_EQ(a.data[5], 65.0f);
  EXPECT_FLOAT_EQ(a.data[1], 2.0f + 63.0f * 0.1f);
  rd::Volume c = b;
  for (auto& x : c.data) x *= 0.5f;  // joint range 5 .. 110
  rd::rescale_for_ssd(b, c);
  EXPECT_FLOAT_EQ(b.data[5], 1.0f);
  EXPECT_FLOAT_EQ(c.data[0], 0.0f);
  EXPECT_NEAR(b.data[0], 5.0 / 105, 1e-7);
}

// ---- (4) voxel-wise gradient ---------------------------------------------------------------------
namespace {
// Exact cubic B-spline Parzen-window NMI (no approximation) and its histogram.
rd::NmiHistogram exact_parzen(const std::vector<float>& r, const std::vector<float>& w, int nb) {
  std::vector<double> p(static_cast<std::size_t>(nb) * nb, 0);
  for (std::size_t i = 0; i < r.size(); ++i)
    for (int a = 0; a < nb; ++a)
      for (int b = 0; b < nb; ++b) p[a + nb * b] += rd::spline_basis(r[i] - a) * rd::spline_basis(w[i] - b);
  rd::NmiHistogram h;
  h.nb = nb;
  const std::size_t nj = p.size();
  h.prob.assign(nj + 2 * nb, 0);
  h.logp.assign(nj + 2 * nb, 0);
  h.total = static_cast<double>(r.size());
  for (std::size_t i = 0; i < nj; ++i) h.prob[i] = p[i] / h.total;
  for (int a = 0; a < nb; ++a)
    for (int b = 0; b < nb; ++b) {
      h.prob[nj + a] += h.prob[a + nb * b];
      h.prob[nj + nb + b] += h.prob[a + nb * b];
    }
  for (std::size_t i = 0; i < h.prob.size(); ++i)
    if (h.prob[i] > 0) h.logp[i] = std::log(h.prob[i]);
  for (int a = 0; a < nb; ++a) {
    if (h.prob[nj + a] > 0) h.h_ref -= h.prob[nj + a] * h.logp[nj + a];
    if (h.prob[nj + nb + a] > 0) h.h_war -= h.prob[nj + nb + a] * h.logp[nj + nb + a];
  }
  for (std::size_t i = 0; i < nj; ++i)
    if (h.prob[i] > 0) h.h_joint -= h.prob[i] * h.logp[i];
  return h;
}
}  // namespace

TEST(RegStages, NmiVoxelGradientIsTheParzenDerivative) {
  const int nb = 20;  // 16 bins + 4
  const std::size_t n = 300;
  std::vector<float> r(n), w(n);
  std::uint64_t s = 9;
  for (std::size_t i = 0; i < n; ++i) {
    r[i] = static_cast<float>(uniform(s, 2, 17));
    w[i] = static_cast<float>(std::clamp(0.5 * r[i] + 4 + uniform(s, -3, 3), 2.0, 17.0));
  }
  const rd::NmiHistogram h = exact_parzen(r, w, nb);
  std::vector<float> grad(3 * n, 0.0f), out(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    grad[i] = 1.0f;          // x: the intensity derivative itself
    grad[n + i] = 2.0f;      // y: scaled by 2
    grad[2 * n + i] = -0.5f;
  }
  rd::nmi_voxel_gradient_cpu(r.data(), w.data(), grad.data(), {}, n, h, out.data(), 2);
  for (std::size_t v : {0u, 17u, 123u, 299u}) {
    const double eps = 1e-3;
    std::vector<float> wp = w, wm = w;
    wp[v] += static_cast<float>(eps);
    wm[v] -= static_cast<float>(eps);
    const double step = double(wp[v]) - double(wm[v]);
    const double d = (exact_parzen(r, wp, nb).nmi() - exact_parzen(r, wm, nb).nmi()) / step;
    EXPECT_NEAR(out[v], -d, 2e-3 * std::fabs(d) + 1e-9) << v;  // reg_f3d's sign: -dNMI/dW * grad W
    EXPECT_NEAR(out[n + v], -2 * d, 4e-3 * std::fabs(d) + 1e-9);
    EXPECT_NEAR(out[2 * n + v], 0.5 * d, 1e-3 * std::fabs(d) + 1e-9);
  }
}

TEST(RegStages, SsdVoxelGradientIsTheDerivative) {
  const std::size_t n = 50;
  std::vector<float> r(n), w(n), grad(3 * n, 1.0f), out(3 * n);
  std::uint64_t s = 3;
  for (std::size_t i = 0; i < n; ++i) {
    r[i] = static_cast<float>(uniform(s, 0, 1));
    w[i] = static_cast<float>(uniform(s, 0, 1));
  }
  rd::ssd_voxel_gradient_cpu(r.data(), w.data(), grad.data(), {}, n, n, out.data());
  for (std::size_t v : {1u, 20u, 49u}) {
    const float eps = 1e-3f;
    std::vector<float> wp = w, wm = w;
    wp[v] += eps;
    wm[v] -= eps;
    const double d = (rd::ssd_value_cpu(r.data(), wp.data(), {}, n, nullptr) - rd::ssd_value_cpu(r.data(), wm.data(), {}, n, nullptr)) /
                     (double(wp[v]) - double(wm[v]));
    EXPECT_NEAR(out[v], -d, 1e-4 * std::fabs(d) + 1e-7) << v;
  }
}

// ---- (5) adjoint ----------------------------------------------------------------------------------
TEST(RegStages, AdjointIsTheTransposeOfTheField) {
  const rd::Geometry ref = oblique(19, 17, 13);
  for (auto s : {std::array<double, 3>{5, 5, 5}, std::array<double, 3>{3.5, 4, 2.5}}) {
    rd::Grid c = rd::make_grid3(ref, s);
    std::uint64_t st = 21;
    for (auto& x : c.data) x = static_cast<float>(uniform(st, -1, 1));
    std::vector<float> fc(3 * ref.voxels()), g(3 * ref.voxels());
    rd::spline_field_cpu(ref, c, {}, fc.data());
    for (auto& x : g) x = static_cast<float>(uniform(st, -1, 1));
    std::vector<double> ag(3 * c.points());
    rd::spline_adjoint_cpu(ref, c, g.data(), ag.data(), 2);
    double lhs = 0, rhs = 0, mag = 0;
    for (std::size_t i = 0; i < fc.size(); ++i) {
      lhs += double(fc[i]) * g[i];
      mag += std::fabs(double(fc[i]) * g[i]);
    }
    for (std::size_t i = 0; i < ag.size(); ++i) rhs += c.data[i] * ag[i];
    EXPECT_NEAR(lhs, rhs, 1e-6 * mag);
    // a few nodes by the direct sum over voxels
    for (int node : {0, 37, static_cast<int>(c.points()) - 1}) {
      const int ni = node % c.geo.nx, nj = (node / c.geo.nx) % c.geo.ny, nk = node / (c.geo.nx * c.geo.ny);
      double direct = 0;
      for (int z = 0; z < ref.nz; ++z)
        for (int y = 0; y < ref.ny; ++y)
          for (int x = 0; x < ref.nx; ++x) {
            const rd::AxisWeights ax = rd::axis_weights_at(x, s[0]), ay = rd::axis_weights_at(y, s[1]),
                                  az = rd::axis_weights_at(z, s[2]);
            const int a = ni - ax.i0, b = nj - ay.i0, cc = nk - az.i0;
            if (a < 0 || a > 3 || b < 0 || b > 3 || cc < 0 || cc > 3) continue;
            direct += ax.w[a] * ay.w[b] * az.w[cc] * g[ref.voxels() + ref.index(x, y, z)];  // y component
          }
      EXPECT_NEAR(ag[c.points() + node], direct, 1e-9 * (1 + std::fabs(direct))) << node;
    }
  }
}

// ---- (6) penalties -------------------------------------------------------------------------------
namespace {
rd::Grid affine_grid(const rd::Geometry& ref, const rd::Mat44& a) { return rd::make_grid3(ref, {3, 3, 3}, a); }
}  // namespace

TEST(RegStages, PenaltyValuesOnKnownTransformations) {
  const rd::Geometry ref = oblique(13, 11, 9, 2, 2, 2);
  const rd::Grid id = affine_grid(ref, rd::Mat44::identity());
  EXPECT_NEAR(rd::bending_energy(id), 0, 1e-9);
  EXPECT_NEAR(rd::linear_energy(id), 0, 1e-9);
  EXPECT_NEAR(rd::jacobian_log_penalty(id), 0, 1e-9);
  rd::Mat44 rot;  // a rotation: no bending, no stretch, det 1
  const double t = 0.3;
  rot.m[0][0] = std::cos(t), rot.m[0][1] = -std::sin(t), rot.m[1][0] = std::sin(t), rot.m[1][1] = std::cos(t);
  rot.m[0][3] = 4;
  const rd::Grid rg = affine_grid(ref, rot);
  EXPECT_NEAR(rd::bending_energy(rg), 0, 1e-6);
  EXPECT_NEAR(rd::linear_energy(rg), 0, 1e-6);
  EXPECT_NEAR(rd::jacobian_log_penalty(rg), 0, 1e-6);
  const rd::Grid sg = affine_grid(ref, rd::Mat44::diag(1.1, 1.1, 1.1));  // uniform scaling
  const double interior = double(id.geo.nx - 2) * (id.geo.ny - 2) * (id.geo.nz - 2);
  EXPECT_NEAR(rd::linear_energy(sg), 3 * 0.01 * interior / (3.0 * id.points()), 1e-6);
  EXPECT_NEAR(rd::jacobian_log_penalty(sg), std::pow(std::log(1.331), 2), 1e-5);
  EXPECT_NEAR(rd::bending_energy(sg), 0, 1e-6);
  // a folded node: a large finite Jacobian penalty (log(0.05)^2 ~ 9 per folded node at least),
  // whose gradient leads out of the fold (finite differences below)
  rd::Grid fold = id;
  const std::size_t c = id.geo.index(3, 3, 3);
  fold.data[c] += 60;  // x of one node far beyond its neighbours
  EXPECT_LT(rd::min_node_jacobian(fold), 0);
  const double interior_nodes = double(id.geo.nx - 2) * (id.geo.ny - 2) * (id.geo.nz - 2);
  EXPECT_TRUE(std::isfinite(rd::jacobian_log_penalty(fold)));
  EXPECT_GT(rd::jacobian_log_penalty(fold), 8.9 / interior_nodes);
  std::vector<double> jg(fold.data.size(), 0.0);
  rd::jacobian_log_gradient(fold, 1.0, jg.data());
  rd::Grid stepped = fold;
  for (std::size_t i = 0; i < jg.size(); ++i) stepped.data[i] = static_cast<float>(fold.data[i] - 0.5 * jg[i] / std::fabs(jg[c]));
  EXPECT_LT(rd::jacobian_log_penalty(stepped), rd::jacobian_log_penalty(fold));
}

TEST(RegStages, PenaltyGradientsMatchFiniteDifferences) {
  const rd::Geometry ref = oblique(13, 11, 9, 2, 2, 2);
  for (bool folded : {false, true}) {
  rd::Grid g = random_grid(ref, {3, 3, 3}, 1.0, 5);
  if (folded) g.data[g.geo.index(3, 3, 3)] += 60;  // folded nodes: the Jacobian term's continuation
  using Val = double (*)(const rd::Grid&, int);
  using Grad = void (*)(const rd::Grid&, double, double*, int);
  const struct {
    const char* name;
    Val val;
    Grad grad;
  } terms[] = {{"bending", rd::bending_energy, rd::bending_energy_gradient},
               {"linear", rd::linear_energy, rd::linear_energy_gradient},
               {"jacobian", rd::jacobian_log_penalty, rd::jacobian_log_gradient}};
  for (const auto& t : terms) {
    std::vector<double> grad(g.data.size(), 0.0);
    t.grad(g, 2.0, grad.data(), 2);  // weight 2
    double gmax = 0;
    for (double x : grad) gmax = std::max(gmax, std::fabs(x));
    ASSERT_GT(gmax, 0) << t.name;
    std::uint64_t s = 77;
    for (int k = 0; k < 60; ++k) {
      const std::size_t i = rd::testing::next(s) % g.data.size();
      const float h = 1.0f / 64;
      rd::Grid gp = g, gm = g;
      gp.data[i] += h;
      gm.data[i] -= h;
      const double fd = 2.0 * (t.val(gp, 1) - t.val(gm, 1)) / (double(gp.data[i]) - double(gm.data[i]));
      EXPECT_NEAR(grad[i], fd, 2e-3 * gmax + 1e-3 * std::fabs(fd)) << t.name << " coordinate " << i << (folded ? " folded" : "");
    }
  }
  }
}

TEST(RegStages, PolarRotationIsOrthogonalAndRecoversTheStretch) {
  const double J[3][3] = {{1.2, 0.3, -0.1}, {-0.2, 0.9, 0.25}, {0.05, 0.1, 1.1}};
  double R[3][3];
  rd::polar_rotation(J, R);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double rtr = 0, u = 0, ut = 0;
      for (int k = 0; k < 3; ++k) {
        rtr += R[k][i] * R[k][j];
        u += R[k][i] * J[k][j];   // U = R^T J
        ut += R[k][j] * J[k][i];  // U^T
      }
      EXPECT_NEAR(rtr, i == j ? 1 : 0, 1e-12);
      EXPECT_NEAR(u, ut, 1e-12);  // symmetric
    }
}

// ---- (7) optimiser ---------------------------------------------------------------------------
namespace {
// objective = -sum a_i (x_i - t_i)^2 on 3-vectors
struct Quadratic final : rd::OptimiserProblem {
  rd::HostVectors v;
  std::vector<double> a, t;
  bool flat = false;  // objective never improves
  explicit Quadratic(std::size_t n) {
    v.resize(n);
    a.resize(n);
    t.resize(n);
    std::uint64_t s = 1;
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = uniform(s, 0.5, 3);
      t[i] = uniform(s, -2, 2);
      v.current[i] = 0;
    }
  }
  double objective() override {
    if (flat) return 0;
    double f = 0;
    for (std::size_t i = 0; i < a.size(); ++i) f -= a[i] * (v.current[i] - t[i]) * (v.current[i] - t[i]);
    return f;
  }
  void gradient() override {
    for (std::size_t i = 0; i < a.size(); ++i) v.grad[i] = static_cast<float>(2 * a[i] * (v.current[i] - t[i]));
  }
  double max_gradient_length() override { return v.max_length(); }
  void scale_gradient(double f) override { v.scale(f); }
  void conjugate(bool first) override { v.conjugate(first); }
  void store_best() override { v.store_best(); }
  void restore_best() override { v.restore_best(); }
  void step_from_best(double s) override { v.step_from_best(s); }
};
}  // namespace

TEST(RegStages, OptimiserConvergesOnAQuadratic) {
  Quadratic q(30);
  rd::OptimiserSettings s;
  s.max_step = 1;
  s.max_iterations = 400;
  const auto tr = rd::optimise_level(q, s);
  double worst = 0;
  for (std::size_t i = 0; i < q.t.size(); ++i) worst = std::max(worst, std::fabs(q.v.current[i] - q.t[i]));
  EXPECT_LT(worst, 0.02);  // the line search stops at max_step / 100
  EXPECT_LE(tr.iterations, 400);
  EXPECT_NEAR(tr.best, q.objective(), 1e-12);  // the current parameters are the best ones
}

TEST(RegStages, OptimiserCountsLikeReg_f3d) {
  Quadratic q(9);
  q.flat = true;
  rd::OptimiserSettings s;
  s.max_step = 1;
  s.max_iterations = 100;
  const auto tr = rd::optimise_level(q, s);
  // gradient + 7 halvings (1 .. 1/64 > 1/100), a restart, the same again, then the level ends
  EXPECT_EQ(tr.iterations, 16);
  EXPECT_EQ(tr.gradients, 2);
  EXPECT_EQ(tr.objectives, 15);
  for (float x : q.v.current) EXPECT_EQ(x, 0.0f);  // nothing accepted: back at the start
  Quadratic r(9);
  s.max_iterations = 5;
  EXPECT_EQ(rd::optimise_level(r, s).iterations, 5);  // the limit counts line-search trials too
}

// ---- grids ---------------------------------------------------------------------------------------
TEST(RegStages, RefinementKeepsTheTransformation) {
  const rd::Geometry ref = oblique(31, 27, 23);
  const rd::Grid coarse = random_grid(ref, {10, 10, 10}, 4.0, 3);
  const rd::Grid fine = rd::refine_grid(coarse, ref);
  EXPECT_DOUBLE_EQ(fine.sx, 5.0);
  EXPECT_EQ(fine.geo.nx, rd::grid_points_niftyreg(31, 5));
  const rd::Field a = rd::compute_field_cpu(ref, coarse), b = rd::compute_field_cpu(ref, fine);
  double worst = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) worst = std::max(worst, double(std::fabs(a.data[i] - b.data[i])));
  EXPECT_LT(worst, 1e-4);
  // an affine grid stays exactly affine after refinement, control points beyond the image too
  rd::Mat44 aff = rd::Mat44::diag(1.05, 0.95, 1.1);
  aff.m[0][1] = 0.05;
  aff.m[2][3] = 3;
  const rd::Grid fa = rd::refine_grid(rd::make_grid3(ref, {10, 10, 10}, aff), ref);
  const rd::Grid want = rd::make_grid3(ref, {5, 5, 5}, aff);
  ASSERT_EQ(fa.data.size(), want.data.size());
  for (std::size_t i = 0; i < fa.data.size(); ++i) ASSERT_NEAR(fa.data[i], want.data[i], 1e-4) << i;
}

TEST(RegStages, VoxelJacobianMatchesDirectSum) {
  const rd::Geometry ref = oblique(15, 13, 11);
  const rd::Grid g = random_grid(ref, {4, 4, 4}, 1.0, 8);
  const auto st = rd::voxel_jacobian_stats(ref, g, {}, 2);
  double lo = 1e9;
  for (int z = 0; z < ref.nz; ++z)
    for (int y = 0; y < ref.ny; ++y)
      for (int x = 0; x < ref.nx; ++x) lo = std::min(lo, rd::voxel_jacobian(ref, g, x, y, z));
  EXPECT_NEAR(st.min, lo, 1e-9);
  EXPECT_EQ(st.voxels, ref.voxels());
  const auto id = rd::voxel_jacobian_stats(ref, rd::make_grid3(ref, {4, 4, 4}), {}, 2);
  EXPECT_NEAR(id.min, 1.0, 1e-5);
  EXPECT_NEAR(id.max, 1.0, 1e-5);
}
