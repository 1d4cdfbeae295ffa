#include "core/types.hpp"

#include "evk/error.hpp"

namespace evk::stereo {

void validate(const Params& p) {
  if (p.window < 3 || p.window % 2 == 0)
    input_error("--window", "must be odd and at least 3 (got " + std::to_string(p.window) + ")");
  if (p.window > kMaxWindow)
    input_error("--window", "at most " + std::to_string(kMaxWindow) + " (got " + std::to_string(p.window) + ")");
  if (p.min_disparity < 0)
    input_error("--min-disparity", "must be >= 0 (got " + std::to_string(p.min_disparity) + ")");
  if (p.max_disparity < p.min_disparity)
    input_error("--max-disparity", "must be >= --min-disparity (" + std::to_string(p.max_disparity) + " < " +
                                       std::to_string(p.min_disparity) + ")");
  if (p.max_disparity > 32000) input_error("--max-disparity", "at most 32000");
  if (p.min_ssd < 0) input_error("--min-ssd", "must be >= 0 (got " + std::to_string(p.min_ssd) + ")");
}

void validate_pair(const Image8& l, const Image8& r, const std::string& what) {
  if (l.width <= 0 || l.height <= 0 || r.width <= 0 || r.height <= 0) input_error(what, "empty image");
  if (l.width != r.width || l.height != r.height)
    input_error(what, "left and right images differ in size (" + std::to_string(l.width) + "x" +
                          std::to_string(l.height) + " vs " + std::to_string(r.width) + "x" +
                          std::to_string(r.height) + ")");
  if (l.pixels.size() != static_cast<std::size_t>(l.width) * l.height ||
      r.pixels.size() != static_cast<std::size_t>(r.width) * r.height)
    input_error(what, "pixel buffer does not match the image size");
}

}  // namespace evk::stereo

#include <limits>
namespace evk::stereo {
FloatMap to_float(const DisparityMap& m) {
  FloatMap f{m.width, m.height, std::vector<float>(m.d.size())};
  for (std::size_t i = 0; i < m.d.size(); ++i)
    f.v[i] = m.d[i] < 0 ? std::numeric_limits<float>::infinity() : static_cast<float>(m.d[i]);
  return f;
}
}  // namespace evk::stereo
