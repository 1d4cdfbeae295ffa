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
  JacobianStats st = folded_voxels(ref, grid, 0, -1, folded, threads);
  rep.folded_before = st.folded;
  rep.min_det_before = st.min;
  int z0 = 0, z1 = -1;
  while (!folded.empty() && rep.rounds < max_rounds) {
    const int widen = std::min(rep.rounds / 25, 4);
    const std::vector<std::size_t> pts = marked_points(grid, folded, widen);
    smooth(grid, pts);
    rep.moves += pts.size();
    ++rep.rounds;
    // the rows the moved points reach: control point k acts on voxels z with floor(z / sz) in [k - 3, k]
    int kmin = grid.geo.nz, kmax = -1;
    for (std::size_t p : pts) {
      const int k = static_cast<int>(p / grid.geo.nx / grid.geo.ny);
      kmin = std::min(kmin, k);
      kmax = std::max(kmax, k);
    }
    z0 = std::max(0, static_cast<int>(std::floor((kmin - 3) * grid.sz)));
    z1 = std::min(ref.nz, static_cast<int>(std::ceil((kmax + 1) * grid.sz)) + 1);
    folded_voxels(ref, grid, z0, z1, folded, threads);
  }
  st = rep.rounds ? voxel_jacobian_stats(ref, grid, {}, threads) : st;  // the whole grid once more
  rep.folded_after = st.folded;
  rep.min_det_after = st.min;
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace evk::reg_deform
