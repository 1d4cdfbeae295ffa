// Small odd-sized test volumes and grids for the `register` stage tests (CPU and GPU suites).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/register/reg_grid.hpp"
#include "core/types.hpp"

namespace evk::reg_deform::testing {

inline std::uint64_t next(std::uint64_t& s) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  return s >> 11;
}
inline double uniform(std::uint64_t& s, double lo, double hi) { return lo + (hi - lo) * (next(s) % 1000003) / 1000003.0; }

// An oblique geometry (rotation about z and x) with anisotropic voxels.
inline Geometry oblique(int nx, int ny, int nz, double dx = 1.1, double dy = 0.9, double dz = 1.3) {
  Geometry g = Geometry::make(nx, ny, nz, dx, dy, dz, {-7.5, 4.0, 2.25});
  const double a = 0.2, b = -0.15;
  Mat44 rz, rx;
  rz.m[0][0] = std::cos(a), rz.m[0][1] = -std::sin(a), rz.m[1][0] = std::sin(a), rz.m[1][1] = std::cos(a);
  rx.m[1][1] = std::cos(b), rx.m[1][2] = -std::sin(b), rx.m[2][1] = std::sin(b), rx.m[2][2] = std::cos(b);
  g.sform = rz * rx * g.sform;
  g.qform = g.sform;
  g.update_world();
  return g;
}

// A smooth image: Gaussian blobs of different heights and sizes on a ramp (values ~0..100).
inline Volume blobs(const Geometry& g, std::uint64_t seed, int count = 6, double rmin = 2.5, double rmax = 5.5) {
  Volume v;
  v.geo = g;
  v.data.resize(g.voxels());
  std::uint64_t s = seed;
  std::vector<double> cx(count), cy(count), cz(count), h(count), r(count);
  for (int i = 0; i < count; ++i) {
    cx[i] = uniform(s, 0.15, 0.85) * g.nx;
    cy[i] = uniform(s, 0.15, 0.85) * g.ny;
    cz[i] = uniform(s, 0.15, 0.85) * g.nz;
    h[i] = uniform(s, 20, 80);
    r[i] = uniform(s, rmin, rmax);
  }
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        double val = 5 + 0.3 * x + 0.2 * y;
        for (int i = 0; i < count; ++i) {
          const double d2 = (x - cx[i]) * (x - cx[i]) + (y - cy[i]) * (y - cy[i]) + (z - cz[i]) * (z - cz[i]);
          val += h[i] * std::exp(-d2 / (2 * r[i] * r[i]));
        }
        v.data[g.index(x, y, z)] = static_cast<float>(val);
      }
  return v;
}

// A grid on `ref` at spacing s, the identity moved randomly by up to `mm` per coordinate.
inline Grid random_grid(const Geometry& ref, std::array<double, 3> s, double mm, std::uint64_t seed) {
  Grid g = make_grid3(ref, s);
  std::uint64_t st = seed;
  for (auto& v : g.data) v = static_cast<float>(v + uniform(st, -mm, mm));
  return g;
}

}  // namespace evk::reg_deform::testing
