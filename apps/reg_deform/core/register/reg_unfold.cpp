#include "core/register/reg_unfold.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <vector>

#include "core/register/reg_jacobian_cpu.hpp"

namespace evk::reg_deform {

namespace {
// Control points moved this round: those whose support (widened by r) holds a folded voxel.
std::vector<std::size_t> marked_points(const Grid& g, const std::vector<std::array<int, 3>>& folded, int r) {
  const int gx = g.geo.nx, gy = g.geo.ny, gz = g.geo.nz;
  std::vector<std::uint8_t> mark(g.points(), 0);
  for (const auto& v : folded) {
    const int i0 = static_cast<int>(std::floor(v[0] / g.sx)), j0 = static_cast<int>(std::floor(v[1] / g.sy)),
              k0 = static_cast<int>(std::floor(v[2] / g.sz));
    for (int k = std::max(k0 - r, 0); k <= std::min(k0 + 3 + r, gz - 1); ++k)
      for (int j = std::max(j0 - r, 0); j <= std::min(j0 + 3 + r, gy - 1); ++j)
        for (int i = std::max(i0 - r, 0); i <= std::min(i0 + 3 + r, gx - 1); ++i) mark[g.geo.index(i, j, k)] = 1;
  }
  std::vector<std::size_t> out;
  for (std::size_t p = 0; p < mark.size(); ++p)
    if (mark[p]) out.push_back(p);
  return out;
}

// Each marked point halfway to the mean of its face neighbours (the old positions: Jacobi).
void smooth(Grid& g, const std::vector<std::size_t>& pts) {
  const int gx = g.geo.nx, gy = g.geo.ny, gz = g.geo.nz;
  const std::size_t np = g.points();
  std::vector<double> next(pts.size() * 3);
  for (std::size_t n = 0; n < pts.size(); ++n) {
    const std::size_t p = pts[n];
    const int i = static_cast<int>(p % gx), j = static_cast<int>(p / gx % gy), k = static_cast<int>(p / gx / gy);
    const int nb[6][3] = {{i - 1, j, k}, {i + 1, j, k}, {i, j - 1, k}, {i, j + 1, k}, {i, j, k - 1}, {i, j, k + 1}};
    for (int c = 0; c < 3; ++c) {
      double sum = 0;
      int cnt = 0;
      for (const auto& q : nb) {
        if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= gx || q[1] >= gy || q[2] >= gz) continue;
        sum += g.data[c * np + g.geo.index(q[0], q[1], q[2])];
        ++cnt;
      }
      const double old = g.data[c * np + p];
      next[n * 3 + c] = cnt ? 0.5 * old + 0.5 * sum / cnt : old;
    }
  }
  for (std::size_t n = 0; n < pts.size(); ++n)
    for (int c = 0; c < 3; ++c) g.data[c * np + pts[n]] = static_cast<float>(next[n * 3 + c]);
}
}  // namespace

UnfoldReport unfold_grid(const Geometry& ref, Grid& grid, int threads, int max_rounds) {
  const auto t0 = std::chrono::steady_clock::now();
  UnfoldReport rep;
  std::vector<std::array<int, 3>> folded;
  const JacobianStats st = folded_voxels(ref, grid, VoxelBox{0, ref.nx, 0, ref.ny, 0, ref.nz}, folded, threads);
  rep.folded_before = st.folded;
  rep.min_det_before = st.min;
  while (!folded.empty() && rep.rounds < max_rounds) {
    const int widen = std::min(rep.rounds / 25, 4);
    const std::vector<std::size_t> pts = marked_points(grid, folded, widen);
    smooth(grid, pts);
    rep.moves += pts.size();
    ++rep.rounds;
    // The voxels the moved points reach (control point i acts on voxels x with floor(x / sx) in
    // [i - 3, i]): a voxel's determinant depends only on its 4x4x4 support, so every fold left is
    // among them, and a voxel outside was last changed by an earlier round whose scan saw it.
    int lo[3] = {grid.geo.nx, grid.geo.ny, grid.geo.nz}, hi[3] = {-1, -1, -1};
    for (std::size_t p : pts) {
      const int c[3] = {static_cast<int>(p % grid.geo.nx), static_cast<int>(p / grid.geo.nx % grid.geo.ny),
                        static_cast<int>(p / grid.geo.nx / grid.geo.ny)};
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::min(lo[a], c[a]);
        hi[a] = std::max(hi[a], c[a]);
      }
    }
    const double s[3] = {grid.sx, grid.sy, grid.sz};
    int b[6];
    for (int a = 0; a < 3; ++a) {
      b[2 * a] = static_cast<int>(std::floor((lo[a] - 3) * s[a]));
      b[2 * a + 1] = static_cast<int>(std::ceil((hi[a] + 1) * s[a])) + 1;
    }
    folded_voxels(ref, grid, VoxelBox{b[0], b[1], b[2], b[3], b[4], b[5]}, folded, threads);
  }
  rep.folded_after = folded.size();  // every voxel changed since the first scan was scanned again
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace evk::reg_deform
