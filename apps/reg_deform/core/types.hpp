// reg_deform's in-memory types: scalar volumes, control-point grids and deformation fields, each
// with its voxel-to-world matrix. No file format here (io/ converts NIfTI <-> these types).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace evk::reg_deform {

// A 4x4 affine matrix, row major: world = M * (i, j, k, 1).
struct Mat44 {
  std::array<std::array<double, 4>, 4> m{{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}};
  static Mat44 identity() { return {}; }
  static Mat44 diag(double a, double b, double c);
  std::array<double, 3> apply(double i, double j, double k) const;
  Mat44 operator*(const Mat44& o) const;
  Mat44 inverse() const;  // throws std::runtime_error for a singular matrix
};

// Geometry shared by every volume: sizes, voxel spacing (mm) and voxel -> world (mm).
struct Geometry {
  int nx = 0, ny = 0, nz = 0;
  double dx = 1, dy = 1, dz = 1;  // pixdim
  Mat44 vox2world;                // sform when set, else qform (what every computation uses)
  // Both NIfTI transforms as read or to be written (codes 0 = not set).
  int qform_code = 0, sform_code = 0;
  Mat44 qform, sform;
  // Sets vox2world from the sform when set, else the qform.
  void update_world() { vox2world = sform_code > 0 ? sform : qform; }
  // A plain geometry: diagonal spacing, origin `origin`, qform and sform both set (code 1 = scanner).
  static Geometry make(int nx, int ny, int nz, double dx = 1, double dy = 1, double dz = 1,
                       std::array<double, 3> origin = {0, 0, 0});
  std::size_t voxels() const { return static_cast<std::size_t>(nx) * ny * nz; }
  std::size_t index(int x, int y, int z) const { return (static_cast<std::size_t>(z) * ny + y) * nx + x; }
};

// A scalar volume (any datatype on disk, float here).
struct Volume {
  Geometry geo;
  std::vector<float> data;  // x fastest
};

// Cubic B-spline control-point grid: positions in world mm, planar (all x, then all y, then all z).
// Grid index (i, j, k) sits at reference voxel ((i-1)*sx, (j-1)*sy, (k-1)*sz).
struct Grid {
  Geometry geo;          // gx = geo.nx ...; vox2world maps grid indices to world
  double sx = 5, sy = 5, sz = 5;  // spacing in reference voxels
  std::vector<float> data;        // 3 * voxels
  std::size_t points() const { return geo.voxels(); }
};

// Dense deformation (absolute world mm) or displacement field, planar like the grid.
struct Field {
  Geometry geo;
  bool displacement = false;
  std::vector<float> data;  // 3 * voxels
};

// A transformation: a control-point grid or a dense deformation/displacement field.
enum class TransKind { deformation, displacement, grid };
struct Transformation {
  TransKind kind = TransKind::deformation;
  Grid grid;    // kind == grid
  Field field;  // otherwise
};

// Mask: nonzero = active. Same size as the reference; empty = every voxel active.
using Mask = std::vector<std::uint8_t>;

// The cubic B-spline weights of the formula for fractional position u in [0, 1).
inline void bspline_weights(double u, double w[4]) {
  const double u2 = u * u, u3 = u2 * u, m = 1 - u;
  w[0] = m * m * m / 6;
  w[1] = (3 * u3 - 6 * u2 + 4) / 6;
  w[2] = (-3 * u3 + 3 * u2 + 3 * u + 1) / 6;
  w[3] = u3 / 6;
}

}  // namespace evk::reg_deform
