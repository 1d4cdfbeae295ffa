#include "core/eval.hpp"

#include <cmath>

#include "evk/error.hpp"

namespace evk::stereo {

EvalResult evaluate(const FloatMap& disp, const FloatMap& gt, const Image8* mask, const std::vector<double>& th) {
  if (disp.width != gt.width || disp.height != gt.height)
    input_error("ground truth", "size " + std::to_string(gt.width) + "x" + std::to_string(gt.height) +
                                    " differs from the disparity map's " + std::to_string(disp.width) + "x" +
                                    std::to_string(disp.height));
  if (mask && (mask->width != gt.width || mask->height != gt.height))
    input_error("--mask", "size " + std::to_string(mask->width) + "x" + std::to_string(mask->height) +
                              " differs from the ground truth's");
  for (double t : th)
    if (!(t >= 0)) input_error("--thresholds", "thresholds must be >= 0");
  EvalResult r;
  r.thresholds = th;
  r.bad.assign(th.size(), 0);
  double sum2 = 0;
  long long nvalid = 0;
  for (std::size_t i = 0; i < gt.v.size(); ++i) {
    const float g = gt.v[i];
    if (!std::isfinite(g) || g <= 0) continue;
    if (mask && mask->pixels[i] != 255) continue;
    ++r.pixels;
    const float d = disp.v[i];
    if (!std::isfinite(d) || d < 0) {
      ++r.invalid;
      for (auto& b : r.bad) ++b;
      continue;
    }
    const double e = std::fabs(static_cast<double>(d) - g);
    for (std::size_t k = 0; k < th.size(); ++k)
      if (e > th[k]) ++r.bad[k];
    sum2 += e * e;
    ++nvalid;
  }
  r.rms = nvalid ? std::sqrt(sum2 / nvalid) : 0.0;
  return r;
}

}  // namespace evk::stereo
