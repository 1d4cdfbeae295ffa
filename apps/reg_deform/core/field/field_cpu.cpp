#include "core/field/field_cpu.hpp"

#include <cmath>

#include "evk/error.hpp"
#include "evk/parallel.hpp"

namespace evk::reg_deform {

int grid_points_needed(int n, double s) { return static_cast<int>(std::floor((n - 1) / s)) + 4; }
int grid_points_niftyreg(int n, double s) { return static_cast<int>(std::ceil(n / s + 3)); }

void check_grid_fits(const Geometry& ref, const Grid& grid, const std::string& what) {
  const double s[3] = {grid.sx, grid.sy, grid.sz};
  const int n[3] = {ref.nx, ref.ny, ref.nz}, g[3] = {grid.geo.nx, grid.geo.ny, grid.geo.nz};
  for (int a = 0; a < 3; ++a) {
    if (!(s[a] > 0) || !std::isfinite(s[a])) input_error(what, "control-point spacing must be positive");
    const int need = grid_points_needed(n[a], s[a]);
    if (g[a] < need)
      input_error(what, "grid dims " + std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]) +
                            " do not fit a reference of " + std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" +
                            std::to_string(n[2]) + " voxels at spacing " + std::to_string(s[a]) + " (axis " +
                            std::to_string(a) + " needs " + std::to_string(need) + ")");
  }
  if (grid.data.size() != 3 * grid.points()) input_error(what, "grid data size does not match its dims");
}

namespace {
struct Axis {
  int i0;
  double w[4];
};
Axis axis_weights(int x, double s) {
  const double t = x / s;
  Axis a;
  a.i0 = static_cast<int>(std::floor(t));
  bspline_weights(t - a.i0, a.w);
  return a;
}
}  // namespace

std::array<double, 3> bspline_position(const Grid& grid, int x, int y, int z) {
  const Axis ax = axis_weights(x, grid.sx), ay = axis_weights(y, grid.sy), az = axis_weights(z, grid.sz);
  const std::size_t np = grid.points();
  const float* gx = grid.data.data();
  const float* gy = gx + np;
  const float* gz = gy + np;
  double p[3] = {0, 0, 0};
  for (int c = 0; c < 4; ++c) {
    for (int b = 0; b < 4; ++b) {
      const double wzy = az.w[c] * ay.w[b];
      const std::size_t row = grid.geo.index(ax.i0, ay.i0 + b, az.i0 + c);
      for (int a = 0; a < 4; ++a) {
        const double w = wzy * ax.w[a];
        p[0] += w * gx[row + a];
        p[1] += w * gy[row + a];
        p[2] += w * gz[row + a];
      }
    }
  }
  return {p[0], p[1], p[2]};
}

Field compute_field_cpu(const Geometry& ref, const Grid& grid, const Mask& mask, const FieldOptions& opt) {
  check_grid_fits(ref, grid, "grid");
  if (!mask.empty() && mask.size() != ref.voxels()) input_error("mask", "size does not match the reference");
  Field f;
  f.geo = ref;
  f.displacement = opt.displacement;
  const std::size_t nv = ref.voxels();
  f.data.resize(3 * nv);
  float* out = f.data.data();
  const std::size_t rows = static_cast<std::size_t>(ref.ny) * ref.nz;
  parallel_for(
      rows,
      [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r) {
          const int y = static_cast<int>(r % ref.ny), z = static_cast<int>(r / ref.ny);
          for (int x = 0; x < ref.nx; ++x) {
            const std::size_t i = ref.index(x, y, z);
            const auto own = ref.vox2world.apply(x, y, z);
            std::array<double, 3> p = own;
            if (mask.empty() || mask[i]) p = bspline_position(grid, x, y, z);
            for (int a = 0; a < 3; ++a)
              out[a * nv + i] = static_cast<float>(opt.displacement ? p[a] - own[a] : p[a]);
          }
        }
      },
      opt.threads);
  return f;
}

namespace {
void shift_by_own(Field& f, double sign) {
  const std::size_t nv = f.geo.voxels();
  const Geometry& g = f.geo;
  parallel_for(static_cast<std::size_t>(g.ny) * g.nz, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      const int y = static_cast<int>(r % g.ny), z = static_cast<int>(r / g.ny);
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = g.index(x, y, z);
        const auto own = g.vox2world.apply(x, y, z);
        for (int a = 0; a < 3; ++a) f.data[a * nv + i] = static_cast<float>(f.data[a * nv + i] + sign * own[a]);
      }
    }
  });
}
}  // namespace

void to_deformation(Field& f) {
  if (!f.displacement) return;
  shift_by_own(f, +1);
  f.displacement = false;
}

}  // namespace evk::reg_deform
