#include "core/register/reg_measure_cpu.hpp"

#include <array>
#include <cstdint>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "core/register/reg_reduce.hpp"
#include "core/register/reg_register.hpp"
#include "evk/parallel.hpp"

namespace evk::reg_deform {

namespace {
void minmax(const std::vector<float>& d, double& lo, double& hi) {
  lo = std::numeric_limits<double>::max();
  hi = std::numeric_limits<double>::lowest();
  for (float v : d)
    if (std::isfinite(v)) {
      lo = std::min(lo, double(v));
      hi = std::max(hi, double(v));
    }
}
}  // namespace

void rescale_for_nmi(Volume& v, int bins) {
  double lo, hi;
  minmax(v.data, lo, hi);
  const double range = hi - lo, new_lo = 2.0, new_range = (bins + 4 - 3.0) - 2.0;
  for (float& x : v.data)
    if (std::isfinite(x)) x = static_cast<float>(range > 0 ? (x - lo) / range * new_range + new_lo : new_lo);
}

void rescale_for_ssd(Volume& ref, Volume& flo) {
  double lr, hr, lf, hf;
  minmax(ref.data, lr, hr);
  minmax(flo.data, lf, hf);
  const double lo = std::min(lr, lf), hi = std::max(hr, hf), range = hi - lo;
  for (auto* v : {&ref, &flo})
    for (float& x : v->data)
      if (std::isfinite(x)) x = static_cast<float>(range > 0 ? (x - lo) / range : 0.0);
}

void nmi_counts_cpu(const float* ref, const float* warped, const Mask& mask, std::size_t nv, int nb,
                    std::vector<double>& counts, int threads) {
  counts.assign(static_cast<std::size_t>(nb) * nb, 0.0);
  std::mutex mu;
  parallel_for(
      nv,
      [&](std::size_t v0, std::size_t v1) {
        std::vector<std::uint64_t> local(static_cast<std::size_t>(nb) * nb, 0);
        for (std::size_t v = v0; v < v1; ++v) {
          if (!mask.empty() && !mask[v]) continue;
          const float r = ref[v], w = warped[v];
          if (!(r == r) || !(w == w)) continue;
          if (!(r >= 0 && r < nb && w >= 0 && w < nb)) continue;
          ++local[static_cast<int>(r) + static_cast<std::size_t>(nb) * static_cast<int>(w)];
        }
        std::lock_guard<std::mutex> lock(mu);
        for (std::size_t i = 0; i < local.size(); ++i) counts[i] += static_cast<double>(local[i]);
      },
      threads);
}

void nmi_from_counts(const std::vector<double>& counts, int nb, NmiHistogram& h) {
  h.nb = nb;
  const std::size_t nj = static_cast<std::size_t>(nb) * nb;
  h.prob.assign(nj + 2 * nb, 0.0);
  h.logp.assign(nj + 2 * nb, 0.0);
  const double k[3] = {1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0};
  std::vector<double> tmp(nj, 0.0);
  for (int w = 0; w < nb; ++w)  // along the reference axis
    for (int r = 0; r < nb; ++r) {
      double s = 0;
      for (int t = 0; t < 3; ++t) {
        const int i = r - 1 + t;
        if (i >= 0 && i < nb) s += counts[i + static_cast<std::size_t>(nb) * w] * k[t];
      }
      tmp[r + static_cast<std::size_t>(nb) * w] = s;
    }
  for (int r = 0; r < nb; ++r)  // along the warped axis
    for (int w = 0; w < nb; ++w) {
      double s = 0;
      for (int t = 0; t < 3; ++t) {
        const int i = w - 1 + t;
        if (i >= 0 && i < nb) s += tmp[r + static_cast<std::size_t>(nb) * i] * k[t];
      }
      h.prob[r + static_cast<std::size_t>(nb) * w] = s;
    }
  double total = 0;
  for (std::size_t i = 0; i < nj; ++i) total += h.prob[i];
  h.total = total;
  h.h_ref = h.h_war = h.h_joint = 0;
  if (total <= 0) return;
  for (std::size_t i = 0; i < nj; ++i) h.prob[i] /= total;
  for (int r = 0; r < nb; ++r) {
    double s = 0;
    for (int w = 0; w < nb; ++w) s += h.prob[r + static_cast<std::size_t>(nb) * w];
    h.prob[nj + r] = s;
  }
  for (int w = 0; w < nb; ++w) {
    double s = 0;
    for (int r = 0; r < nb; ++r) s += h.prob[r + static_cast<std::size_t>(nb) * w];
    h.prob[nj + nb + w] = s;
  }
  for (int r = 0; r < nb; ++r) {
    const double p = h.prob[nj + r];
    if (p > 0) {
      h.logp[nj + r] = std::log(p);
      h.h_ref -= p * h.logp[nj + r];
    }
  }
  for (int w = 0; w < nb; ++w) {
    const double p = h.prob[nj + nb + w];
    if (p > 0) {
      h.logp[nj + nb + w] = std::log(p);
      h.h_war -= p * h.logp[nj + nb + w];
    }
  }
  for (std::size_t i = 0; i < nj; ++i) {
    const double p = h.prob[i];
    if (p > 0) {
      h.logp[i] = std::log(p);
      h.h_joint -= p * h.logp[i];
    }
  }
}

double ssd_value_cpu(const float* ref, const float* warped, const Mask& mask, std::size_t nv, std::size_t* n,
                     int threads) {
  auto valid = [&](std::size_t v) {
    return (mask.empty() || mask[v]) && ref[v] == ref[v] && warped[v] == warped[v];
  };
  const double count = ordered_sum(
      nv,
      [&](std::size_t b, std::size_t e) {
        double c = 0;
        for (std::size_t v = b; v < e; ++v) c += valid(v);
        return c;
      },
      threads);
  const double sum = ordered_sum(
      nv,
      [&](std::size_t b, std::size_t e) {
        double s = 0;
        for (std::size_t v = b; v < e; ++v)
          if (valid(v)) {
            const double d = double(ref[v]) - double(warped[v]);
            s += d * d;
          }
        return s;
      },
      threads);
  if (n) *n = static_cast<std::size_t>(count);
  return count > 0 ? -sum / count : 0.0;
}

// reg_measure's NMI of `image` on the reference grid. A voxel is defined when the 4x4x4 stencil
// (x-1 .. x+2 per axis) of reg_measure's identity cubic resampling lies inside the image (NiftyReg's
// reader turns NaN into 0, so only the border is undefined): 1 <= x <= nx - 3, the same in y and z.
// The image's non-finite values count as 0, its undefined voxels not at all; each image is rescaled
// by the min..max of what counts onto [2, bins + 1] (rescale_for_nmi's arithmetic), and the integer
// counts are summed on every core (exact in any order).
double nmi_like_reg_measure(const Volume& ref, const Volume& image, int bins) {
  const Geometry& g = ref.geo;
  const std::size_t nx = static_cast<std::size_t>(g.nx), nxy = nx * static_cast<std::size_t>(g.ny);
  const std::size_t nv = g.voxels();
  auto inside = [&](std::size_t v) {
    const std::size_t x = v % nx, y = (v / nx) % static_cast<std::size_t>(g.ny), z = v / nxy;
    auto in = [](std::size_t c, int n) { return c >= 1 && static_cast<long long>(c) + 2 < n; };
    return in(x, g.nx) && in(y, g.ny) && in(z, g.nz);
  };
  auto counted = [&](std::size_t v) { return std::isfinite(image.data[v]) ? image.data[v] : 0.0f; };
  // min..max: of the reference's finite values, of the image's defined voxels
  std::mutex mu;
  std::array<double, 4> range = {std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(),
                                 std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest()};
  parallel_for(nv, [&](std::size_t v0, std::size_t v1) {
    std::array<double, 4> r = range;
    for (std::size_t v = v0; v < v1; ++v) {
      if (std::isfinite(ref.data[v])) r[0] = std::min(r[0], double(ref.data[v])), r[1] = std::max(r[1], double(ref.data[v]));
      if (inside(v)) r[2] = std::min(r[2], double(counted(v))), r[3] = std::max(r[3], double(counted(v)));
    }
    std::lock_guard<std::mutex> lk(mu);
    range[0] = std::min(range[0], r[0]), range[1] = std::max(range[1], r[1]);
    range[2] = std::min(range[2], r[2]), range[3] = std::max(range[3], r[3]);
  });
  const int nb = bins + 4;
  const double new_lo = 2.0, new_range = (nb - 3.0) - 2.0;
  auto rescaled = [&](float x, double lo, double hi) {
    const double span = hi - lo;
    return static_cast<float>(span > 0 ? (x - lo) / span * new_range + new_lo : new_lo);
  };
  std::vector<double> counts(static_cast<std::size_t>(nb) * nb, 0.0);
  parallel_for(nv, [&](std::size_t v0, std::size_t v1) {
    std::vector<std::uint64_t> local(counts.size(), 0);
    for (std::size_t v = v0; v < v1; ++v) {
      if (!inside(v) || !std::isfinite(ref.data[v])) continue;
      const float r = rescaled(ref.data[v], range[0], range[1]), w = rescaled(counted(v), range[2], range[3]);
      if (!(r >= 0 && r < nb && w >= 0 && w < nb)) continue;
      ++local[static_cast<int>(r) + static_cast<std::size_t>(nb) * static_cast<int>(w)];
    }
    std::lock_guard<std::mutex> lk(mu);
    for (std::size_t i = 0; i < local.size(); ++i) counts[i] += static_cast<double>(local[i]);
  });
  NmiHistogram h;
  nmi_from_counts(counts, nb, h);
  return h.nmi();
}

}  // namespace evk::reg_deform
