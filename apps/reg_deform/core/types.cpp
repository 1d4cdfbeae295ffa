#include "core/types.hpp"

#include <cmath>
#include <stdexcept>

namespace evk::reg_deform {

Geometry Geometry::make(int nx, int ny, int nz, double dx, double dy, double dz, std::array<double, 3> origin) {
  Geometry g;
  g.nx = nx;
  g.ny = ny;
  g.nz = nz;
  g.dx = dx;
  g.dy = dy;
  g.dz = dz;
  g.qform = Mat44::diag(dx, dy, dz);
  for (int a = 0; a < 3; ++a) g.qform.m[a][3] = origin[a];
  g.sform = g.qform;
  g.qform_code = g.sform_code = 1;
  g.update_world();
  return g;
}

Mat44 Mat44::diag(double a, double b, double c) {
  Mat44 r;
  r.m[0][0] = a;
  r.m[1][1] = b;
  r.m[2][2] = c;
  return r;
}

std::array<double, 3> Mat44::apply(double i, double j, double k) const {
  std::array<double, 3> w{};
  for (int r = 0; r < 3; ++r) w[r] = m[r][0] * i + m[r][1] * j + m[r][2] * k + m[r][3];
  return w;
}

Mat44 Mat44::operator*(const Mat44& o) const {
  Mat44 r;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += m[i][k] * o.m[k][j];
      r.m[i][j] = s;
    }
  return r;
}

Mat44 Mat44::inverse() const {
  // Gauss-Jordan with partial pivoting on [M | I].
  double a[4][8];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) a[i][j] = j < 4 ? m[i][j] : (j - 4 == i ? 1 : 0);
  for (int c = 0; c < 4; ++c) {
    int p = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    if (std::fabs(a[p][c]) < 1e-12) throw std::runtime_error("singular matrix");
    if (p != c)
      for (int j = 0; j < 8; ++j) std::swap(a[p][j], a[c][j]);
    const double d = a[c][c];
    for (int j = 0; j < 8; ++j) a[c][j] /= d;
    for (int r = 0; r < 4; ++r)
      if (r != c) {
        const double f = a[r][c];
        for (int j = 0; j < 8; ++j) a[r][j] -= f * a[c][j];
      }
  }
  Mat44 r;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) r.m[i][j] = a[i][j + 4];
  return r;
}

}  // namespace evk::reg_deform
