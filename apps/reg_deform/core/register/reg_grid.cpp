#include "core/register/reg_grid.hpp"

#include <cmath>
#include <vector>

#include "core/field/field_cpu.hpp"
#include "evk/error.hpp"

namespace evk::reg_deform {

std::array<double, 3> snap_spacing(std::array<double, 3> s) {
  for (double& v : s) {
    if (!(v > 0) || !std::isfinite(v)) input_error("--sx", "control-point spacing must be positive");
    const double r = std::round(v * 2) / 2;  // 5.000000001 voxels is 5 (the tiled GPU kernel needs exactly 5)
    if (std::fabs(r - v) < 1e-6 * v) v = r;
  }
  return s;
}

Geometry grid_geometry3(const Geometry& ref, const std::array<double, 3>& s_in) {
  const std::array<double, 3> s = snap_spacing(s_in);
  Geometry g = ref;
  g.nx = grid_points_niftyreg(ref.nx, s[0]);
  g.ny = grid_points_niftyreg(ref.ny, s[1]);
  g.nz = grid_points_niftyreg(ref.nz, s[2]);
  g.dx = ref.dx * s[0];
  g.dy = ref.dy * s[1];
  g.dz = ref.dz * s[2];
  Mat44 t = Mat44::diag(s[0], s[1], s[2]);  // grid index -> reference voxel: i -> (i-1)*s
  for (int a = 0; a < 3; ++a) t.m[a][3] = -s[a];
  g.qform = ref.qform * t;
  g.sform = ref.sform * t;
  g.update_world();
  return g;
}

Grid make_grid3(const Geometry& ref, const std::array<double, 3>& s, const Mat44& affine) {
  Grid grid;
  grid.geo = grid_geometry3(ref, s);
  const std::array<double, 3> ss = snap_spacing(s);
  grid.sx = ss[0];
  grid.sy = ss[1];
  grid.sz = ss[2];
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

namespace {
// One axis of the subdivision: in[n] (stride 1 view through get) -> out[m] at fine indices.
// c(i) for i outside [0, n) is extrapolated linearly from the two nearest values.
void refine_line(const double* in, int n, double* out, int m) {
  auto c = [&](int i) {
    if (n == 1) return in[0];
    if (i < 0) return in[0] + i * (in[1] - in[0]);
    if (i >= n) return in[n - 1] + (i - n + 1) * (in[n - 1] - in[n - 2]);
    return in[i];
  };
  for (int I = 0; I < m; ++I) {
    if (I % 2 == 1) {  // I = 2i - 1: even-type point at coarse i
      const int i = (I + 1) / 2;
      out[I] = (c(i - 1) + 6 * c(i) + c(i + 1)) / 8;
    } else {  // I = 2i: between coarse i and i + 1
      const int i = I / 2;
      out[I] = (c(i) + c(i + 1)) / 2;
    }
  }
}
}  // namespace

Grid refine_grid(const Grid& coarse, const Geometry& ref) {
  // New spacing in the new reference's voxels: half the coarse world spacing.
  const std::array<double, 3> s = {coarse.geo.dx / 2 / ref.dx, coarse.geo.dy / 2 / ref.dy, coarse.geo.dz / 2 / ref.dz};
  Grid fine;
  fine.geo = grid_geometry3(ref, s);
  const std::array<double, 3> ss = snap_spacing(s);
  fine.sx = ss[0];
  fine.sy = ss[1];
  fine.sz = ss[2];
  const int cn[3] = {coarse.geo.nx, coarse.geo.ny, coarse.geo.nz};
  const int fn[3] = {fine.geo.nx, fine.geo.ny, fine.geo.nz};
  const std::size_t cnp = coarse.points(), fnp = fine.points();
  fine.data.resize(3 * fnp);
  std::vector<double> a(static_cast<std::size_t>(fn[0]) * cn[1] * cn[2]), b(static_cast<std::size_t>(fn[0]) * fn[1] * cn[2]);
  std::vector<double> lin, lout;
  for (int comp = 0; comp < 3; ++comp) {
    const float* src = coarse.data.data() + comp * cnp;
    // x
    lin.resize(cn[0]);
    lout.resize(fn[0]);
    for (int k = 0; k < cn[2]; ++k)
      for (int j = 0; j < cn[1]; ++j) {
        for (int i = 0; i < cn[0]; ++i) lin[i] = src[(static_cast<std::size_t>(k) * cn[1] + j) * cn[0] + i];
        refine_line(lin.data(), cn[0], lout.data(), fn[0]);
        for (int I = 0; I < fn[0]; ++I) a[(static_cast<std::size_t>(k) * cn[1] + j) * fn[0] + I] = lout[I];
      }
    // y
    lin.resize(cn[1]);
    lout.resize(fn[1]);
    for (int k = 0; k < cn[2]; ++k)
      for (int I = 0; I < fn[0]; ++I) {
        for (int j = 0; j < cn[1]; ++j) lin[j] = a[(static_cast<std::size_t>(k) * cn[1] + j) * fn[0] + I];
        refine_line(lin.data(), cn[1], lout.data(), fn[1]);
        for (int J = 0; J < fn[1]; ++J) b[(static_cast<std::size_t>(k) * fn[1] + J) * fn[0] + I] = lout[J];
      }
    // z
    lin.resize(cn[2]);
    lout.resize(fn[2]);
    float* dst = fine.data.data() + comp * fnp;
    for (int J = 0; J < fn[1]; ++J)
      for (int I = 0; I < fn[0]; ++I) {
        for (int k = 0; k < cn[2]; ++k) lin[k] = b[(static_cast<std::size_t>(k) * fn[1] + J) * fn[0] + I];
        refine_line(lin.data(), cn[2], lout.data(), fn[2]);
        for (int K = 0; K < fn[2]; ++K) dst[(static_cast<std::size_t>(K) * fn[1] + J) * fn[0] + I] = static_cast<float>(lout[K]);
      }
  }
  return fine;
}

}  // namespace evk::reg_deform
