#include "core/register/reg_adjoint_cpu.hpp"

#include <algorithm>

#include "core/register/reg_field_cpu.hpp"
#include "evk/parallel.hpp"

namespace evk::reg_deform {

void spline_adjoint_cpu(const Geometry& ref, const Grid& grid, const float* voxel, double* node, int threads) {
  const int nx = ref.nx, ny = ref.ny, nz = ref.nz;
  const int gx = grid.geo.nx, gy = grid.geo.ny, gz = grid.geo.nz;
  const std::size_t nv = ref.voxels(), np = grid.points();
  std::vector<AxisWeights> wx(nx), wy(ny), wz(nz);
  for (int i = 0; i < nx; ++i) wx[i] = axis_weights_at(i, grid.sx);
  for (int i = 0; i < ny; ++i) wy[i] = axis_weights_at(i, grid.sy);
  for (int i = 0; i < nz; ++i) wz[i] = axis_weights_at(i, grid.sz);
  // t1[comp][z][y][i], t2[comp][z][j][i]
  const std::size_t n1 = static_cast<std::size_t>(gx) * ny * nz, n2 = static_cast<std::size_t>(gx) * gy * nz;
  std::vector<double> t1(3 * n1, 0.0), t2(3 * n2, 0.0);
  parallel_for(
      static_cast<std::size_t>(ny) * nz,
      [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r)
          for (int comp = 0; comp < 3; ++comp) {
            const float* g = voxel + comp * nv + r * nx;
            double* o = t1.data() + comp * n1 + r * gx;
            for (int x = 0; x < nx; ++x) {
              const double v = g[x];
              if (v == 0) continue;
              const AxisWeights& a = wx[x];
              for (int k = 0; k < 4; ++k) o[a.i0 + k] += a.w[k] * v;
            }
          }
      },
      threads);
  parallel_for(
      static_cast<std::size_t>(nz),
      [&](std::size_t z0, std::size_t z1) {
        for (std::size_t z = z0; z < z1; ++z)
          for (int comp = 0; comp < 3; ++comp)
            for (int y = 0; y < ny; ++y) {
              const double* in = t1.data() + comp * n1 + (z * ny + y) * gx;
              const AxisWeights& a = wy[y];
              for (int b = 0; b < 4; ++b) {
                double* o = t2.data() + comp * n2 + (z * gy + a.i0 + b) * gx;
                const double w = a.w[b];
                for (int i = 0; i < gx; ++i) o[i] += w * in[i];
              }
            }
      },
      threads);
  std::fill(node, node + 3 * np, 0.0);
  parallel_for(
      static_cast<std::size_t>(gy),
      [&](std::size_t j0, std::size_t j1) {
        for (int comp = 0; comp < 3; ++comp)
          for (int z = 0; z < nz; ++z) {
            const AxisWeights& a = wz[z];
            for (std::size_t j = j0; j < j1; ++j) {
              const double* in = t2.data() + comp * n2 + (static_cast<std::size_t>(z) * gy + j) * gx;
              for (int c = 0; c < 4; ++c) {
                double* o = node + comp * np + (static_cast<std::size_t>(a.i0 + c) * gy + j) * gx;
                const double w = a.w[c];
                for (int i = 0; i < gx; ++i) o[i] += w * in[i];
              }
            }
          }
      },
      threads);
  (void)gz;
}

}  // namespace evk::reg_deform
