#include "core/field/resample_cpu.hpp"

#include <algorithm>
#include <cmath>

#include "evk/error.hpp"
#include "evk/parallel.hpp"

namespace evk::reg_deform {

Interp parse_interp(const std::string& s) {
  if (s == "nearest" || s == "0") return Interp::nearest;
  if (s == "linear" || s == "1") return Interp::linear;
  if (s == "cubic" || s == "3") return Interp::cubic;
  input_error("--interp", "'" + s + "' is not nearest, linear or cubic");
}
const char* to_string(Interp i) {
  switch (i) {
    case Interp::nearest: return "nearest";
    case Interp::linear: return "linear";
    case Interp::cubic: return "cubic";
  }
  return "?";
}

namespace {
// In-place cubic B-spline prefilter of one line (stride apart), mirror boundaries (Unser 1993).
void prefilter_line(double* c, int n) {
  if (n < 2) return;
  const double z = std::sqrt(3.0) - 2;
  for (int i = 0; i < n; ++i) c[i] *= 6;  // gain (1-z)(1-1/z)
  // causal initialisation: sum over the mirrored signal, truncated when z^k is negligible
  int horizon = std::min(n, 30);
  double zk = z, sum = c[0];
  for (int k = 1; k < horizon; ++k) {
    sum += zk * c[k];
    zk *= z;
  }
  c[0] = sum;
  for (int k = 1; k < n; ++k) c[k] += z * c[k - 1];
  c[n - 1] = (z / (z * z - 1)) * (c[n - 1] + z * c[n - 2]);
  for (int k = n - 2; k >= 0; --k) c[k] = z * (c[k + 1] - c[k]);
}
inline int mirror(int i, int n) {
  if (n == 1) return 0;
  const int period = 2 * n - 2;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}
}  // namespace

std::vector<float> bspline_coefficients(const Volume& v, int threads) {
  const Geometry& g = v.geo;
  std::vector<double> c(v.data.begin(), v.data.end());
  const int n[3] = {g.nx, g.ny, g.nz};
  const std::size_t stride[3] = {1, static_cast<std::size_t>(g.nx), static_cast<std::size_t>(g.nx) * g.ny};
  for (int a = 0; a < 3; ++a) {
    const std::size_t lines = g.voxels() / n[a];
    parallel_for(
        lines,
        [&](std::size_t l0, std::size_t l1) {
          std::vector<double> buf(n[a]);
          for (std::size_t l = l0; l < l1; ++l) {
            std::size_t base;  // first element of line l along axis a
            if (a == 0) base = l * g.nx;
            else if (a == 1) base = (l / g.nx) * stride[2] + l % g.nx;
            else base = l;
            for (int k = 0; k < n[a]; ++k) buf[k] = c[base + k * stride[a]];
            prefilter_line(buf.data(), n[a]);
            for (int k = 0; k < n[a]; ++k) c[base + k * stride[a]] = buf[k];
          }
        },
        threads);
  }
  return std::vector<float>(c.begin(), c.end());
}

std::vector<float> floating_coordinates(const Field& field, const Geometry& flo, int threads) {
  const Geometry& g = field.geo;
  const std::size_t nv = g.voxels();
  const Mat44 w2v = flo.vox2world.inverse();
  std::vector<float> out(3 * nv);
  parallel_for(
      static_cast<std::size_t>(g.ny) * g.nz,
      [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r) {
          const int y = static_cast<int>(r % g.ny), z = static_cast<int>(r / g.ny);
          for (int x = 0; x < g.nx; ++x) {
            const std::size_t i = g.index(x, y, z);
            double p[3] = {field.data[i], field.data[nv + i], field.data[2 * nv + i]};
            if (field.displacement) {
              const auto own = g.vox2world.apply(x, y, z);
              for (int a = 0; a < 3; ++a) p[a] += own[a];
            }
            const auto v = w2v.apply(p[0], p[1], p[2]);
            for (int a = 0; a < 3; ++a) out[a * nv + i] = static_cast<float>(v[a]);
          }
        }
      },
      threads);
  return out;
}

float sample(const float* d, const Geometry& g, double px, double py, double pz, Interp interp, float pad) {
  constexpr double eps = 1e-4;  // positions within rounding of the border count as inside
  if (!(px >= -eps && py >= -eps && pz >= -eps && px <= g.nx - 1 + eps && py <= g.ny - 1 + eps &&
        pz <= g.nz - 1 + eps))
    return pad;
  px = std::clamp(px, 0.0, g.nx - 1.0);
  py = std::clamp(py, 0.0, g.ny - 1.0);
  pz = std::clamp(pz, 0.0, g.nz - 1.0);
  if (interp == Interp::nearest) {
    const int x = static_cast<int>(std::lround(px)), y = static_cast<int>(std::lround(py)),
              z = static_cast<int>(std::lround(pz));
    return d[g.index(x, y, z)];
  }
  if (interp == Interp::linear) {
    const int x0 = static_cast<int>(std::floor(px)), y0 = static_cast<int>(std::floor(py)),
              z0 = static_cast<int>(std::floor(pz));
    const double fx = px - x0, fy = py - y0, fz = pz - z0;
    const int x1 = std::min(x0 + 1, g.nx - 1), y1 = std::min(y0 + 1, g.ny - 1), z1 = std::min(z0 + 1, g.nz - 1);
    const int xs[2] = {x0, x1}, ys[2] = {y0, y1}, zs[2] = {z0, z1};
    const double wx[2] = {1 - fx, fx}, wy[2] = {1 - fy, fy}, wz[2] = {1 - fz, fz};
    double s = 0;
    for (int c = 0; c < 2; ++c)
      for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) {
          const double w = wx[a] * wy[b] * wz[c];
          if (w != 0) s += w * d[g.index(xs[a], ys[b], zs[c])];
        }
    return static_cast<float>(s);
  }
  // cubic B-spline of the prefiltered coefficients
  const int x0 = static_cast<int>(std::floor(px)), y0 = static_cast<int>(std::floor(py)),
            z0 = static_cast<int>(std::floor(pz));
  double wx[4], wy[4], wz[4];
  bspline_weights(px - x0, wx);
  bspline_weights(py - y0, wy);
  bspline_weights(pz - z0, wz);
  double s = 0;
  for (int c = 0; c < 4; ++c) {
    const int z = mirror(z0 - 1 + c, g.nz);
    for (int b = 0; b < 4; ++b) {
      const int y = mirror(y0 - 1 + b, g.ny);
      const double wzy = wz[c] * wy[b];
      for (int a = 0; a < 4; ++a) s += wzy * wx[a] * d[g.index(mirror(x0 - 1 + a, g.nx), y, z)];
    }
  }
  return static_cast<float>(s);
}

Volume resample_cpu(const Volume& flo, const Field& field, const ResampleOptions& opt) {
  const std::vector<float> coords = floating_coordinates(field, flo.geo, opt.threads);
  std::vector<float> coef;
  const float* src = flo.data.data();
  if (opt.interp == Interp::cubic) {
    coef = bspline_coefficients(flo, opt.threads);
    src = coef.data();
  }
  Volume out;
  out.geo = field.geo;
  const std::size_t nv = field.geo.voxels();
  out.data.resize(nv);
  parallel_for(
      nv,
      [&](std::size_t i0, std::size_t i1) {
        for (std::size_t i = i0; i < i1; ++i)
          out.data[i] = sample(src, flo.geo, coords[i], coords[nv + i], coords[2 * nv + i], opt.interp, opt.pad);
      },
      opt.threads);
  return out;
}

}  // namespace evk::reg_deform
