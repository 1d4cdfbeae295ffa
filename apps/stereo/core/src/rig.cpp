#include "core/rig.hpp"

#include <cmath>
#include <limits>

namespace evk::stereo {

float depth_from_disparity(const Rig& rig, float d) {
  std::array<float, 3> p{};
  return point_from_disparity(rig, 0, 0, d, p) ? p[2] : std::numeric_limits<float>::infinity();
}

bool point_from_disparity(const Rig& rig, int x, int y, float d, std::array<float, 3>& p) {
  if (!std::isfinite(d) || d <= 0) return false;
  const std::array<double, 16>& Q = rig.Q;
  const double v[4] = {static_cast<double>(x), static_cast<double>(y), static_cast<double>(d), 1.0};
  double r[4];
  for (int i = 0; i < 4; ++i) r[i] = Q[4 * i] * v[0] + Q[4 * i + 1] * v[1] + Q[4 * i + 2] * v[2] + Q[4 * i + 3] * v[3];
  if (r[3] == 0 || !std::isfinite(r[3])) return false;
  for (int i = 0; i < 3; ++i) p[static_cast<std::size_t>(i)] = static_cast<float>(r[i] / r[3]);
  return std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]);
}

}  // namespace evk::stereo
