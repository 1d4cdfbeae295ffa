// Helpers shared by the stereo test files.
#pragma once
#include <cstdio>
#include <string>

#include "core/types.hpp"

namespace stereo_test {
// First differing pixel as text, "" when equal (sizes included).
inline std::string first_difference(const evk::stereo::DisparityMap& a, const evk::stereo::DisparityMap& b) {
  if (a.width != b.width || a.height != b.height) return "sizes differ";
  for (int y = 0; y < a.height; ++y)
    for (int x = 0; x < a.width; ++x)
      if (a.at(x, y) != b.at(x, y)) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "pixel (%d,%d): %d vs %d", x, y, a.at(x, y), b.at(x, y));
        return buf;
      }
  return "";
}
inline long long count_differences(const evk::stereo::DisparityMap& a, const evk::stereo::DisparityMap& b) {
  long long n = 0;
  for (std::size_t i = 0; i < a.d.size(); ++i) n += a.d[i] != b.d[i];
  return n;
}
}  // namespace stereo_test
