// CPU reference: exactness against independent facts (identity and affine grids reproduce
// themselves, a single control point's hand-computed weight), masks, active lists, random cases.
#include <cmath>

#include "core/field/active.hpp"
#include "core/field/field_cpu.hpp"
#include "core/field/grid_make.hpp"
#include "core/field/random_case.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"

namespace rd = evk::reg_deform;

namespace {
// A reference with a rotated, shifted, anisotropic sform (and a different qform).
rd::Geometry oblique(int nx, int ny, int nz) {
  rd::Geometry g = rd::Geometry::make(nx, ny, nz, 1.2, 0.9, 1.5, {-40, 25, 10});
  const double c = std::cos(0.3), s = std::sin(0.3);
  rd::Mat44 rot;
  rot.m[0] = {c, -s, 0, 0};
  rot.m[1] = {s, c, 0, 0};
  g.sform = rot * g.sform;
  g.sform_code = 2;
  g.update_world();
  return g;
}

double max_field_error(const rd::Field& f, const rd::Mat44& expect_of_world) {
  const auto& g = f.geo;
  const std::size_t nv = g.voxels();
  double worst = 0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const auto w = g.vox2world.apply(x, y, z);
        const auto e = expect_of_world.apply(w[0], w[1], w[2]);
        const std::size_t i = g.index(x, y, z);
        for (int a = 0; a < 3; ++a) worst = std::max(worst, std::fabs(f.data[a * nv + i] - e[a]));
      }
  return worst;
}
}  // namespace

TEST(RegField, IdentityGridGivesIdentityField) {
  for (double s : {5.0, 3.0, 2.5, 7.0, 1.0}) {
    const rd::Geometry ref = oblique(23, 17, 12);
    const rd::Grid grid = rd::make_grid(ref, s);
    const rd::Field f = rd::compute_field_cpu(ref, grid);
    // float32 storage of positions up to ~60 mm: 1e-4 mm is a few ulps.
    EXPECT_LT(max_field_error(f, rd::Mat44::identity()), 1e-4) << "spacing " << s;
    rd::FieldOptions o;
    o.displacement = true;
    const rd::Field d = rd::compute_field_cpu(ref, grid, {}, o);
    for (float v : d.data) ASSERT_LT(std::fabs(v), 1e-4) << "spacing " << s;
  }
}

TEST(RegField, AffineGridGivesAffineField) {
  rd::Mat44 a;
  a.m[0] = {1.05, 0.1, -0.02, 3.5};
  a.m[1] = {-0.07, 0.95, 0.04, -2.0};
  a.m[2] = {0.03, 0.02, 1.1, 7.25};
  for (double s : {5.0, 4.0, 2.5, 6.0}) {
    const rd::Geometry ref = oblique(31, 20, 14);
    const rd::Field f = rd::compute_field_cpu(ref, rd::make_grid(ref, s, a));
    EXPECT_LT(max_field_error(f, a), 2e-4) << "spacing " << s;
  }
}

TEST(RegField, SingleControlPointWeightsFromTheFormula) {
  // Spacing 5: voxel x=0 has u=0 -> weights 1/6, 4/6, 1/6, 0 on grid indices 0..3; grid index 1
  // sits at voxel 0. Moving control point (1,1,1) by +6 mm in x moves voxel (0,0,0) by 6*(4/6)^3,
  // voxel (5,0,0) by 6*(1/6)*(4/6)^2 (x index 1 has weight 1/6 at u=0 of cell 1), and voxel
  // (2,0,0) (u = 0.4) by 6 * w1(0.4) * (4/6)^2 with w1(0.4) = (3*0.064 - 6*0.16 + 4)/6.
  const rd::Geometry ref = rd::Geometry::make(20, 20, 20);
  rd::Grid g = rd::make_grid(ref, 5);
  g.data[g.geo.index(1, 1, 1)] += 6.0f;
  const rd::Field f = rd::compute_field_cpu(ref, g);
  auto dx = [&](int x, int y, int z) { return f.data[ref.index(x, y, z)] - x; };
  const double k = 4.0 / 6.0;
  EXPECT_NEAR(dx(0, 0, 0), 6 * k * k * k, 1e-5);
  EXPECT_NEAR(dx(5, 0, 0), 6 * (1.0 / 6) * k * k, 1e-5);
  EXPECT_NEAR(dx(2, 0, 0), 6 * ((3 * 0.064 - 6 * 0.16 + 4) / 6) * k * k, 1e-5);
  EXPECT_NEAR(dx(10, 0, 0), 0.0, 1e-5);  // beyond the control point's support (4 cells)
}

TEST(RegField, MaskedVoxelsGetTheIdentity) {
  rd::RandomCaseOptions o;
  o.size = 40;
  const rd::RandomCase c = rd::make_random_case(o);
  const rd::Field f = rd::compute_field_cpu(c.image.geo, c.grid, c.mask);
  const rd::Field full = rd::compute_field_cpu(c.image.geo, c.grid);
  const auto& g = c.image.geo;
  const std::size_t nv = g.voxels();
  std::size_t inside = 0, moved = 0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = g.index(x, y, z);
        const auto w = g.vox2world.apply(x, y, z);
        for (int a = 0; a < 3; ++a) {
          if (c.mask[i]) {
            ASSERT_EQ(f.data[a * nv + i], full.data[a * nv + i]);
            moved += std::fabs(f.data[a * nv + i] - w[a]) > 1e-3;
          } else {
            ASSERT_NEAR(f.data[a * nv + i], w[a], 1e-4);
          }
        }
        inside += c.mask[i] != 0;
      }
  EXPECT_GT(inside, 1000u);
  EXPECT_GT(moved, inside);  // the random grid really deforms the active voxels
}

TEST(RegField, GridThatDoesNotCoverTheReferenceIsRejected) {
  const rd::Geometry ref = rd::Geometry::make(30, 30, 30);
  rd::Grid g = rd::make_grid(rd::Geometry::make(20, 30, 30), 5);
  EXPECT_THROW(rd::compute_field_cpu(ref, g), evk::InputError);
}

TEST(RegActive, ListsCoverEveryMaskedVoxel) {
  rd::RandomCaseOptions o;
  o.size = 37;  // not a multiple of 5
  o.seed = 9;
  rd::RandomCase c = rd::make_random_case(o);
  const auto& g = c.image.geo;
  for (std::size_t i = 0; i < c.mask.size(); i += 7) c.mask[i] = 0;  // holes
  const auto vox = rd::active_voxels(g, c.mask);
  EXPECT_EQ(vox.size(), rd::count_active(g, c.mask));
  for (auto v : vox) ASSERT_TRUE(c.mask[v]);
  const rd::TileLayout l = rd::tile_layout(g, 5);
  EXPECT_EQ(l.nty, 8);
  const auto tiles = rd::active_tiles(g, c.mask, l);
  std::vector<std::uint8_t> covered(g.voxels(), 0);
  for (auto code : tiles) {
    int x, ty, tz;
    l.decode(code, x, ty, tz);
    ASSERT_EQ(l.code(x, ty, tz), code);
    for (int e = 0; e < 25; ++e) {
      const int y = ty * 5 + e % 5, z = tz * 5 + e / 5;
      if (y < g.ny && z < g.nz) covered[g.index(x, y, z)] = 1;
    }
  }
  std::size_t n = 0;
  for (std::size_t i = 0; i < g.voxels(); ++i) {
    if (c.mask[i]) {
      ASSERT_TRUE(covered[i]) << i;
    }
    n += covered[i];
  }
  EXPECT_GE(n, vox.size());
  EXPECT_TRUE(std::is_sorted(tiles.begin(), tiles.end()));
}

TEST(RegRandomCase, DeterministicAndPaperSized) {
  rd::RandomCaseOptions o;
  o.seed = 5;
  const rd::RandomCase a = rd::make_random_case(o), b = rd::make_random_case(o);
  EXPECT_EQ(a.image.data, b.image.data);
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_EQ(a.grid.data, b.grid.data);
  o.seed = 6;
  const rd::RandomCase c = rd::make_random_case(o);
  EXPECT_NE(a.mask, c.mask);
  const auto& g = a.image.geo;
  EXPECT_EQ(g.nx, 217);
  EXPECT_EQ(a.grid.geo.nx, 47);  // the paper's 47^3 control points
  const std::size_t active = rd::count_active(g, a.mask);
  EXPECT_GT(active, 1300000u);  // ~1.7 M on average, radius/compression vary +-5%
  EXPECT_LT(active, 2200000u);
  // control points displaced by at most 5 mm from the identity
  const rd::Grid id = rd::make_grid(g, 5);
  double worst = 0;
  for (std::size_t i = 0; i < id.data.size(); ++i) worst = std::max(worst, double(std::fabs(a.grid.data[i] - id.data[i])));
  EXPECT_LE(worst, 5.0 + 1e-4);
  EXPECT_GT(worst, 4.0);
}
