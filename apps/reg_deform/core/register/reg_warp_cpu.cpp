#include "core/register/reg_warp_cpu.hpp"

#include <cmath>
#include <limits>

#include "evk/parallel.hpp"

namespace evk::reg_deform {

void warp_field_cpu(const Volume& flo, const Mask& flo_mask, const Geometry& ref, const Mask& ref_mask,
                     const float* field, float* warped, float* grad, int threads) {
  const std::size_t nv = ref.voxels();
  const Geometry& fg = flo.geo;
  const Mat44 w2v = fg.vox2world.inverse();
  const float* f = flo.data.data();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  parallel_for(
      nv,
      [&](std::size_t v0, std::size_t v1) {
        for (std::size_t v = v0; v < v1; ++v) {
          warped[v] = nan;
          if (grad) grad[v] = grad[nv + v] = grad[2 * nv + v] = 0.0f;
          if (!ref_mask.empty() && !ref_mask[v]) continue;
          const auto q = w2v.apply(field[v], field[nv + v], field[2 * nv + v]);
          // range test in double first (NaN/huge positions never reach the int conversion), as the GPU
          if (!(q[0] >= 0 && q[1] >= 0 && q[2] >= 0 && q[0] < fg.nx - 1 && q[1] < fg.ny - 1 && q[2] < fg.nz - 1)) continue;
          const int x0 = static_cast<int>(std::floor(q[0])), y0 = static_cast<int>(std::floor(q[1])),
                    z0 = static_cast<int>(std::floor(q[2]));
          if (!(x0 >= 0 && y0 >= 0 && z0 >= 0 && x0 + 1 < fg.nx && y0 + 1 < fg.ny && z0 + 1 < fg.nz)) continue;
          if (!flo_mask.empty()) {
            const int xr = static_cast<int>(std::lround(q[0])), yr = static_cast<int>(std::lround(q[1])),
                      zr = static_cast<int>(std::lround(q[2]));
            if (!flo_mask[fg.index(xr, yr, zr)]) continue;
          }
          const double u[3] = {q[0] - x0, q[1] - y0, q[2] - z0};
          const double wx[2] = {1 - u[0], u[0]}, wy[2] = {1 - u[1], u[1]}, wz[2] = {1 - u[2], u[2]};
          const double d[2] = {-1, 1};
          double val = 0, gx = 0, gy = 0, gz = 0;
          for (int c = 0; c < 2; ++c)
            for (int b = 0; b < 2; ++b)
              for (int a = 0; a < 2; ++a) {
                const double s = f[fg.index(x0 + a, y0 + b, z0 + c)];
                val += wx[a] * wy[b] * wz[c] * s;
                gx += d[a] * wy[b] * wz[c] * s;
                gy += wx[a] * d[b] * wz[c] * s;
                gz += wx[a] * wy[b] * d[c] * s;
              }
          warped[v] = static_cast<float>(val);
          if (grad) {
            // world gradient = M^T * voxel gradient, M = world -> floating voxel (3x3 part)
            for (int r = 0; r < 3; ++r)
              grad[r * nv + v] = static_cast<float>(w2v.m[0][r] * gx + w2v.m[1][r] * gy + w2v.m[2][r] * gz);
          }
        }
      },
      threads);
}

}  // namespace evk::reg_deform
