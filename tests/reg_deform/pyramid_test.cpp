// Image pyramid (NiftyReg's reg_createImagePyramid): each level against a naive host version on odd
// sizes (a direct 3-D normalised Gaussian average at the kept voxels), the axis rule (n/2 >= 32),
// the geometry (voxel 0 keeps its world position, columns double), masks, and the level order.
#include <gtest/gtest.h>

#include <cmath>

#include "core/pyramid.hpp"

namespace rd = evk::reg_deform;

namespace {
rd::Volume noise_volume(int nx, int ny, int nz, unsigned seed) {
  rd::Volume v;
  v.geo = rd::Geometry::make(nx, ny, nz, 1.1, 0.9, 1.3, {-5, 7, 2});
  // An oblique sform (rotation about z) so that column scaling is checked on a full matrix.
  const double c = std::cos(0.3), s = std::sin(0.3);
  rd::Mat44 r;
  r.m[0][0] = c, r.m[0][1] = -s, r.m[1][0] = s, r.m[1][1] = c;
  v.geo.sform = r * v.geo.sform;
  v.geo.update_world();
  v.data.resize(v.geo.voxels());
  unsigned x = seed;
  for (auto& d : v.data) {
    x = x * 1664525u + 1013904223u;
    d = static_cast<float>((x >> 8) % 1000) / 10.0f;
  }
  return v;
}

// Direct 3-D truncated Gaussian (radius 2, sigma 0.7355 voxels) averaged over the voxels inside.
double naive_smoothed(const rd::Volume& v, int x, int y, int z) {
  const double sigma = 0.7355;
  double s = 0, w = 0;
  for (int c = -2; c <= 2; ++c)
    for (int b = -2; b <= 2; ++b)
      for (int a = -2; a <= 2; ++a) {
        const int X = x + a, Y = y + b, Z = z + c;
        if (X < 0 || Y < 0 || Z < 0 || X >= v.geo.nx || Y >= v.geo.ny || Z >= v.geo.nz) continue;
        const double k = std::exp(-(a * a) / (2 * sigma * sigma)) * std::exp(-(b * b) / (2 * sigma * sigma)) *
                         std::exp(-(c * c) / (2 * sigma * sigma));
        s += k * v.data[v.geo.index(X, Y, Z)];
        w += k;
      }
  return s / w;
}
}  // namespace

TEST(RegPyramid, AxisRuleIsNiftyRegs) {
  const auto a = rd::pyramid_axes(rd::Geometry::make(64, 63, 65));
  EXPECT_TRUE(a[0]);   // 64/2 = 32
  EXPECT_FALSE(a[1]);  // 63/2 = 31
  EXPECT_TRUE(a[2]);
}

TEST(RegPyramid, DownsampleMatchesNaiveOnOddSizes) {
  const rd::Volume v = noise_volume(67, 33, 71, 7);
  const auto axes = rd::pyramid_axes(v.geo);
  ASSERT_TRUE(axes[0] && !axes[1] && axes[2]);
  const rd::Volume d = rd::downsample_volume(v, axes, 2);
  ASSERT_EQ(d.geo.nx, 34);
  ASSERT_EQ(d.geo.ny, 33);
  ASSERT_EQ(d.geo.nz, 36);
  double worst = 0;
  for (int z = 0; z < d.geo.nz; ++z)
    for (int y = 0; y < d.geo.ny; ++y)
      for (int x = 0; x < d.geo.nx; ++x)
        worst = std::max(worst, std::fabs(d.data[d.geo.index(x, y, z)] - naive_smoothed(v, 2 * x, y, 2 * z)));
  EXPECT_LT(worst, 1e-3);  // float output of values up to 100: ~1e-5 relative
  // Geometry: voxel (x, y, z) of the new level sits where voxel (2x, y, 2z) of the old one was.
  for (int k : {0, 5, 35})
    for (int i : {0, 3, 33}) {
      const auto w0 = v.geo.vox2world.apply(2 * i, 4, 2 * k), w1 = d.geo.vox2world.apply(i, 4, k);
      for (int a = 0; a < 3; ++a) EXPECT_NEAR(w0[a], w1[a], 1e-9);
      const auto q0 = v.geo.qform.apply(2 * i, 4, 2 * k), q1 = d.geo.qform.apply(i, 4, k);
      for (int a = 0; a < 3; ++a) EXPECT_NEAR(q0[a], q1[a], 1e-9);
    }
  EXPECT_DOUBLE_EQ(d.geo.dx, 2.2);
  EXPECT_DOUBLE_EQ(d.geo.dy, 0.9);
  EXPECT_DOUBLE_EQ(d.geo.dz, 2.6);
}

TEST(RegPyramid, SmoothingKeepsConstantsAndUnhalvedLevelsAreStillSmoothed) {
  rd::Volume c;
  c.geo = rd::Geometry::make(9, 11, 7);
  c.data.assign(c.geo.voxels(), 3.5f);
  const rd::Volume d = rd::downsample_volume(c, rd::pyramid_axes(c.geo));
  EXPECT_EQ(d.geo.voxels(), c.geo.voxels());  // nothing halved below 64 voxels
  for (float x : d.data) EXPECT_NEAR(x, 3.5f, 1e-5);
  const rd::Volume v = noise_volume(9, 11, 7, 3);
  const rd::Volume s = rd::downsample_volume(v, rd::pyramid_axes(v.geo));
  EXPECT_NEAR(s.data[s.geo.index(4, 5, 3)], naive_smoothed(v, 4, 5, 3), 1e-3);
  EXPECT_GT(std::fabs(s.data[s.geo.index(4, 5, 3)] - v.data[v.geo.index(4, 5, 3)]), 1e-3);
}

TEST(RegPyramid, LevelsOrderAndLevelsToPerform) {
  const rd::Volume v = noise_volume(131, 67, 65, 11);
  // 3 levels: 131x67x65 -> 66x34x33 -> 33x34x33 (66/2 = 33 >= 32; 34/2 = 17 and 33/2 = 16 are not)
  const auto p = rd::make_pyramid(v, 3, 3, 2);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[2].data, v.data);
  EXPECT_EQ(p[1].geo.nx, 66);
  EXPECT_EQ(p[1].geo.ny, 34);
  EXPECT_EQ(p[1].geo.nz, 33);
  EXPECT_EQ(p[0].geo.nx, 33);
  EXPECT_EQ(p[0].geo.ny, 34);
  EXPECT_EQ(p[0].geo.nz, 33);
  // --lp 2 of --ln 3: the finest used level is the input downsampled once.
  const auto q = rd::make_pyramid(v, 3, 2, 2);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[1].data, p[1].data);
  EXPECT_EQ(q[0].data, p[0].data);
  EXPECT_THROW(rd::make_pyramid(v, 2, 3), std::invalid_argument);
  // The affine registration's form: the same levels, the input level the input itself (no copy).
  for (int used : {3, 2, 1}) {
    const auto want = rd::make_pyramid(v, 3, used, 2);
    const rd::ImagePyramid ip = rd::make_image_pyramid(v, 3, used, 2);
    ASSERT_EQ(ip.size(), want.size());
    EXPECT_EQ(&ip[used - 1] == &v, used == 3);
    for (std::size_t l = 0; l < want.size(); ++l) {
      EXPECT_EQ(ip[l].data, want[l].data) << "lp " << used << " level " << l;
      EXPECT_EQ(ip[l].geo.vox2world.m, want[l].geo.vox2world.m);
      EXPECT_EQ(ip.levels[l].device, nullptr);
    }
  }
  EXPECT_THROW(rd::make_image_pyramid(v, 2, 3), std::invalid_argument);
}

TEST(RegPyramid, MaskPyramidIsNearestNeighbour) {
  const rd::Geometry g = rd::Geometry::make(67, 33, 65);
  rd::Mask m(g.voxels());
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) m[g.index(x, y, z)] = (x + y + z) % 3 == 0 ? 7 : 0;
  const auto p = rd::make_mask_pyramid(g, m, 2, 2);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].size(), m.size());
  const rd::Geometry d = rd::downsample_geometry(g, rd::pyramid_axes(g));
  ASSERT_EQ(p[0].size(), d.voxels());
  for (int z = 0; z < d.nz; ++z)
    for (int y = 0; y < d.ny; ++y)
      for (int x = 0; x < d.nx; ++x)
        ASSERT_EQ(p[0][d.index(x, y, z)], (2 * x + y + 2 * z) % 3 == 0 ? 1 : 0);
  EXPECT_TRUE(rd::make_mask_pyramid(g, {}, 3, 2)[0].empty());
}
