#include "core/register/reg_known_warp.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/field/field_cpu.hpp"
#include "core/field/resample_cpu.hpp"
#include "core/register/reg_grid.hpp"
#include "core/register/reg_jacobian_cpu.hpp"

namespace evk::reg_deform {

namespace {
std::uint64_t lcg(std::uint64_t& s) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  return s >> 11;
}
double uni(std::uint64_t& s) { return (lcg(s) % 2000001) / 1000000.0 - 1.0; }  // [-1, 1]
}  // namespace

KnownWarp make_known_warp(const Volume& image, double spacing_mm, double max_mm, std::uint64_t seed, int threads) {
  const Geometry& g = image.geo;
  const Grid id = make_grid3(g, {spacing_mm / g.dx, spacing_mm / g.dy, spacing_mm / g.dz});
  std::vector<float> disp(id.data.size());
  std::uint64_t s = seed * 2654435761ull + 12345;
  for (auto& d : disp) d = static_cast<float>(uni(s));
  // scale so that the largest displacement over the image is max_mm
  Grid probe = id;
  for (std::size_t i = 0; i < disp.size(); ++i) probe.data[i] = id.data[i] + disp[i];
  Field f = compute_field_cpu(g, probe, {}, FieldOptions{true, threads});
  double biggest = 0;
  const std::size_t nv = g.voxels();
  for (std::size_t v = 0; v < nv; ++v)
    biggest = std::max(biggest, std::sqrt(double(f.data[v]) * f.data[v] + double(f.data[nv + v]) * f.data[nv + v] +
                                          double(f.data[2 * nv + v]) * f.data[2 * nv + v]));
  double scale = biggest > 0 ? max_mm / biggest : 0;
  KnownWarp kw;
  for (;;) {
    kw.truth = id;
    for (std::size_t i = 0; i < disp.size(); ++i) kw.truth.data[i] = static_cast<float>(id.data[i] + scale * disp[i]);
    if (voxel_jacobian_stats(g, kw.truth, {}, threads).min >= 0.5 || scale < 1e-6) break;
    scale *= 0.8;
  }
  kw.max_displacement = biggest * scale;  // displacements are linear in the control points
  ResampleOptions ro;
  ro.interp = Interp::cubic;
  ro.threads = threads;
  kw.reference = resample_cpu(image, compute_field_cpu(g, kw.truth, {}, FieldOptions{false, threads}), ro);
  return kw;
}

WarpError warp_error(const Geometry& ref, const Grid& a, const Grid& b, const Mask& where, int threads) {
  const Field fa = compute_field_cpu(ref, a, {}, FieldOptions{false, threads});
  const Field fb = compute_field_cpu(ref, b, {}, FieldOptions{false, threads});
  const std::size_t nv = ref.voxels();
  std::vector<double> e;
  for (std::size_t v = 0; v < nv; ++v) {
    if (!where.empty() && !where[v]) continue;
    double s = 0;
    for (int c = 0; c < 3; ++c) {
      const double d = double(fa.data[c * nv + v]) - fb.data[c * nv + v];
      s += d * d;
    }
    e.push_back(std::sqrt(s));
  }
  WarpError r;
  r.voxels = e.size();
  if (e.empty()) return r;
  double sum = 0;
  for (double x : e) sum += x;
  r.mean = sum / static_cast<double>(e.size());
  std::sort(e.begin(), e.end());
  r.p95 = e[static_cast<std::size_t>(0.95 * static_cast<double>(e.size() - 1))];
  r.max = e.back();
  return r;
}

Mask intensity_mask(const Volume& v, double fraction) {
  std::vector<float> s = v.data;
  const std::size_t k = static_cast<std::size_t>(0.99 * static_cast<double>(s.size() - 1));
  std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(k), s.end());
  const double thr = fraction * s[k];
  Mask m(v.data.size());
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = v.data[i] > thr;
  return m;
}

}  // namespace evk::reg_deform
