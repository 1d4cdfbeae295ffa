// Test helpers for reg_deform affine (CPU and GPU suites): a textured head phantom, random
// transforms in the ranges, and the mean/max mapping error over the head voxels.
#pragma once
#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "core/affine/warp_affine.hpp"
#include "core/types.hpp"

namespace evk::reg_deform::testing {
namespace rd = evk::reg_deform;

inline constexpr double kPi = 3.14159265358979323846;

inline rd::Mat44 rotation(double ax, double ay, double az) {  // radians, R = Rz Ry Rx
  rd::Mat44 x, y, z;
  x.m[1][1] = std::cos(ax), x.m[1][2] = -std::sin(ax), x.m[2][1] = std::sin(ax), x.m[2][2] = std::cos(ax);
  y.m[0][0] = std::cos(ay), y.m[0][2] = std::sin(ay), y.m[2][0] = -std::sin(ay), y.m[2][2] = std::cos(ay);
  z.m[0][0] = std::cos(az), z.m[0][1] = -std::sin(az), z.m[1][0] = std::sin(az), z.m[1][1] = std::cos(az);
  return z * y * x;
}

// A random transform in the ranges: rotations up to 20 degrees, translations up to 20 mm,
// and for affine also scalings 0.9-1.1 and shears up to 0.05.
inline rd::Mat44 random_transform(std::mt19937_64& rng, bool affine) {
  std::uniform_real_distribution<double> rot(-20 * kPi / 180, 20 * kPi / 180), tr(-20, 20), sc(0.9, 1.1),
      sh(-0.05, 0.05);
  rd::Mat44 m = rotation(rot(rng), rot(rng), rot(rng));
  if (affine) {
    rd::Mat44 s = rd::Mat44::diag(sc(rng), sc(rng), sc(rng));
    s.m[0][1] = sh(rng), s.m[0][2] = sh(rng), s.m[1][2] = sh(rng);
    m = m * s;
  }
  for (int a = 0; a < 3; ++a) m.m[a][3] = tr(rng);
  return m;
}

// A head-like phantom: an ellipsoid of smooth random texture (Gaussian blobs) inside a bright
// shell, world origin at the volume centre. `head` marks the ellipsoid's voxels.
struct Phantom {
  rd::Volume v;
  rd::Mask head;
};
inline Phantom make_phantom(int n, double d, std::uint64_t seed) {
  Phantom p;
  const double o = -(n - 1) * d / 2;
  p.v.geo = rd::Geometry::make(n, n, n, d, d, d, {o, o, o});
  p.v.data.assign(p.v.geo.voxels(), 0.f);
  p.head.assign(p.v.geo.voxels(), 0);
  std::mt19937_64 rng(seed);
  const double rx = 0.33 * n * d, ry = 0.38 * n * d, rz = 0.30 * n * d;
  std::uniform_real_distribution<double> u(-1, 1), amp(20, 100), sig(3, 8);
  struct Blob { double x, y, z, a, s; };
  std::vector<Blob> blobs;
  for (int b = 0; b < 60; ++b) blobs.push_back({u(rng) * rx, u(rng) * ry, u(rng) * rz, amp(rng), sig(rng)});
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const auto w = p.v.geo.vox2world.apply(x, y, z);
        const double e = std::sqrt(w[0] * w[0] / (rx * rx) + w[1] * w[1] / (ry * ry) + w[2] * w[2] / (rz * rz));
        const std::size_t i = p.v.geo.index(x, y, z);
        if (e > 1.12) continue;
        double val = e > 1.0 ? 150 : 40;  // shell, then texture inside
        if (e <= 1.0) {
          p.head[i] = 1;
          for (const auto& b : blobs) {
            const double r2 = (w[0] - b.x) * (w[0] - b.x) + (w[1] - b.y) * (w[1] - b.y) + (w[2] - b.z) * (w[2] - b.z);
            val += b.a * std::exp(-r2 / (2 * b.s * b.s));
          }
        }
        p.v.data[i] = static_cast<float>(val);
      }
  return p;
}

// The floating image for a known transform T (reference world -> floating world): flo(T x) = ref(x).
inline rd::Volume floating_for(const rd::Volume& ref, const rd::Mat44& t) {
  rd::ResampleOptions ro;
  ro.interp = rd::Interp::cubic;
  return rd::warp_affine_cpu(ref.geo, ref, t.inverse(), ro);
}

// Mean and max distance (mm) between two matrices' images of the head voxels.
inline std::pair<double, double> mapping_error(const Phantom& p, const rd::Mat44& a, const rd::Mat44& b) {
  double sum = 0, mx = 0;
  std::size_t n = 0;
  const rd::Geometry& g = p.v.geo;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        if (!p.head[g.index(x, y, z)]) continue;
        const auto w = g.vox2world.apply(x, y, z);
        const auto pa = a.apply(w[0], w[1], w[2]), pb = b.apply(w[0], w[1], w[2]);
        const double e = std::sqrt((pa[0] - pb[0]) * (pa[0] - pb[0]) + (pa[1] - pb[1]) * (pa[1] - pb[1]) +
                                   (pa[2] - pb[2]) * (pa[2] - pb[2]));
        sum += e;
        mx = std::max(mx, e);
        ++n;
      }
  return {sum / n, mx};
}

}  // namespace evk::reg_deform::testing
