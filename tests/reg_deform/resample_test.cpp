// Resampling: identity returns the input; an integer shift moves the image by that many voxels;
// cubic B-spline interpolation reproduces the samples (prefilter correctness).
#include <cmath>

#include "core/field/field_cpu.hpp"
#include "core/field/grid_make.hpp"
#include "core/field/resample_cpu.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"

namespace rd = evk::reg_deform;

namespace {
rd::Volume test_volume() {
  rd::Volume v;
  v.geo = rd::Geometry::make(19, 14, 11, 1.0, 1.5, 2.0, {3, -7, 11});
  v.data.resize(v.geo.voxels());
  for (std::size_t i = 0; i < v.data.size(); ++i) v.data[i] = static_cast<float>((i * 7919) % 101) - 20.0f;
  return v;
}
}  // namespace

TEST(RegResample, IdentityReturnsInput) {
  const rd::Volume v = test_volume();
  const rd::Field f = rd::compute_field_cpu(v.geo, rd::make_grid(v.geo, 5));
  for (auto interp : {rd::Interp::nearest, rd::Interp::linear, rd::Interp::cubic}) {
    rd::ResampleOptions o;
    o.interp = interp;
    o.pad = -999;
    const rd::Volume out = rd::resample_cpu(v, f, o);
    // positions are exact to ~1e-5 voxel; linear/cubic move by at most that times the local slope
    const double tol = interp == rd::Interp::nearest ? 0.0 : 0.01;
    double worst = 0;
    for (std::size_t i = 0; i < v.data.size(); ++i) worst = std::max(worst, double(std::fabs(out.data[i] - v.data[i])));
    EXPECT_LE(worst, tol) << rd::to_string(interp);
  }
}

TEST(RegResample, IntegerShiftAndPadding) {
  const rd::Volume v = test_volume();
  rd::Mat44 shift;  // floating world = reference world + 2 voxels (2 mm) along x
  shift.m[0][3] = 2.0;
  const rd::Field f = rd::compute_field_cpu(v.geo, rd::make_grid(v.geo, 4, shift));
  rd::ResampleOptions o;
  o.interp = rd::Interp::linear;
  o.pad = -999;
  const rd::Volume out = rd::resample_cpu(v, f, o);
  const auto& g = v.geo;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const float got = out.data[g.index(x, y, z)];
        if (x + 2 < g.nx) ASSERT_NEAR(got, v.data[g.index(x + 2, y, z)], 0.01) << x << "," << y << "," << z;
        else ASSERT_EQ(got, -999.0f);
      }
}

TEST(RegResample, CubicInterpolatesSamplesAndLinearFunctions) {
  rd::Volume v = test_volume();
  const std::vector<float> c = rd::bspline_coefficients(v);
  const auto& g = v.geo;
  for (int z = 0; z < g.nz; z += 3)
    for (int y = 0; y < g.ny; y += 2)
      for (int x = 0; x < g.nx; ++x)
        ASSERT_NEAR(rd::sample(c.data(), g, x, y, z, rd::Interp::cubic, 0), v.data[g.index(x, y, z)], 1e-3);
  // a linear ramp is reproduced between samples too (away from the mirrored borders)
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) v.data[g.index(x, y, z)] = 2.0f * x - y + 0.5f * z;
  const std::vector<float> c2 = rd::bspline_coefficients(v);
  EXPECT_NEAR(rd::sample(c2.data(), g, 7.3, 5.6, 4.25, rd::Interp::cubic, 0), 2 * 7.3 - 5.6 + 0.5 * 4.25, 1e-3);
  EXPECT_NEAR(rd::sample(v.data.data(), g, 7.3, 5.6, 4.25, rd::Interp::linear, 0), 2 * 7.3 - 5.6 + 0.5 * 4.25, 1e-4);
  EXPECT_EQ(rd::sample(v.data.data(), g, -0.5, 5, 4, rd::Interp::linear, 7.0f), 7.0f);
  EXPECT_THROW(rd::parse_interp("sinc"), evk::InputError);
}
