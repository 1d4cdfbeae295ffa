#include "core/register/reg_measure_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "core/register/reg_reduce.hpp"
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

}  // namespace evk::reg_deform
