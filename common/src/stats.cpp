#include "evk/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace evk {
TimingStats summarize(std::vector<double> s) {
  TimingStats t;
  t.repeats = static_cast<int>(s.size());
  if (s.empty()) return t;
  std::sort(s.begin(), s.end());
  std::size_t n = s.size();
  t.median_ms = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  t.min_ms = s.front();
  t.max_ms = s.back();
  t.mean_ms = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(n);
  double v = 0;
  for (double x : s) v += (x - t.mean_ms) * (x - t.mean_ms);
  t.stdev_ms = n > 1 ? std::sqrt(v / static_cast<double>(n - 1)) : 0;
  return t;
}
}  // namespace evk
