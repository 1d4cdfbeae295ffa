// Stage speckle (CPU only): 4-connected regions of valid pixels whose neighbours differ by at most
// max_diff pixels; regions of at most max_size pixels become invalid (OpenCV filterSpeckles' rule).
#include <cstdlib>
#include <vector>

#include "core/sgm.hpp"

namespace evk::stereo {

void speckle_cpu(DisparityQ& d, int max_size, int max_diff) {
  if (max_size <= 0) return;
  const int W = d.width, H = d.height;
  const int lim = max_diff * kDispScale;
  std::vector<int> label(d.q.size(), 0);
  std::vector<int> stack, region;
  int next = 0;
  for (std::size_t s = 0; s < d.q.size(); ++s) {
    if (d.q[s] == kInvalidQ || label[s]) continue;
    label[s] = ++next;
    stack.assign(1, static_cast<int>(s));
    region.clear();
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      region.push_back(i);
      const int x = i % W, y = i / W;
      const int nb[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
      for (const auto& n : nb) {
        if (n[0] < 0 || n[0] >= W || n[1] < 0 || n[1] >= H) continue;
        const int j = n[1] * W + n[0];
        if (label[j] || d.q[j] == kInvalidQ || std::abs(d.q[j] - d.q[i]) > lim) continue;
        label[j] = next;
        stack.push_back(j);
      }
    }
    if (static_cast<int>(region.size()) <= max_size)
      for (int i : region) d.q[static_cast<std::size_t>(i)] = kInvalidQ;
  }
}

}  // namespace evk::stereo
