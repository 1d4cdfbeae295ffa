// reg_deform affine, CPU: each stage against independent facts (exact point fits, outlier
// rejection, known integer shifts found by the block matching, hand-computed initialisations), then
// known-transform recovery on a small textured head phantom (random rigid and affine transforms in
// the ranges), and the CLI's bad inputs.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>

#include "core/affine/affine_init.hpp"
#include "core/affine/affine_lts.hpp"
#include "core/affine/affine_reg.hpp"
#include "io/affine_text.hpp"
#include "core/affine/block_match.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "io/nifti_io.hpp"
#include "core/pyramid.hpp"
#include "core/register/reg_register.hpp"
#include "core/affine/warp_affine.hpp"
#include "affine_phantom.hpp"

namespace rd = evk::reg_deform;
using namespace evk::reg_deform::testing;
namespace fs = std::filesystem;
using evk::testing::run_tool;

namespace {
double max_abs_diff(const rd::Mat44& a, const rd::Mat44& b) {
  double d = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) d = std::max(d, std::fabs(a.m[i][j] - b.m[i][j]));
  return d;
}
}  // namespace

TEST(RegAffine, PointFitsAreExact) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-60, 60);
  for (bool affine : {false, true}) {
    const rd::Mat44 t = random_transform(rng, affine);
    std::vector<rd::Point3> from, to;
    for (int i = 0; i < 50; ++i) {
      from.push_back({u(rng), u(rng), u(rng)});
      const auto p = t.apply(from.back()[0], from.back()[1], from.back()[2]);
      to.push_back({p[0], p[1], p[2]});
    }
    const rd::Mat44 f = affine ? rd::fit_affine(from, to) : rd::fit_rigid(from, to);
    EXPECT_LT(max_abs_diff(f, t), 1e-9) << (affine ? "affine" : "rigid");
    // 40 % gross outliers: LTS with 50 % inliers still recovers the transform exactly.
    for (int i = 0; i < 20; ++i) to[i] = {u(rng), u(rng), u(rng)};
    const rd::LtsResult r = rd::fit_lts(from, to, 50, affine);
    EXPECT_LT(max_abs_diff(r.m, t), 1e-6) << (affine ? "affine" : "rigid");
    EXPECT_EQ(r.kept, 25);
    // reg_aladin's stopping rule: once the trimmed set is exact its sum of distances stops falling.
    EXPECT_LT(r.trimmed_sum, 1e-6);
    EXPECT_GE(r.refits, 1);
    EXPECT_LT(r.refits, 30);
    // Plain least squares on the same points is far off (the test can fail).
    EXPECT_GT(max_abs_diff(affine ? rd::fit_affine(from, to) : rd::fit_rigid(from, to), t), 1e-2);
  }
  std::vector<rd::Point3> few(5, {0, 0, 0});
  EXPECT_THROW(rd::fit_lts(few, few, 50, true), evk::InputError);   // affine needs 8
  EXPECT_THROW(rd::fit_lts(std::vector<rd::Point3>(3), std::vector<rd::Point3>(3), 50, false), evk::InputError);
}

namespace {
// The sum of the `keep` smallest distances |m(from_i) - to_i| (a full sort: independent of fit_lts's
// selection and of its order of summation).
double trimmed_sum_under(const rd::Mat44& m, const std::vector<rd::Point3>& from, const std::vector<rd::Point3>& to,
                         std::size_t keep) {
  std::vector<double> d;
  for (std::size_t i = 0; i < from.size(); ++i) {
    const auto p = m.apply(from[i][0], from[i][1], from[i][2]);
    d.push_back(std::sqrt((p[0] - to[i][0]) * (p[0] - to[i][0]) + (p[1] - to[i][1]) * (p[1] - to[i][1]) +
                          (p[2] - to[i][2]) * (p[2] - to[i][2])));
  }
  std::sort(d.begin(), d.end());
  double s = 0;
  for (std::size_t i = 0; i < keep; ++i) s += d[i];
  return s;
}
}  // namespace

// fit_lts against what least trimmed squares promises, whatever its implementation (columns, radix
// selection, kept index list), on point sets like the block matching's (grid centres, integer
// displacements: many equal residuals, ties at the threshold) and continuous ones, small and large:
// - it keeps the documented count: clamp(n * pi / 100, 3 rigid | 4 affine, n);
// - its trimmed sum is the sum of the kept smallest distances under the matrix it returns (when it
//   stopped before its 30 refits), and never above the same sum under the plain fit of all points;
// - with 30 % outliers and 50 % kept, exact inliers give the planted transform and noisy ones (0.3 mm)
//   give it within the noise.
TEST(RegAffine, LtsKeepsItsPromises) {
  std::mt19937_64 rng(11);
  int cases = 0, with_ties = 0, max_refits = 0, refused = 0;
  for (std::size_t n : {8u, 9u, 40u, 500u, 1025u, 3000u, 33000u}) {
    for (int kind = 0; kind < 4; ++kind) {
      for (bool affine : {false, true}) {
        const rd::Mat44 t = random_transform(rng, affine);
        std::uniform_real_distribution<double> u(-80, 80);
        std::uniform_int_distribution<int> g(-20, 20), d(-3, 3), out(0, 9);
        std::normal_distribution<double> noise(0, 0.3);
        std::vector<rd::Point3> from(n), to(n);
        for (std::size_t i = 0; i < n; ++i) {
          // kind 0: continuous points, noise and 30 % outliers; 1: grid points with integer
          // displacements (block centres; many exact ties); 2: duplicated points (equal residuals);
          // 3: exact inliers and 30 % gross outliers.
          if (kind == 1) from[i] = {4.0 * g(rng) + 1.5, 4.0 * g(rng) + 1.5, 4.0 * g(rng) + 1.5};
          else if (kind == 2 && i % 3 != 0) from[i] = from[i - 1];
          else from[i] = {u(rng), u(rng), u(rng)};
          auto p = t.apply(from[i][0], from[i][1], from[i][2]);
          if (kind == 1) {
            p = {from[i][0] + d(rng), from[i][1] + d(rng), from[i][2] + d(rng)};
          } else if (kind == 2 && i % 3 != 0) {
            p = {to[i - 1][0], to[i - 1][1], to[i - 1][2]};
          } else if (kind == 3) {
            if (i % 10 < 3) p = {u(rng), u(rng), u(rng)};
          } else {
            for (auto& c : p) c += out(rng) < 3 ? u(rng) / 4 : noise(rng);
          }
          to[i] = {p[0], p[1], p[2]};
        }
        for (int pct : {50, 80}) {
          const std::string what = "n " + std::to_string(n) + " kind " + std::to_string(kind) +
                                   (affine ? " affine" : " rigid") + " pi " + std::to_string(pct);
          rd::LtsResult got;
          try {
            got = rd::fit_lts(from, to, pct, affine);
          } catch (const evk::InputError&) {  // degenerate (few distinct points)
            ++refused;
            continue;
          }
          const std::size_t keep = std::clamp<std::size_t>(n * pct / 100, affine ? 4 : 3, n);
          EXPECT_EQ(got.kept, static_cast<int>(keep)) << what;
          const double all = trimmed_sum_under(affine ? rd::fit_affine(from, to) : rd::fit_rigid(from, to), from, to, keep);
          EXPECT_LE(got.trimmed_sum, all * (1 + 1e-12) + 1e-12) << what;
          if (got.refits < 30)
            EXPECT_NEAR(got.trimmed_sum, trimmed_sum_under(got.m, from, to, keep), 1e-9 * (1 + got.trimmed_sum)) << what;
          if (kind == 3 && n >= 40 && pct == 50) EXPECT_LT(max_abs_diff(got.m, t), 1e-6) << what;
          if (kind == 0 && n >= 500 && pct == 50) EXPECT_LT(max_abs_diff(got.m, t), 0.3) << what;
          ++cases;
          with_ties += kind == 1 || kind == 2;
          max_refits = std::max(max_refits, got.refits);
        }
      }
    }
  }
  EXPECT_EQ(cases + refused, 112);
  EXPECT_LE(refused, 4);
  EXPECT_GE(with_ties, 40);
  EXPECT_GE(max_refits, 3);  // the cases do refit (the checks cover the loop, not only the first fit)
}

TEST(RegAffine, LogEuclideanAverage) {
  rd::Mat44 a, b;
  a.m[0][3] = 2, a.m[1][3] = -4;
  b.m[0][3] = 6, b.m[2][3] = 8;
  rd::Mat44 m = rd::average_log_euclidean(a, b);  // translations: the arithmetic mean
  EXPECT_NEAR(m.m[0][3], 4, 1e-9);
  EXPECT_NEAR(m.m[1][3], -2, 1e-9);
  EXPECT_NEAR(m.m[2][3], 4, 1e-9);
  // Rotations about one axis by 10 and 30 degrees: rotation by 20 degrees.
  m = rd::average_log_euclidean(rotation(0, 0, 10 * kPi / 180), rotation(0, 0, 30 * kPi / 180));
  EXPECT_LT(max_abs_diff(m, rotation(0, 0, 20 * kPi / 180)), 1e-9);
  // A matrix with its own inverse's inverse: itself.
  std::mt19937_64 rng(5);
  const rd::Mat44 t = random_transform(rng, true);
  EXPECT_LT(max_abs_diff(rd::average_log_euclidean(t, t.inverse().inverse()), t), 1e-9);
  EXPECT_EQ(m.m[3][3], 1.0);
}

// select_blocks against a plain reference (every voxel bounds-checked, variances over the usable
// voxels in z, y, x order, stable sort by variance): odd sizes (partial blocks at the far faces),
// NaN voxels, a mask, flat regions and repeated textures (equal variances: index order).
TEST(RegAffine, BlockSelectionEqualsPlainReference) {
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<float> u(0, 100);
  for (int k = 0; k < 4; ++k) {
    rd::Volume v;
    v.geo = rd::Geometry::make(17 + 6 * k, 13 + 3 * k, 11 + 5 * k);
    v.data.resize(v.geo.voxels());
    for (int z = 0; z < v.geo.nz; ++z)
      for (int y = 0; y < v.geo.ny; ++y)
        for (int x = 0; x < v.geo.nx; ++x) {
          float val = u(rng);
          if (x < 8) val = 5.f;                                       // flat: unusable blocks
          if (y >= 8 && y < 12) val = static_cast<float>((x + z) % 3);  // a repeated texture: equal variances
          if ((x * 7 + y * 3 + z) % 29 == 0) val = std::numeric_limits<float>::quiet_NaN();
          v.data[v.geo.index(x, y, z)] = val;
        }
    rd::Mask mask(v.geo.voxels(), 1);
    for (std::size_t i = 0; i < mask.size(); i += 3) mask[i] = k % 2 == 0;  // k odd: every third voxel out
    for (const rd::Mask* m : {static_cast<const rd::Mask*>(nullptr), static_cast<const rd::Mask*>(&mask)}) {
      const rd::Mask mk = m ? *m : rd::Mask{};
      for (int pv : {30, 100}) {
        const rd::BlockLayout got = rd::select_blocks(v, mk, pv);
        const rd::Geometry& g = v.geo;
        std::vector<std::pair<double, int>> want;
        const int total = got.bx * got.by * got.bz;
        for (int b = 0; b < total; ++b) {
          int x0, y0, z0;
          got.corner(b, x0, y0, z0);
          std::vector<double> vals;
          for (int z = z0; z < z0 + 4; ++z)
            for (int y = y0; y < y0 + 4; ++y)
              for (int x = x0; x < x0 + 4; ++x) {
                if (x >= g.nx || y >= g.ny || z >= g.nz) continue;
                const std::size_t i = g.index(x, y, z);
                if (std::isfinite(v.data[i]) && (mk.empty() || mk[i])) vals.push_back(v.data[i]);
              }
          if (vals.size() <= 32) continue;
          double sum = 0, q = 0;
          for (double a : vals) sum += a;
          const double mean = sum / static_cast<double>(vals.size());
          for (double a : vals) q += (a - mean) * (a - mean);
          if (q > 0) want.push_back({q / static_cast<double>(vals.size()), b});
        }
        std::stable_sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        ASSERT_EQ(got.usable, static_cast<int>(want.size()));
        want.resize(std::min(want.size(), static_cast<std::size_t>(static_cast<double>(total) * pv / 100.0)));
        std::vector<int> ids;
        for (const auto& w : want) ids.push_back(w.second);
        EXPECT_EQ(got.active, ids) << "case " << k << " mask " << (m != nullptr) << " pv " << pv;
        EXPECT_GT(ids.size(), 4u);
      }
    }
  }
}

TEST(RegAffine, BlockSelectionByVariance) {
  // 8x8x8 = 2x2x2 blocks; block b holds values with variance growing with b, except block 5 (flat).
  rd::Volume v;
  v.geo = rd::Geometry::make(8, 8, 8);
  v.data.resize(v.geo.voxels());
  for (int z = 0; z < 8; ++z)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x) {
        const int b = (x / 4) + 2 * (y / 4) + 4 * (z / 4);
        v.data[v.geo.index(x, y, z)] = b == 5 ? 7.f : static_cast<float>((x + y + z) % 2 * (b + 1));
      }
  rd::BlockLayout l = rd::select_blocks(v, {}, 50);
  EXPECT_EQ(l.total(), 8);
  EXPECT_EQ(l.usable, 7);
  EXPECT_EQ(l.active, (std::vector<int>{7, 6, 4, 3}));
  l = rd::select_blocks(v, {}, 100);
  EXPECT_EQ(l.active, (std::vector<int>{7, 6, 4, 3, 2, 1, 0}));  // the flat block is never used
  // A mask leaving 32 voxels of block 7 (not more than half): block 7 becomes unusable.
  rd::Mask m(v.geo.voxels(), 1);
  for (int z = 4; z < 8; ++z)
    for (int y = 4; y < 8; ++y)
      for (int x = 4; x < 8; ++x)
        if (z >= 6) m[v.geo.index(x, y, z)] = 0;
  l = rd::select_blocks(v, m, 100);
  EXPECT_EQ(l.active.front(), 6);
  EXPECT_EQ(l.usable, 6);
}

TEST(RegAffine, BlockMatchingFindsKnownShifts) {
  const Phantom p = make_phantom(40, 2.0, 11);
  const rd::Geometry& g = p.v.geo;
  const rd::BlockLayout l = rd::select_blocks(p.v, {}, 50);
  ASSERT_GT(l.active.size(), 100u);
  for (const auto& s : std::vector<std::array<int, 3>>{{0, 0, 0}, {2, -1, 3}, {-3, 3, -2}}) {
    // warped(x + s) = ref(x): every block finds displacement s with NCC 1.
    std::vector<float> w(g.voxels(), std::nanf(""));
    for (int z = 0; z < g.nz; ++z)
      for (int y = 0; y < g.ny; ++y)
        for (int x = 0; x < g.nx; ++x) {
          const int X = x + s[0], Y = y + s[1], Z = z + s[2];
          if (X >= 0 && Y >= 0 && Z >= 0 && X < g.nx && Y < g.ny && Z < g.nz) w[g.index(X, Y, Z)] = p.v.data[g.index(x, y, z)];
        }
    const auto m = rd::match_blocks_cpu(p.v, {}, w, l, 2);
    // Blocks wholly inside the textured head (shell blocks are two-level steps: shifts along the
    // step tie at NCC 1) find exactly s.
    std::size_t exact = 0, inside = 0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      int x0, y0, z0;
      l.corner(l.active[i], x0, y0, z0);
      bool in = true;
      for (int k = 0; k < 64; ++k) in = in && p.head[g.index(x0 + k % 4, y0 + (k / 4) % 4, z0 + k / 16)];
      if (!in) continue;
      ++inside;
      exact += m[i].dx == s[0] && m[i].dy == s[1] && m[i].dz == s[2] && m[i].ncc > 0.999999f;
    }
    EXPECT_GT(inside, 60u);
    EXPECT_EQ(exact, inside) << s[0] << " " << s[1] << " " << s[2];
    EXPECT_NEAR(rd::block_ncc(p.v, {}, w, l.active[0], l, s[0], s[1], s[2]), 1.0, 1e-9);
    EXPECT_LT(rd::block_ncc(p.v, {}, w, l.active[0], l, s[0] == 0 ? 1 : 0, s[1], s[2]), 0.9999);
  }
}

TEST(RegAffine, SubvoxelOffsets) {
  EXPECT_EQ(rd::subvoxel_offset(0.5, 0.9, 0.5), 0.0);                 // symmetric peak
  EXPECT_NEAR(rd::subvoxel_offset(0.8, 0.9, 0.5), -0.3, 1e-12);      // (cm - cp) / (2 (cm - 2 c0 + cp))
  EXPECT_LT(rd::subvoxel_offset(0.8, 0.9, 0.5), 0.0);                 // towards the larger neighbour
  EXPECT_GT(rd::subvoxel_offset(0.5, 0.9, 0.8), 0.0);
  EXPECT_EQ(rd::subvoxel_offset(-1, 0.9, 0.8), 0.0);                  // a neighbour outside the range
  EXPECT_EQ(rd::subvoxel_offset(0.9, 0.9, 0.9), 0.0);                 // flat: no maximum
  EXPECT_EQ(rd::subvoxel_offset(0.9, 0.9, 0.1), -0.5);                // a tie with a neighbour: halfway
  // A fine random texture (noise smoothed with sigma 1 voxel) shifted by a fractional translation:
  // integer matches are off by 0.3, 0.4 and 0.25 voxel, the refined ones by less than half that.
  rd::Volume v;
  v.geo = rd::Geometry::make(36, 36, 36, 2.0, 2.0, 2.0);
  std::mt19937_64 rng(17);
  std::normal_distribution<float> noise(100.f, 30.f);
  std::vector<float> raw(v.geo.voxels());
  for (auto& x : raw) x = noise(rng);
  v.data = rd::gaussian_smooth(v.geo, raw, 1.0);
  const rd::Geometry& g = v.geo;
  const double s[3] = {1.3, -0.4, 2.25};  // voxels: warped(x + s) = ref(x)
  rd::Mat44 t;
  for (int a = 0; a < 3; ++a) t.m[a][3] = -s[a] * 2.0;  // ref2flo of the warp: warped(x) = ref(x - s)
  const std::vector<float> w = rd::warp_linear_cpu(g, v, t, 2);
  const rd::BlockLayout l = rd::select_blocks(v, {}, 100);
  const auto m = rd::match_blocks_cpu(v, {}, w, l, 2);
  double e_int = 0, e_sub = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    int x0, y0, z0;
    l.corner(l.active[i], x0, y0, z0);
    if (x0 < 4 || y0 < 4 || z0 < 4 || x0 > 28 || y0 > 28 || z0 > 28 || !(m[i].ncc > 0)) continue;  // all overlap
    const double d[3] = {double(m[i].dx), double(m[i].dy), double(m[i].dz)}, f[3] = {m[i].fx, m[i].fy, m[i].fz};
    for (int a = 0; a < 3; ++a) {
      e_int += std::fabs(d[a] - s[a]);
      e_sub += std::fabs(d[a] + f[a] - s[a]);
    }
    ++n;
  }
  ASSERT_GT(n, 30u);
  e_int /= 3.0 * n;
  e_sub /= 3.0 * n;
  std::printf("[ subvoxel ] %zu blocks: mean |error| per axis %.3f voxel integer, %.3f refined\n", n, e_int, e_sub);
  EXPECT_NEAR(e_int, (0.3 + 0.4 + 0.25) / 3, 0.03);  // (nearly) every block at the nearest integer shift
  // A three-point parabola is biased towards the integer on a Gaussian-like peak ("pixel locking"),
  // and trilinear warping smooths the texture: measured 0.145. Iterating still converges, since the
  // refined step never vanishes before the error does.
  EXPECT_LT(e_sub, 0.2);
  EXPECT_LT(e_sub, 0.6 * e_int);
}

TEST(RegAffine, Initialisations) {
  rd::Geometry r = rd::Geometry::make(10, 20, 30, 1, 1, 1, {0, 0, 0});
  rd::Geometry f = rd::Geometry::make(20, 20, 20, 2, 2, 2, {-5, 1, 2});
  const rd::Mat44 c = rd::init_centres(r, f);  // centres: (5, 10, 15) and (-5 + 20, 1 + 20, 2 + 20)
  EXPECT_NEAR(c.m[0][3], 10, 1e-12);
  EXPECT_NEAR(c.m[1][3], 11, 1e-12);
  EXPECT_NEAR(c.m[2][3], 7, 1e-12);
  rd::Volume a, b;
  a.geo = r;
  a.data.assign(r.voxels(), 0.f);
  a.data[r.index(2, 3, 4)] = 5;
  a.data[r.index(4, 3, 4)] = 5;
  b.geo = f;
  b.data.assign(f.voxels(), 0.f);
  b.data[f.index(1, 1, 1)] = 2;
  const rd::Mat44 m = rd::init_centres_of_mass(a, {}, b, {});  // (3, 3, 4) -> (-3, 3, 4)
  EXPECT_NEAR(m.m[0][3], -6, 1e-12);
  EXPECT_NEAR(m.m[1][3], 0, 1e-12);
  EXPECT_NEAR(m.m[2][3], 0, 1e-12);
  rd::Mask empty(r.voxels(), 0);
  EXPECT_THROW(rd::init_centres_of_mass(a, empty, b, {}), evk::InputError);
  rd::Volume zero = b;
  zero.data.assign(f.voxels(), 0.f);
  EXPECT_THROW(rd::init_centres_of_mass(a, {}, zero, {}), evk::InputError);
}

// Known transforms on a 64^3 2 mm phantom (the 1 mm brain figures are in docs/REG_DEFORM.md).
TEST(RegAffine, RecoversKnownRigidAndAffineTransforms) {
  const Phantom p = make_phantom(64, 2.0, 7);
  std::mt19937_64 rng(2024);
  rd::AffineOptions o;
  o.levels = o.levels_used = 2;
  o.maxit = 3;
  o.threads = 2;
  o.subvoxel = false;  // whole-voxel matches first (reg_aladin's), then the default sub-voxel refinement
  for (bool affine : {false, true}) {
    const rd::Mat44 truth = random_transform(rng, affine);
    const rd::Volume flo = floating_for(p.v, truth);
    o.rigid_only = !affine;
    const rd::Mat44 init = rd::init_centres(p.v.geo, flo.geo);
    const auto before = mapping_error(p, init, truth);
    const rd::AffineResult r = rd::register_affine(p.v, flo, {}, {}, init, o, rd::cpu_matcher(2));
    const auto after = mapping_error(p, r.affine, truth);
    // Half a voxel mean, one voxel max (2 mm voxels; the 0.3 mm is at 1 mm on brains).
    EXPECT_LT(after.first, 1.0) << (affine ? "affine" : "rigid") << " before " << before.first;
    EXPECT_LT(after.second, 2.0) << (affine ? "affine" : "rigid");
    EXPECT_GT(before.first, 5.0);  // the transforms are not trivial
    std::printf("[ known %s ] mean %.3f mm max %.3f mm (before %.1f / %.1f)\n", affine ? "affine" : "rigid",
                after.first, after.second, before.first, before.second);
    // the default (--subvoxel): correspondences at the refined matches.
    o.subvoxel = true;
    const auto sub = mapping_error(p, rd::register_affine(p.v, flo, {}, {}, init, o, rd::cpu_matcher(2)).affine, truth);
    o.subvoxel = false;
    std::printf("[ known %s, subvoxel ] mean %.3f mm max %.3f mm\n", affine ? "affine" : "rigid", sub.first, sub.second);
    EXPECT_LT(sub.first, 0.25);  // an eighth of a voxel (measured 0.13 rigid, 0.07 affine)
    EXPECT_LT(sub.first, after.first);
  }
}

TEST(RegAffine, CliHappyPathAndBadInputs) {
  evk::testing::TempDir tmp;
  const Phantom p = make_phantom(40, 3.0, 4);
  std::mt19937_64 rng(12);
  const rd::Mat44 truth = random_transform(rng, false);
  rd::write_volume(tmp / "ref.nii.gz", p.v);
  rd::write_volume(tmp / "flo.nii.gz", floating_for(p.v, truth));
  const std::string ref = (tmp / "ref.nii.gz").string(), flo = (tmp / "flo.nii.gz").string();
  const std::string out = (tmp / "a.txt").string(), res = (tmp / "w.nii.gz").string();
  const std::string png = (tmp / "check.png").string();
  auto r = run_tool("reg_deform", "affine --ref " + ref + " --flo " + flo + " -o " + out + " --res " + res +
                                      " --png " + png + " --ln 1 --maxit 2 --rigid-only --backend cpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  {  // the PNG check: signature, then IHDR width = 2 panels of 40 + 4 px gap, height 40 + 4 + 40 (x scale)
    std::ifstream f(png, std::ios::binary);
    std::string head(24, '\0');
    ASSERT_TRUE(f.read(head.data(), 24));
    EXPECT_EQ(head.substr(1, 3), "PNG");
    const auto be32 = [&](int o) {
      return (static_cast<unsigned char>(head[o]) << 24) | (static_cast<unsigned char>(head[o + 1]) << 16) |
             (static_cast<unsigned char>(head[o + 2]) << 8) | static_cast<unsigned char>(head[o + 3]);
    };
    EXPECT_EQ(be32(16), 84 * 10);  // scale = 400 / 40
    EXPECT_EQ(be32(20), 84 * 10);
  }
  EXPECT_NE(r.out.find("\"matrix\""), std::string::npos);
  EXPECT_LT(mapping_error(p, rd::read_affine(out), truth).first, 3.0);  // one level, few iterations
  EXPECT_EQ(rd::read_volume(res).geo.nx, 40);
  {  // --json with --res: reg_measure's NMI of the written image, and of the initial alignment (lower)
    const auto number = [&](const std::string& key) {
      const std::size_t at = r.out.find("\"" + key + "\": ");
      return at == std::string::npos ? -1.0 : std::stod(r.out.substr(at + key.size() + 4));
    };
    const double nmi = number("nmi"), nmi0 = number("nmi_initial");
    EXPECT_NEAR(nmi, rd::nmi_like_reg_measure(p.v, rd::read_volume(res)), 1e-12);
    EXPECT_GT(nmi0, 1.0);
    EXPECT_GT(nmi, nmi0 + 0.01);
  }
  // Bad inputs: exit 2, one line naming the culprit, no output.
  rd::Mask none(p.v.geo.voxels(), 0);
  rd::write_mask(tmp / "empty.nii.gz", p.v.geo, none);
  rd::Volume flat;  // 2-D: mismatched dimensionality
  flat.geo = rd::Geometry::make(40, 40, 1, 3, 3, 3);
  flat.data.assign(flat.geo.voxels(), 1.f);
  rd::write_volume(tmp / "slice.nii.gz", flat);
  {
    std::ofstream f(tmp / "sing.txt");
    f << "1 0 0 0\n0 0 0 0\n0 0 1 0\n0 0 0 1\n";
  }
  const std::string base = "affine --ref " + ref + " --flo " + flo + " -o " + (tmp / "b.txt").string() + " --backend cpu";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {base + " --rmask " + (tmp / "empty.nii.gz").string(), "empty.nii.gz"},
      {base + " --fmask " + (tmp / "empty.nii.gz").string(), "empty.nii.gz"},
      {"affine --ref " + ref + " --flo " + (tmp / "slice.nii.gz").string() + " -o " + (tmp / "b.txt").string() +
           " --backend cpu", "--flo"},
      {base + " --rmask " + (tmp / "slice.nii.gz").string(), "slice.nii.gz"},
      {base + " --init " + (tmp / "sing.txt").string(), "sing.txt"},
      {base + " --ln 2 --lp 3", "--lp"},
      {base + " --pv 0", "--pv"},
      {base + " --rigid-only --aff-direct", "--rigid-only"},
      {base + " --pad x", "--pad"},
      {base + " --res " + (tmp / "w.png").string(), "w.png"},
  };
  for (const auto& [args, needle] : bad) {
    r = run_tool("reg_deform", args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << needle << ": " << r.err;
    EXPECT_FALSE(fs::exists(tmp / "b.txt")) << args;
  }
}

// NaN voxels (NiftyReg's padding value, e.g. our own --res output) are read as 0, as NiftyReg reads
// them: affine, register and resample give on a NaN-padded reference and floating image exactly what
// they give on the same images padded with 0, and the library sees no NaN.
TEST(RegAffine, NanPaddedInputsAreReadAsZeroByEveryCommand) {
  evk::testing::TempDir tmp;
  const Phantom p = make_phantom(24, 3.0, 4);
  std::mt19937_64 rng(3);
  rd::Volume flo = floating_for(p.v, random_transform(rng, false));
  rd::Volume ref = p.v;
  for (auto& v : flo.data) v = std::isnan(v) ? 0.f : v;
  rd::Volume ref_nan = ref, flo_nan = flo;
  for (int z = 0; z < 24; ++z)
    for (int y = 0; y < 24; ++y)
      for (int x = 0; x < 2; ++x) {
        ref.data[ref.geo.index(x, y, z)] = flo.data[flo.geo.index(23 - x, y, z)] = 0.f;
        ref_nan.data[ref.geo.index(x, y, z)] = flo_nan.data[flo.geo.index(23 - x, y, z)] = NAN;
      }
  rd::write_volume(tmp / "ref0.nii", ref);
  rd::write_volume(tmp / "flo0.nii", flo);
  rd::write_volume(tmp / "refn.nii", ref_nan);
  rd::write_volume(tmp / "flon.nii", flo_nan);
  const rd::Volume back = rd::read_volume(tmp / "flon.nii");
  EXPECT_EQ(back.data, flo.data);
  EXPECT_EQ(rd::read_stored_volume(tmp / "flon.nii").vol.data, flo.data);
  for (const char* s : {"0", "n"}) {
    const std::string in = " --ref " + (tmp / ("ref" + std::string(s) + ".nii")).string() + " --flo " +
                           (tmp / ("flo" + std::string(s) + ".nii")).string() + " --backend cpu";
    const std::string aff = (tmp / ("a" + std::string(s) + ".txt")).string();
    auto r = run_tool("reg_deform", "affine" + in + " -o " + aff + " --ln 2 --maxit 2 --res " +
                                        (tmp / ("w" + std::string(s) + ".nii")).string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_tool("reg_deform", "register" + in + " --aff " + aff + " --ln 1 --maxit 5 --sx 9 --cpp " +
                                   (tmp / ("c" + std::string(s) + ".nii")).string() + " --res " +
                                   (tmp / ("r" + std::string(s) + ".nii")).string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_tool("reg_deform", "resample" + in + " --trans " + (tmp / ("c" + std::string(s) + ".nii")).string() +
                                   " --pad 0 -o " + (tmp / ("s" + std::string(s) + ".nii")).string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(max_abs_diff(rd::read_affine(tmp / "a0.txt"), rd::read_affine(tmp / "an.txt")), 0.0);
  EXPECT_EQ(rd::read_grid(tmp / "c0.nii", ref.geo).data, rd::read_grid(tmp / "cn.nii", ref.geo).data);
  for (const char* o : {"w", "r", "s"}) {
    const rd::Volume a = rd::read_volume(tmp / (std::string(o) + "0.nii")), b = rd::read_volume(tmp / (std::string(o) + "n.nii"));
    EXPECT_EQ(a.data, b.data) << o;
  }
  // Our own NaN-padded --res output goes back in as an input.
  auto r = run_tool("reg_deform", "affine --ref " + (tmp / "ref0.nii").string() + " --flo " + (tmp / "wn.nii").string() +
                                      " -o " + (tmp / "again.txt").string() + " --ln 1 --maxit 1 --backend cpu");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}
