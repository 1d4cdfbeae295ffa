#include "core/register/reg_jacobian_cpu.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

#include "core/field/field_cpu.hpp"
#include "evk/parallel.hpp"

namespace evk::reg_deform {

namespace {
struct Axis {
  int i0;
  double w[4], d[4];  // weights and their derivatives with respect to the voxel coordinate
};
Axis axis_at(int v, double s) {
  const double t = v / s;
  Axis a;
  a.i0 = static_cast<int>(std::floor(t));
  const double u = t - a.i0, u2 = u * u, m = 1 - u;
  bspline_weights(u, a.w);
  a.d[0] = -m * m / 2 / s;
  a.d[1] = (3 * u2 / 2 - 2 * u) / s;
  a.d[2] = (-3 * u2 / 2 + u + 0.5) / s;
  a.d[3] = u2 / 2 / s;
  return a;
}
double det_from(const double P[3][3], const Mat44& w2v) {
  // P[d][c] = d pos_c / d voxel_d; J[c][k] = sum_d P[d][c] * w2v[d][k]
  double J[3][3];
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k) J[c][k] = P[0][c] * w2v.m[0][k] + P[1][c] * w2v.m[1][k] + P[2][c] * w2v.m[2][k];
  return J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
         J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
}
}  // namespace

double voxel_jacobian(const Geometry& ref, const Grid& grid, int x, int y, int z) {
  const Axis ax = axis_at(x, grid.sx), ay = axis_at(y, grid.sy), az = axis_at(z, grid.sz);
  const std::size_t np = grid.points();
  double P[3][3] = {};
  for (int c = 0; c < 4; ++c)
    for (int b = 0; b < 4; ++b)
      for (int a = 0; a < 4; ++a) {
        const std::size_t idx = grid.geo.index(ax.i0 + a, ay.i0 + b, az.i0 + c);
        const double wd[3] = {ax.d[a] * ay.w[b] * az.w[c], ax.w[a] * ay.d[b] * az.w[c], ax.w[a] * ay.w[b] * az.d[c]};
        for (int comp = 0; comp < 3; ++comp) {
          const double p = grid.data[comp * np + idx];
          for (int d = 0; d < 3; ++d) P[d][comp] += wd[d] * p;
        }
      }
  return det_from(P, ref.vox2world.inverse());
}

namespace {
// The voxels of box b (clipped to the reference) : the stats and, when `folded` is given, the
// folded voxels (x, y, z).
JacobianStats scan(const Geometry& ref, const Grid& grid, const Mask& mask, VoxelBox b, int threads,
                   std::vector<std::array<int, 3>>* folded) {
  check_grid_fits(ref, grid, "grid");
  const int x1 = std::clamp(b.x1, 0, ref.nx), y1 = std::clamp(b.y1, 0, ref.ny), z1 = std::clamp(b.z1, 0, ref.nz);
  const int x0 = std::clamp(b.x0, 0, x1), y0 = std::clamp(b.y0, 0, y1), z0 = std::clamp(b.z0, 0, z1);
  const int ny = y1 - y0;
  const Mat44 w2v = ref.vox2world.inverse();
  const int gx = grid.geo.nx, gy = grid.geo.ny;
  const std::size_t np = grid.points();
  std::vector<Axis> wx(ref.nx);
  for (int x = x0; x < x1; ++x) wx[x] = axis_at(x, grid.sx);
  // the control-point columns the box's voxels use
  const int i_lo = x1 > x0 ? wx[x0].i0 : 0, i_hi = x1 > x0 ? std::min(wx[x1 - 1].i0 + 4, gx) : 0;
  JacobianStats st;
  st.min = std::numeric_limits<double>::infinity();
  st.max = -st.min;
  std::mutex mu;
  if (ny <= 0 || z1 <= z0 || x1 <= x0) return st;
  parallel_for(
      static_cast<std::size_t>(ny) * static_cast<std::size_t>(z1 - z0),
      [&](std::size_t r0, std::size_t r1) {
        JacobianStats loc;
        loc.min = std::numeric_limits<double>::infinity();
        loc.max = -loc.min;
        std::vector<std::array<int, 3>> list;
        std::vector<double> L(9 * static_cast<std::size_t>(gx));  // [kind][comp][i]: B B, dBy B, B dBz
        for (std::size_t r = r0; r < r1; ++r) {
          const int y = y0 + static_cast<int>(r % ny), z = z0 + static_cast<int>(r / ny);
          const Axis ay = axis_at(y, grid.sy), az = axis_at(z, grid.sz);
          for (int i = i_lo; i < i_hi; ++i)
            for (int comp = 0; comp < 3; ++comp) {
              double s0 = 0, sy = 0, sz = 0;
              for (int c = 0; c < 4; ++c)
                for (int b = 0; b < 4; ++b) {
                  const double p = grid.data[comp * np + (static_cast<std::size_t>(az.i0 + c) * gy + ay.i0 + b) * gx + i];
                  s0 += ay.w[b] * az.w[c] * p;
                  sy += ay.d[b] * az.w[c] * p;
                  sz += ay.w[b] * az.d[c] * p;
                }
              L[(0 * 3 + comp) * gx + i] = s0;
              L[(1 * 3 + comp) * gx + i] = sy;
              L[(2 * 3 + comp) * gx + i] = sz;
            }
          for (int x = x0; x < x1; ++x) {
            const std::size_t v = ref.index(x, y, z);
            if (!mask.empty() && !mask[v]) continue;
            const Axis& a = wx[x];
            double P[3][3];
            for (int comp = 0; comp < 3; ++comp) {
              const double* l0 = L.data() + (0 * 3 + comp) * gx + a.i0;
              const double* ly = L.data() + (1 * 3 + comp) * gx + a.i0;
              const double* lz = L.data() + (2 * 3 + comp) * gx + a.i0;
              P[0][comp] = a.d[0] * l0[0] + a.d[1] * l0[1] + a.d[2] * l0[2] + a.d[3] * l0[3];
              P[1][comp] = a.w[0] * ly[0] + a.w[1] * ly[1] + a.w[2] * ly[2] + a.w[3] * ly[3];
              P[2][comp] = a.w[0] * lz[0] + a.w[1] * lz[1] + a.w[2] * lz[2] + a.w[3] * lz[3];
            }
            const double det = det_from(P, w2v);
            loc.min = std::min(loc.min, det);
            loc.max = std::max(loc.max, det);
            if (det <= 0) {
              ++loc.folded;
              if (folded) list.push_back({x, y, z});
            }
            ++loc.voxels;
          }
        }
        std::lock_guard<std::mutex> lock(mu);
        st.min = std::min(st.min, loc.min);
        st.max = std::max(st.max, loc.max);
        st.folded += loc.folded;
        st.voxels += loc.voxels;
        if (folded) folded->insert(folded->end(), list.begin(), list.end());
      },
      threads);
  return st;
}
}  // namespace

JacobianStats voxel_jacobian_stats(const Geometry& ref, const Grid& grid, const Mask& mask, int threads) {
  return scan(ref, grid, mask, VoxelBox{0, ref.nx, 0, ref.ny, 0, ref.nz}, threads, nullptr);
}

JacobianStats folded_voxels(const Geometry& ref, const Grid& grid, const VoxelBox& box, std::vector<std::array<int, 3>>& out,
                            int threads) {
  out.clear();
  return scan(ref, grid, {}, box, threads, &out);
}

}  // namespace evk::reg_deform
