// unfold_grid (core/register/reg_unfold.hpp), `register`'s fold-free result: a control point pushed
// through its neighbours folds the grid (checked with the per-voxel Jacobian), unfolding leaves no
// voxel with det J <= 0 and moves only the points near the fold; a grid without folds is left
// bit-identical; a fold at the grid's edge and many folds at once are removed too. `reg_deform
// jacobian` counts a grid's folds as the library does; `register` reports its unfolding and leaves
// none (and keeps the grid as optimised with --allow-folding).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/field/grid_make.hpp"
#include "evk_testing.hpp"
#include "io/nifti_io.hpp"
#include "core/register/reg_jacobian_cpu.hpp"
#include "core/register/reg_unfold.hpp"

namespace rd = evk::reg_deform;

namespace {
rd::Geometry ref_geo() { return rd::Geometry::make(41, 37, 33, 1.5, 1.5, 1.5, {-30, -25, -20}); }

// Moves control point (i, j, k) by (dx, dy, dz) mm.
void push(rd::Grid& g, int i, int j, int k, double dx, double dy, double dz) {
  const std::size_t p = g.geo.index(i, j, k), np = g.points();
  g.data[p] += static_cast<float>(dx);
  g.data[np + p] += static_cast<float>(dy);
  g.data[2 * np + p] += static_cast<float>(dz);
}
}  // namespace

TEST(RegUnfold, APushedControlPointIsUnfoldedLocally) {
  const rd::Geometry ref = ref_geo();
  rd::Grid g = rd::make_grid(ref, 5);
  // two neighbours along x (5 voxels x 1.5 mm apart) pushed past each other by 3 spacings each
  push(g, 4, 4, 4, 3.0 * 7.5, 0, 0);
  push(g, 5, 4, 4, -3.0 * 7.5, 0, 0);
  const rd::JacobianStats before = rd::voxel_jacobian_stats(ref, g);
  ASSERT_GT(before.folded, 50u);
  const rd::Grid folded = g;
  const rd::UnfoldReport r = rd::unfold_grid(ref, g);
  EXPECT_EQ(r.folded_before, before.folded);
  EXPECT_DOUBLE_EQ(r.min_det_before, before.min);
  EXPECT_GT(r.rounds, 0);
  const rd::JacobianStats after = rd::voxel_jacobian_stats(ref, g);
  EXPECT_EQ(after.folded, 0u);
  EXPECT_GT(after.min, 0);
  EXPECT_EQ(r.folded_after, 0u);
  // only points near the fold moved: none more than 4.5 points away from (4.5, 4, 4) in any axis
  const std::size_t np = g.points();
  std::size_t moved = 0;
  for (int k = 0; k < g.geo.nz; ++k)
    for (int j = 0; j < g.geo.ny; ++j)
      for (int i = 0; i < g.geo.nx; ++i) {
        const std::size_t p = g.geo.index(i, j, k);
        const bool same = g.data[p] == folded.data[p] && g.data[np + p] == folded.data[np + p] &&
                          g.data[2 * np + p] == folded.data[2 * np + p];
        if (!same) {
          ++moved;
          EXPECT_LE(std::max({std::abs(2 * i - 9), std::abs(2 * j - 8), std::abs(2 * k - 8)}), 10) << i << " " << j << " " << k;
        }
      }
  EXPECT_GT(moved, 0u);
}

TEST(RegUnfold, AGridWithoutFoldsIsLeftAsItIs) {
  const rd::Geometry ref = ref_geo();
  rd::Grid g = rd::make_grid(ref, 5);
  rd::perturb_grid(g, 1.0, 7);  // small random moves: no fold
  ASSERT_EQ(rd::voxel_jacobian_stats(ref, g).folded, 0u);
  const rd::Grid before = g;
  const rd::UnfoldReport r = rd::unfold_grid(ref, g);
  EXPECT_EQ(r.rounds, 0);
  EXPECT_EQ(r.folded_before, 0u);
  EXPECT_EQ(g.data, before.data);
}

TEST(RegUnfold, FoldsAtTheEdgeAndManyAtOnce) {
  const rd::Geometry ref = ref_geo();
  rd::Grid g = rd::make_grid(ref, 5);
  push(g, 0, 1, 1, 3.0 * 7.5, 0, 0);  // crossing pairs at the low corner of the grid
  push(g, 1, 1, 1, -3.0 * 7.5, 0, 0);
  const int j = g.geo.ny - 1;  // and at the high y end
  push(g, 3, j - 1, 2, 0, 3.0 * 7.5, 0);
  push(g, 3, j, 2, 0, -3.0 * 7.5, 0);
  rd::perturb_grid(g, 16.0, 11);  // and large random moves everywhere
  const rd::JacobianStats before = rd::voxel_jacobian_stats(ref, g);
  ASSERT_GT(before.folded, 2000u);
  const rd::UnfoldReport r = rd::unfold_grid(ref, g);
  EXPECT_EQ(rd::voxel_jacobian_stats(ref, g).folded, 0u);
  EXPECT_EQ(r.folded_after, 0u);
  std::printf("  %zu folded voxels (min det %.2f) removed in %d rounds, %zu point moves\n", r.folded_before, r.min_det_before,
              r.rounds, r.moves);
}

TEST(RegUnfold, JacobianCommandAndRegisterReports) {
  using evk::testing::run_tool;
  evk::testing::TempDir dir;
  for (const char* s : {"1", "2"})
    ASSERT_EQ(run_tool("reg_deform", std::string("random-case --seed 4") + s + " --size 20 -o " + (dir / s).string()).exit_code, 0);
  const std::string ref = (dir / "1" / "image.nii.gz").string(), flo = (dir / "2" / "image.nii.gz").string();
  // a perturbed grid folds; the command's count is the library's
  ASSERT_EQ(run_tool("reg_deform", "grid --ref " + ref + " --spacing 4 --perturb 6 --seed 3 -o " + (dir / "g.nii.gz").string()).exit_code, 0);
  auto j = run_tool("reg_deform", "jacobian --ref " + ref + " --cpp " + (dir / "g.nii.gz").string() + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto js = nlohmann::json::parse(j.out);
  const rd::Volume rv = rd::read_volume(ref);
  const rd::JacobianStats want = rd::voxel_jacobian_stats(rv.geo, rd::read_grid(dir / "g.nii.gz", rv.geo));
  ASSERT_GT(want.folded, 0u);
  EXPECT_EQ(js.at("folded_voxels").get<std::size_t>(), want.folded);
  EXPECT_DOUBLE_EQ(js.at("min_jacobian").get<double>(), want.min);
  EXPECT_EQ(js.at("voxels").get<std::size_t>(), rv.geo.voxels());
  // register: the unfolding reported, no fold left (by the command too)
  const std::string opts = " --backend cpu --maxit 10 --ln 2 --json";
  auto r = run_tool("reg_deform", "register --ref " + ref + " --flo " + flo + " --cpp " + (dir / "c.nii.gz").string() + opts);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rj = nlohmann::json::parse(r.out).at("final");
  EXPECT_EQ(rj.at("folded_voxels").get<std::size_t>(), 0u);
  for (const char* k : {"folded_before", "min_jacobian_before", "rounds", "control_point_moves", "seconds"})
    EXPECT_TRUE(rj.at("unfold").contains(k)) << k;
  j = run_tool("reg_deform", "jacobian --ref " + ref + " --cpp " + (dir / "c.nii.gz").string() + " --json");
  EXPECT_EQ(nlohmann::json::parse(j.out).at("folded_voxels").get<std::size_t>(), 0u);
  // --allow-folding: no unfolding done
  r = run_tool("reg_deform", "register --ref " + ref + " --flo " + flo + " --cpp " + (dir / "d.nii.gz").string() + opts +
                                 " --allow-folding");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("final").at("unfold").at("rounds").get<int>(), 0);
  EXPECT_EQ(run_tool("reg_deform", "jacobian --ref " + ref + " --cpp " + (dir / "missing.nii.gz").string()).exit_code, 2);
}
