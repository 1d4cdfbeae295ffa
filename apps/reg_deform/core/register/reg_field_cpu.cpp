#include "core/register/reg_field_cpu.hpp"

#include "core/field/field_cpu.hpp"
#include "evk/parallel.hpp"

namespace evk::reg_deform {

void spline_field_cpu(const Geometry& ref, const Grid& grid, const Mask& mask, float* out, int threads) {
  check_grid_fits(ref, grid, "grid");
  const std::size_t nv = ref.voxels(), np = grid.points();
  const int gx = grid.geo.nx, gy = grid.geo.ny;
  const float* c[3] = {grid.data.data(), grid.data.data() + np, grid.data.data() + 2 * np};
  // x weights are the same for every row
  std::vector<AxisWeights> wx(ref.nx);
  for (int x = 0; x < ref.nx; ++x) wx[x] = axis_weights_at(x, grid.sx);
  const std::size_t rows = static_cast<std::size_t>(ref.ny) * ref.nz;
  parallel_for(
      rows,
      [&](std::size_t r0, std::size_t r1) {
        std::vector<double> line(3 * static_cast<std::size_t>(gx));
        for (std::size_t r = r0; r < r1; ++r) {
          const int y = static_cast<int>(r % ref.ny), z = static_cast<int>(r / ref.ny);
          const std::size_t row0 = ref.index(0, y, z);
          bool any = mask.empty();
          for (int x = 0; x < ref.nx && !any; ++x) any = mask[row0 + x] != 0;
          if (!any) continue;
          const AxisWeights ay = axis_weights_at(y, grid.sy), az = axis_weights_at(z, grid.sz);
          // line[a][i] = sum_{b,c} By_b Bz_c cp_a(i, j0 + b, k0 + c)
          for (int i = 0; i < gx; ++i) {
            double s[3] = {0, 0, 0};
            for (int cc = 0; cc < 4; ++cc)
              for (int b = 0; b < 4; ++b) {
                const double w = az.w[cc] * ay.w[b];
                const std::size_t idx = (static_cast<std::size_t>(az.i0 + cc) * gy + ay.i0 + b) * gx + i;
                s[0] += w * c[0][idx];
                s[1] += w * c[1][idx];
                s[2] += w * c[2][idx];
              }
            line[i] = s[0];
            line[gx + i] = s[1];
            line[2 * gx + i] = s[2];
          }
          for (int x = 0; x < ref.nx; ++x) {
            const std::size_t v = row0 + x;
            if (!mask.empty() && !mask[v]) continue;
            const AxisWeights& a = wx[x];
            for (int comp = 0; comp < 3; ++comp) {
              const double* l = line.data() + static_cast<std::size_t>(comp) * gx + a.i0;
              out[comp * nv + v] = static_cast<float>(a.w[0] * l[0] + a.w[1] * l[1] + a.w[2] * l[2] + a.w[3] * l[3]);
            }
          }
        }
      },
      threads);
}

}  // namespace evk::reg_deform
