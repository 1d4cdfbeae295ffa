#include "core/field/field_diff.hpp"

#include <algorithm>
#include <cmath>

namespace evk::reg_deform {

FieldDiff field_diff_cpu(const float* got, DiffLayout gl, const float* ref, DiffLayout rl, const std::uint8_t* inside,
                         std::size_t n, double tol, double wrong_tol) {
  FieldDiff d;
  for (std::size_t i = 0; i < n; ++i) {
    if (inside && !inside[i]) continue;
    const long long k = static_cast<long long>(i);
    bool nan = false;
    double e = 0;
    for (int a = 0; a < 3; ++a) {
      const float g = got[k * gl.elem + a * gl.comp];
      if (!std::isfinite(g)) nan = true;
      else e = std::max(e, std::fabs(static_cast<double>(g) - ref[k * rl.elem + a * rl.comp]));
    }
    if (nan) {
      ++d.unset;
      continue;
    }
    d.worst = std::max(d.worst, e);
    if (e > tol) ++d.over;
    if (e > wrong_tol) ++d.wrong;
  }
  return d;
}

}  // namespace evk::reg_deform
