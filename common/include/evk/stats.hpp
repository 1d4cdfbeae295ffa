// Summary statistics of repeated timings (host side; no CUDA needed).
#pragma once
#include <vector>

namespace evk {
struct TimingStats {
  int repeats = 0;
  double median_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0, stdev_ms = 0;
  double spread() const { return median_ms > 0 ? (max_ms - min_ms) / median_ms : 0; }  // relative
};
TimingStats summarize(std::vector<double> samples_ms);
}  // namespace evk
