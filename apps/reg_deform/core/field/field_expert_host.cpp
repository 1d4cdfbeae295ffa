#include "core/field/field_expert_host.hpp"

#include <algorithm>
#include <cmath>

#include "core/types.hpp"

namespace evk::reg_deform {

ExpertAxis expert_axis(int n, double s) {
  ExpertAxis a;
  a.first.resize(static_cast<std::size_t>(n));
  a.weights.resize(4 * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const double t = i / s;  // as field_cpu.cpp's axis weights
    const int i0 = static_cast<int>(std::floor(t));
    double w[4];
    bspline_weights(t - i0, w);
    a.first[i] = i0;
    for (int k = 0; k < 4; ++k) a.weights[4 * static_cast<std::size_t>(i) + k] = static_cast<float>(w[k]);
  }
  return a;
}

int expert_max_columns(const ExpertAxis& a, int tile) {
  const int n = static_cast<int>(a.first.size());
  int m = 0;
  for (int s = 0; s < n; s += tile) m = std::max(m, a.first[std::min(s + tile, n) - 1] - a.first[s] + 4);
  return m;
}

}  // namespace evk::reg_deform
