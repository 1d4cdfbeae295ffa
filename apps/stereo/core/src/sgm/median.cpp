// Stage median: a valid pixel becomes the lower median of the valid values in its 3x3
// neighbourhood (inside the image, itself included); invalid pixels stay invalid.
#include <utility>

#include "core/sgm.hpp"

namespace evk::stereo {

DisparityQ median3_cpu(const DisparityQ& d) {
  DisparityQ o = d;
  const int W = d.width, H = d.height;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      if (d.at(x, y) == kInvalidQ) continue;
      std::int16_t v[9];
      int n = 0;
      for (int j = -1; j <= 1; ++j)
        for (int i = -1; i <= 1; ++i) {
          const int xx = x + i, yy = y + j;
          if (xx < 0 || xx >= W || yy < 0 || yy >= H || d.at(xx, yy) == kInvalidQ) continue;
          v[n++] = d.at(xx, yy);
        }
      for (int i = 1; i < n; ++i)  // insertion sort of at most 9 values
        for (int k = i; k > 0 && v[k - 1] > v[k]; --k) std::swap(v[k - 1], v[k]);
      o.q[static_cast<std::size_t>(y) * W + x] = v[(n - 1) / 2];
    }
  return o;
}

}  // namespace evk::stereo
