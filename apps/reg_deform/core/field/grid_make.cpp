#include "core/field/grid_make.hpp"

#include <cmath>

#include "core/field/field_cpu.hpp"
#include "core/field/splitmix.hpp"
#include "evk/error.hpp"

namespace evk::reg_deform {

namespace {
Mat44 shift_scale(double s) {  // grid index -> reference voxel: i -> (i-1)*s
  Mat44 t = Mat44::diag(s, s, s);
  for (int a = 0; a < 3; ++a) t.m[a][3] = -s;
  return t;
}
}  // namespace

Geometry grid_geometry(const Geometry& ref, double s) {
  if (!(s > 0) || !std::isfinite(s)) input_error("--spacing", "must be a positive number of voxels");
  Geometry g = ref;
  g.nx = grid_points_niftyreg(ref.nx, s);
  g.ny = grid_points_niftyreg(ref.ny, s);
  g.nz = grid_points_niftyreg(ref.nz, s);
  g.dx = ref.dx * s;
  g.dy = ref.dy * s;
  g.dz = ref.dz * s;
  const Mat44 t = shift_scale(s);
  g.qform = ref.qform * t;
  g.sform = ref.sform * t;
  g.update_world();
  return g;
}

Grid make_grid(const Geometry& ref, double spacing, const Mat44& affine) {
  Grid grid;
  grid.geo = grid_geometry(ref, spacing);
  grid.sx = grid.sy = grid.sz = spacing;
  const std::size_t np = grid.points();
  grid.data.resize(3 * np);
  const Mat44 m = affine * grid.geo.vox2world;
  for (int k = 0; k < grid.geo.nz; ++k)
    for (int j = 0; j < grid.geo.ny; ++j)
      for (int i = 0; i < grid.geo.nx; ++i) {
        const auto p = m.apply(i, j, k);
        const std::size_t idx = grid.geo.index(i, j, k);
        for (int a = 0; a < 3; ++a) grid.data[a * np + idx] = static_cast<float>(p[a]);
      }
  return grid;
}

void attach_grid(Grid& grid, const Geometry& ref, const std::string& what) {
  Mat44 m;
  try {
    m = ref.vox2world.inverse() * grid.geo.vox2world;  // grid index -> reference voxel
  } catch (const std::exception&) {
    input_error(what, "singular voxel-to-world matrix");
  }
  double s[3];
  for (int a = 0; a < 3; ++a) {
    s[a] = m.m[a][a];
    const double tol = 1e-3 * std::max(1.0, std::fabs(s[a]));
    for (int b = 0; b < 3; ++b)
      if (b != a && std::fabs(m.m[a][b]) > tol)
        input_error(what, "grid axes are not aligned with the reference's voxel axes");
    if (!(s[a] > 0)) input_error(what, "grid spacing is not positive along the reference's voxel axes");
    if (std::fabs(m.m[a][3] + s[a]) > tol)
      input_error(what, "grid origin is not one control point before the reference origin (axis " +
                            std::to_string(a) + ": " + std::to_string(m.m[a][3]) + " voxels, expected " +
                            std::to_string(-s[a]) + ")");
    // Snap to the nearest integer or half-integer spacing when within rounding.
    const double r = std::round(s[a] * 2) / 2;
    if (std::fabs(r - s[a]) < 1e-4) s[a] = r;
  }
  grid.sx = s[0];
  grid.sy = s[1];
  grid.sz = s[2];
  check_grid_fits(ref, grid, what);
}

void perturb_grid(Grid& grid, double mm, std::uint64_t seed) {
  SplitMix64 rng(seed);
  for (auto& v : grid.data) v = static_cast<float>(v + rng.uniform(-mm, mm));
}

}  // namespace evk::reg_deform
