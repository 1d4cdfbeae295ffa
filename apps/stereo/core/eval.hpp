// Accuracy of a disparity map against ground truth (Middlebury-style bad-pixel rates).
#pragma once
#include <vector>

#include "core/types.hpp"

namespace evk::stereo {

struct EvalResult {
  long long pixels = 0;            // pixels with known ground truth (inside the mask when given)
  long long invalid = 0;           // of those, pixels where the disparity is invalid
  std::vector<double> thresholds;  // e.g. {1, 2}
  std::vector<long long> bad;      // per threshold: |d - gt| > t, invalid disparities counted as bad
  double rms = 0;                  // root mean square error over pixels with a valid disparity
  double percent(long long n) const { return pixels ? 100.0 * n / pixels : 0.0; }
};

// disp and gt: non-finite or negative = invalid / unknown (gt 0 is unknown too, the Middlebury
// convention). mask (optional, same size): a pixel counts only where mask == 255.
// Throws InputError when sizes differ or a threshold is negative.
EvalResult evaluate(const FloatMap& disp, const FloatMap& gt, const Image8* mask,
                    const std::vector<double>& thresholds = {1.0, 2.0});

}  // namespace evk::stereo
