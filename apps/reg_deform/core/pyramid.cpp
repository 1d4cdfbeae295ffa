#include "core/pyramid.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "evk/parallel.hpp"

namespace evk::reg_deform {


std::array<bool, 3> pyramid_axes(const Geometry& g) {
  return {g.nx / 2 >= 32, g.ny / 2 >= 32, g.nz / 2 >= 32};
}

Geometry downsample_geometry(const Geometry& g, const std::array<bool, 3>& axes) {
  Geometry r = g;
  int* n[3] = {&r.nx, &r.ny, &r.nz};
  double* d[3] = {&r.dx, &r.dy, &r.dz};
  for (int a = 0; a < 3; ++a) {
    if (!axes[a] || *n[a] <= 1) continue;
    *n[a] = (*n[a] + 1) / 2;
    *d[a] *= 2;
    for (int row = 0; row < 3; ++row) {
      r.qform.m[row][a] *= 2;
      r.sform.m[row][a] *= 2;
    }
  }
  r.update_world();
  return r;
}

std::vector<double> gaussian_kernel(double sigma) {
  const int radius = static_cast<int>(sigma * 3.0);
  if (radius <= 0) return {};
  std::vector<double> kernel(2 * radius + 1);
  for (int i = -radius; i <= radius; ++i)
    kernel[i + radius] = std::exp(-double(i) * i / (2 * sigma * sigma)) / (sigma * 2.506628274631);
  return kernel;
}

std::vector<float> gaussian_smooth(const Geometry& g, const std::vector<float>& data, double sigma, int threads) {
  return gaussian_smooth3(g, data, {sigma, sigma, sigma}, threads);
}

std::vector<float> gaussian_smooth3(const Geometry& g, const std::vector<float>& data, const std::array<double, 3>& sigma,
                                    int threads) {
  if (data.size() != g.voxels()) throw std::invalid_argument("gaussian_smooth: data size");
  std::vector<double> val(data.begin(), data.end()), den(data.size(), 1.0);
  const int n[3] = {g.nx, g.ny, g.nz};
  const std::size_t stride[3] = {1, static_cast<std::size_t>(g.nx), static_cast<std::size_t>(g.nx) * g.ny};
  for (int a = 0; a < 3; ++a) {
    const int radius = static_cast<int>(sigma[a] * 3.0);
    if (n[a] <= 1 || radius <= 0) continue;
    std::vector<double> kernel(2 * radius + 1);
    for (int i = -radius; i <= radius; ++i)
      kernel[i + radius] = std::exp(-double(i) * i / (2 * sigma[a] * sigma[a])) / (sigma[a] * 2.506628274631);
    const std::size_t lines = g.voxels() / n[a];
    parallel_for(
        lines,
        [&](std::size_t l0, std::size_t l1) {
          std::vector<double> bv(n[a]), bd(n[a]);
          for (std::size_t l = l0; l < l1; ++l) {
            std::size_t base;
            if (a == 0) base = l * g.nx;
            else if (a == 1) base = (l / g.nx) * stride[2] + l % g.nx;
            else base = l;
            for (int k = 0; k < n[a]; ++k) {
              bv[k] = val[base + k * stride[a]];
              bd[k] = den[base + k * stride[a]];
            }
            for (int k = 0; k < n[a]; ++k) {
              double sv = 0, sd = 0;
              for (int j = std::max(0, k - radius); j <= std::min(n[a] - 1, k + radius); ++j) {
                const double w = kernel[j - k + radius];  // pyr_smooth repeats this order (no FMA here)
                sv += w * bv[j];
                sd += w * bd[j];
              }
              val[base + k * stride[a]] = sv;
              den[base + k * stride[a]] = sd;
            }
          }
        },
        threads);
  }
  std::vector<float> out(data.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(val[i] / den[i]);
  return out;
}

namespace {
template <class T>
std::vector<T> subsample(const Geometry& g, const Geometry& r, const std::vector<T>& in, const std::array<bool, 3>& axes) {
  std::vector<T> out(r.voxels());
  const int f[3] = {axes[0] && g.nx > 1 ? 2 : 1, axes[1] && g.ny > 1 ? 2 : 1, axes[2] && g.nz > 1 ? 2 : 1};
  for (int z = 0; z < r.nz; ++z)
    for (int y = 0; y < r.ny; ++y)
      for (int x = 0; x < r.nx; ++x) out[r.index(x, y, z)] = in[g.index(f[0] * x, f[1] * y, f[2] * z)];
  return out;
}
}  // namespace

Volume downsample_volume(const Volume& v, const std::array<bool, 3>& axes, int threads) {
  Volume r;
  r.geo = downsample_geometry(v.geo, axes);
  r.data = subsample(v.geo, r.geo, gaussian_smooth(v.geo, v.data, kPyramidSigma, threads), axes);
  return r;
}

Mask downsample_mask(const Geometry& g, const Mask& m, const std::array<bool, 3>& axes) {
  if (m.empty()) return {};
  Mask bin(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) bin[i] = m[i] != 0;
  return subsample(g, downsample_geometry(g, axes), bin, axes);
}

std::vector<Volume> make_pyramid(const Volume& v, int levels, int used, int threads) {
  if (levels < 1 || used < 1 || used > levels) throw std::invalid_argument("make_pyramid: need 1 <= used <= levels");
  std::vector<Volume> p(used);
  Volume cur = v;
  for (int l = used; l < levels; ++l) cur = downsample_volume(cur, pyramid_axes(cur.geo), threads);
  p[used - 1] = cur;
  for (int l = used - 2; l >= 0; --l) p[l] = downsample_volume(p[l + 1], pyramid_axes(p[l + 1].geo), threads);
  return p;
}

ImagePyramid make_image_pyramid(const Volume& v, int levels, int used, int threads) {
  if (levels < 1 || used < 1 || used > levels) throw std::invalid_argument("make_image_pyramid: need 1 <= used <= levels");
  ImagePyramid p;
  p.levels.resize(used);
  const Volume* cur = &v;
  Volume tmp;
  for (int l = used; l < levels; ++l) {  // levels built but not used
    Volume next = downsample_volume(*cur, pyramid_axes(cur->geo), threads);
    tmp = std::move(next);
    cur = &tmp;
  }
  if (cur != &v) {
    p.owned.push_back(std::make_unique<Volume>(std::move(tmp)));
    cur = p.owned.back().get();
  }
  p.levels[used - 1].host = cur;
  for (int l = used - 2; l >= 0; --l) {
    const Volume& finer = *p.levels[l + 1].host;
    p.owned.push_back(std::make_unique<Volume>(downsample_volume(finer, pyramid_axes(finer.geo), threads)));
    p.levels[l].host = p.owned.back().get();
  }
  return p;
}

std::vector<Mask> make_mask_pyramid(const Geometry& g, const Mask& m, int levels, int used) {
  if (levels < 1 || used < 1 || used > levels) throw std::invalid_argument("make_mask_pyramid: need 1 <= used <= levels");
  std::vector<Mask> p(used);
  if (m.empty()) return p;
  Geometry geo = g;
  Mask cur(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) cur[i] = m[i] != 0;
  for (int l = used; l < levels; ++l) {
    const auto axes = pyramid_axes(geo);
    cur = downsample_mask(geo, cur, axes);
    geo = downsample_geometry(geo, axes);
  }
  p[used - 1] = cur;
  for (int l = used - 2; l >= 0; --l) {
    const auto axes = pyramid_axes(geo);
    p[l] = downsample_mask(geo, p[l + 1], axes);
    geo = downsample_geometry(geo, axes);
  }
  return p;
}

}  // namespace evk::reg_deform
