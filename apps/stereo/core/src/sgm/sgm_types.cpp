// SGM types: conversions, option parsing and parameter checks.
#include <cmath>

#include "core/sgm.hpp"
#include "evk/error.hpp"

namespace evk::stereo {

Image16 to_image16(const Image8& im) {
  Image16 o{im.width, im.height, 255, std::vector<std::uint16_t>(im.pixels.begin(), im.pixels.end())};
  return o;
}

Image8 to_image8(const Image16& im) {
  Image8 o{im.width, im.height, std::vector<std::uint8_t>(im.pixels.size())};
  const unsigned m = static_cast<unsigned>(im.maxval);
  const auto scale = [m](unsigned v) { return static_cast<std::uint8_t>((v * 255u + m / 2) / m); };
  // through local pointers: a store through uint8_t* may alias the vectors themselves, which kept
  // the loops from being vectorised
  const std::uint16_t* src = im.pixels.data();
  std::uint8_t* dst = o.pixels.data();
  const std::size_t n = im.pixels.size();
  if (m == 255) {  // (v * 255 + 127) / 255 == v: a copy (a division a pixel took 4 ms at 1080p)
    for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<std::uint8_t>(src[i]);
  } else if (n >= 65536) {  // every 16-bit value's result once, then a look-up a pixel
    std::vector<std::uint8_t> lut(65536);
    for (unsigned v = 0; v < 65536; ++v) lut[v] = scale(v);
    const std::uint8_t* t = lut.data();
    for (std::size_t i = 0; i < n; ++i) dst[i] = t[src[i]];
  } else {
    for (std::size_t i = 0; i < n; ++i) dst[i] = scale(src[i]);
  }
  return o;
}

FloatMap to_float(const DisparityQ& m) {
  FloatMap f{m.width, m.height, std::vector<float>(m.q.size())};
  for (std::size_t i = 0; i < m.q.size(); ++i)
    f.v[i] = m.q[i] == kInvalidQ ? std::numeric_limits<float>::infinity() : static_cast<float>(m.q[i]) / kDispScale;
  return f;
}

DisparityQ to_q(const DisparityMap& m) {
  DisparityQ q{m.width, m.height, std::vector<std::int16_t>(m.d.size())};
  for (std::size_t i = 0; i < m.d.size(); ++i)
    q.q[i] = m.d[i] < 0 ? kInvalidQ : static_cast<std::int16_t>(m.d[i] * kDispScale);
  return q;
}

CostKind parse_cost(const std::string& s) {
  if (s == "census") return CostKind::census;
  if (s == "sad") return CostKind::sad;
  if (s == "ssd") return CostKind::ssd;
  input_error("--cost", "must be census, sad or ssd (got '" + s + "')");
}

Subpixel parse_subpixel(const std::string& s) {
  if (s == "none") return Subpixel::none;
  if (s == "parabola") return Subpixel::parabola;
  if (s == "equiangular") return Subpixel::equiangular;
  input_error("--subpixel", "must be none, parabola or equiangular (got '" + s + "')");
}

std::string to_string(CostKind c) { return c == CostKind::census ? "census" : c == CostKind::sad ? "sad" : "ssd"; }
std::string to_string(Subpixel s) {
  return s == Subpixel::none ? "none" : s == Subpixel::parabola ? "parabola" : "equiangular";
}

void validate(const PostParams& p) {
  if (p.uniqueness < 0 || p.uniqueness > 1000) input_error("--uniqueness", "must be 0..1000 (percent)");
  if (p.lr_check > kMaxAbsDisparity) input_error("--lr-check", "at most " + std::to_string(kMaxAbsDisparity));
  if (p.median != 0 && p.median != 3) input_error("--median", "must be 0 (off) or 3");
  if (p.speckle_size < 0) input_error("--speckle-size", "must be >= 0");
  if (p.speckle_range < 0) input_error("--speckle-range", "must be >= 0");
}

void validate(const SgmParams& p) {
  auto s = [](int v) { return std::to_string(v); };
  if (p.max_disparity < p.min_disparity)
    input_error("--max-disparity", "must be >= --min-disparity (" + s(p.max_disparity) + " < " + s(p.min_disparity) + ")");
  if (p.min_disparity < -kMaxAbsDisparity || p.max_disparity > kMaxAbsDisparity)
    input_error(p.min_disparity < -kMaxAbsDisparity ? "--min-disparity" : "--max-disparity",
                "SGM disparities must lie in -" + s(kMaxAbsDisparity) + ".." + s(kMaxAbsDisparity));
  if (p.count() > 1024) input_error("--max-disparity", "SGM searches at most 1024 disparities (got " + s(p.count()) + ")");
  if (p.paths != 4 && p.paths != 8) input_error("--paths", "must be 4 or 8 (got " + s(p.paths) + ")");
  if (p.p1 < 0) input_error("--p1", "must be >= 0");
  if (p.p2 < p.p1) input_error("--p2", "must be >= --p1 (" + s(p.p2) + " < " + s(p.p1) + ")");
  if (p.cost_max() + p.p2 > 8191)
    input_error("--p2", "at most " + s(8191 - p.cost_max()) + " with cost " + to_string(p.cost));
  if (p.cost != CostKind::census && (p.window < 1 || p.window > 31 || p.window % 2 == 0))
    input_error("--window", "the sad/ssd cost window must be odd, 1..31 (got " + s(p.window) + ")");
  validate(p.post);
}

const Direction* sgm_directions() {
  static const Direction d[8] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
  return d;
}

}  // namespace evk::stereo
