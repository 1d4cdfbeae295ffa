// The facade (compute.hpp) on the CPU backend: what a plan says, the bad choices it refuses, and
// jobs against known answers (an affine grid's field is that affine map; resampling through the
// identity returns the image; a shifted grid moves the image by whole voxels).
#include <gtest/gtest.h>

#include <cmath>

#include "core/compute.hpp"
#include "core/field/grid_make.hpp"
#include "core/field/random_case.hpp"
#include "evk/error.hpp"

namespace rd = evk::reg_deform;

namespace {
rd::RunOptions cpu() {
  rd::RunOptions r;
  r.backend = "cpu";
  return r;
}
}  // namespace

TEST(RegFacade, PlanSaysWhatRuns) {
  const rd::Plan p = rd::plan_run(cpu());
  EXPECT_FALSE(p.gpu());
  EXPECT_EQ(p.info.backend, "cpu");
  EXPECT_EQ(p.info.kernel, "cpu");
  EXPECT_EQ(p.info.device, "");
  EXPECT_EQ(rd::plan_backend(cpu()).info.kernel, "cpu");
  rd::RunOptions bad = cpu();
  bad.backend = "fpga";
  EXPECT_THROW(rd::plan_run(bad), evk::InputError);
  rd::RunOptions file = cpu();
  file.kernel = "/nonexistent/variant.genome";  // a genome file is checked on the CPU too
  EXPECT_THROW(rd::plan_run(file), evk::InputError);
}

TEST(RegFacade, RequestsAskForTheJobsSpacing) {
  const rd::Geometry ref = rd::Geometry::make(91, 109, 91, 2, 2, 2);
  EXPECT_EQ(rd::register_request(ref, 10).props.at("spacing"), 5);  // 10 mm at 2 mm voxels
  EXPECT_EQ(rd::register_request(ref, -5).props.at("spacing"), 5);  // -5: voxels
  EXPECT_EQ(rd::field_request(ref, rd::make_grid(ref, 4)).props.at("spacing"), 4);
  EXPECT_EQ(rd::field_request(ref, rd::make_grid(ref, 4)).size_class, "head2mm");
}

TEST(RegFacade, FieldOfAnAffineGridIsTheAffineMap) {
  const rd::Geometry ref = rd::Geometry::make(17, 13, 11, 1.5, 1, 2, {-10, 4, 7});
  rd::Mat44 a = rd::Mat44::diag(1.1, 0.9, 1.05);
  a.m[0][1] = 0.05, a.m[0][3] = 3, a.m[1][3] = -2, a.m[2][3] = 1.5;
  const rd::Grid grid = rd::make_grid(ref, 4, a);
  const rd::Plan p = rd::plan_run(cpu(), rd::field_request(ref, grid));
  rd::Mask mask(ref.voxels(), 1);
  mask[0] = 0;  // outside the mask: the identity
  const rd::FieldResult r = rd::compute_field({.ref = ref, .grid = grid, .mask = &mask}, p);
  EXPECT_EQ(r.active_voxels, ref.voxels() - 1);
  const std::size_t nv = ref.voxels();
  double worst = 0;
  for (int z = 0; z < ref.nz; ++z)
    for (int y = 0; y < ref.ny; ++y)
      for (int x = 0; x < ref.nx; ++x) {
        const std::size_t i = ref.index(x, y, z);
        const auto w = ref.vox2world.apply(x, y, z);
        const auto e = i == 0 ? w : a.apply(w[0], w[1], w[2]);
        for (int c = 0; c < 3; ++c) worst = std::max(worst, std::fabs(r.field.data[c * nv + i] - e[c]));
      }
  EXPECT_LT(worst, 1e-3);
}

TEST(RegFacade, ResampleThroughGridsOfKnownMotion) {
  rd::RandomCaseOptions o;
  o.size = 20;
  o.seed = 5;
  const rd::Volume img = rd::make_random_case(o).image;
  rd::Transformation t;
  t.kind = rd::TransKind::grid;
  t.grid = rd::make_grid(img.geo, 5);
  const rd::Plan p = rd::plan_run(cpu(), rd::field_request(img.geo, t.grid));
  for (const rd::Interp interp : {rd::Interp::nearest, rd::Interp::linear, rd::Interp::cubic}) {
    rd::ResampleOptions ro;
    ro.interp = interp;
    const rd::ResampleResult same = rd::resample({.ref = img.geo, .flo = img, .trans = t, .options = ro}, p);
    ASSERT_EQ(same.image.data.size(), img.data.size());
    for (std::size_t i = 0; i < img.data.size(); ++i) ASSERT_NEAR(same.image.data[i], img.data[i], 1e-4) << i;
    EXPECT_FALSE(same.field.field.data.empty());
  }
  // A grid moved by +2 mm in x (1 mm voxels): voxel x shows the image's voxel x + 2; pad beyond.
  rd::Mat44 shift;
  shift.m[0][3] = 2;
  t.grid = rd::make_grid(img.geo, 5, shift);
  rd::ResampleOptions ro;
  ro.interp = rd::Interp::linear;
  ro.pad = -1;
  const rd::Volume out = rd::resample({.ref = img.geo, .flo = img, .trans = t, .options = ro}, p).image;
  for (int z = 0; z < img.geo.nz; ++z)
    for (int y = 0; y < img.geo.ny; ++y)
      for (int x = 0; x < img.geo.nx; ++x) {
        const float want = x + 2 < img.geo.nx ? img.data[img.geo.index(x + 2, y, z)] : -1.0f;
        ASSERT_NEAR(out.data[img.geo.index(x, y, z)], want, 1e-4) << x << " " << y << " " << z;
      }
}
