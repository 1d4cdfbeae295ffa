// Helpers of minimize/tune (post.cpp) and validate (validate.cpp). Internal to evk_gi.
#pragma once
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "evk/gi/evaluate.hpp"

namespace evk::gi::post_detail {

inline bool good(const RunResult& r) { return r.ok() && r.check.penalty == 0; }
inline std::string fmt(double v, int prec = 4) {
  std::ostringstream o;
  o.precision(prec);
  o << v;
  return o.str();
}
struct Spread {
  double median = 0, min = 0, max = 0;
};
inline Spread spread(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  return s;
}

}  // namespace evk::gi::post_detail
