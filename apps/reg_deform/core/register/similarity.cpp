#include "core/register/similarity.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace evk::reg_deform {

namespace {
void check(const std::vector<float>& r, const std::vector<float>& w, const std::vector<std::uint8_t>& m) {
  if (r.size() != w.size() || (!m.empty() && m.size() != r.size()))
    throw std::invalid_argument("similarity: reference, warped and mask sizes differ");
}
inline bool active(const std::vector<std::uint8_t>& m, std::size_t i) { return m.empty() || m[i] != 0; }
}  // namespace

std::vector<float> rescale_niftyreg(const std::vector<float>& v, float lo, float hi) {
  float mn = std::numeric_limits<float>::max(), mx = std::numeric_limits<float>::lowest();
  for (float x : v)
    if (x == x) {
      mn = std::min(mn, x);
      mx = std::max(mx, x);
    }
  const double diff = static_cast<double>(mx) - static_cast<double>(mn);
  const double ndiff = static_cast<double>(hi) - static_cast<double>(lo);
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    double x = v[i];
    if (x == x) x = (x - mn) / diff * ndiff + lo;
    out[i] = static_cast<float>(x);
  }
  return out;
}

double nmi_niftyreg(const std::vector<float>& ref_in, const std::vector<float>& war_in,
                    const std::vector<std::uint8_t>& mask, const NmiOptions& opt) {
  check(ref_in, war_in, mask);
  const int nb = opt.bins;
  if (nb < 5) throw std::invalid_argument("nmi: need at least 5 bins");
  const std::vector<float> ref = rescale_niftyreg(ref_in, 2.f, static_cast<float>(nb) - 3.f);
  const std::vector<float> war = rescale_niftyreg(war_in, 2.f, static_cast<float>(nb) - 3.f);
  std::vector<double> h(static_cast<std::size_t>(nb) * nb, 0.0), s(h.size(), 0.0);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!active(mask, i)) continue;
    const float r = ref[i], w = war[i];
    if (r == r && w == w && 0 <= r && r < nb && 0 <= w && w < nb)
      h[static_cast<std::size_t>(static_cast<int>(r)) + static_cast<std::size_t>(static_cast<int>(w)) * nb] += 1;
  }
  // Parzen window: the cubic B-spline kernel at -1, 0, 1, along the reference then the warped axis.
  const double k[3] = {1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0};
  for (int f = 0; f < nb; ++f)
    for (int r = 0; r < nb; ++r) {
      double v = 0;
      for (int t = 0; t < 3; ++t) {
        const int idx = r - 1 + t;
        if (-1 < idx && idx < nb) v += h[static_cast<std::size_t>(idx) + static_cast<std::size_t>(nb) * f] * k[t];
      }
      s[static_cast<std::size_t>(r) + static_cast<std::size_t>(nb) * f] = v;
    }
  for (int r = 0; r < nb; ++r)
    for (int f = 0; f < nb; ++f) {
      double v = 0;
      for (int t = 0; t < 3; ++t) {
        const int idx = f - 1 + t;
        if (-1 < idx && idx < nb) v += s[static_cast<std::size_t>(r) + static_cast<std::size_t>(nb) * idx] * k[t];
      }
      h[static_cast<std::size_t>(r) + static_cast<std::size_t>(nb) * f] = v;
    }
  double total = 0;
  for (double v : h) total += v;
  if (!(total > 0)) throw std::invalid_argument("nmi: no voxel where both images are defined");
  for (double& v : h) v /= total;
  double hr = 0, hw = 0, hj = 0;
  for (int r = 0; r < nb; ++r) {
    double p = 0;
    for (int f = 0; f < nb; ++f) p += h[static_cast<std::size_t>(r) + static_cast<std::size_t>(nb) * f];
    if (p > 0) hr -= p * std::log(p);
  }
  for (int f = 0; f < nb; ++f) {
    double p = 0;
    for (int r = 0; r < nb; ++r) p += h[static_cast<std::size_t>(r) + static_cast<std::size_t>(nb) * f];
    if (p > 0) hw -= p * std::log(p);
  }
  for (double p : h)
    if (p > 0) hj -= p * std::log(p);
  return (hr + hw) / hj;
}

double ncc_niftyreg(const std::vector<float>& ref, const std::vector<float>& war, const std::vector<std::uint8_t>& mask) {
  check(ref, war, mask);
  double mr = 0, mw = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (active(mask, i) && ref[i] == ref[i] && war[i] == war[i]) {
      mr += ref[i];
      mw += war[i];
      ++n;
    }
  if (n == 0) throw std::invalid_argument("ncc: no voxel where both images are defined");
  mr /= static_cast<double>(n);
  mw /= static_cast<double>(n);
  double sr = 0, sw = 0, m = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (active(mask, i) && ref[i] == ref[i] && war[i] == war[i]) {
      const double a = ref[i] - mr, b = war[i] - mw;
      sr += a * a;
      sw += b * b;
      m += a * b;
    }
  sr /= static_cast<double>(n);
  sw /= static_cast<double>(n);
  return m / (std::sqrt(sr) * std::sqrt(sw) * static_cast<double>(n));
}

double ssd_niftyreg(const std::vector<float>& ref, const std::vector<float>& war, const std::vector<std::uint8_t>& mask) {
  check(ref, war, mask);
  double ssd = 0, n = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (active(mask, i) && ref[i] == ref[i] && war[i] == war[i]) {
      const double d = static_cast<double>(ref[i]) - static_cast<double>(war[i]);
      ssd += d * d;
      n += 1;
    }
  if (n == 0) throw std::invalid_argument("ssd: no voxel where both images are defined");
  return -ssd / n;
}

}  // namespace evk::reg_deform
