#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "core/sgm.hpp"
#include "io/io.hpp"
#include "io/src/detail.hpp"

namespace evk::stereo {

namespace fs = std::filesystem;
using detail::Gray;

namespace {
void check_readable(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) input_error(p.string(), "no such file");
  if (fs::is_directory(p, ec)) input_error(p.string(), "is a directory, not an image");
  std::ifstream in(p, std::ios::binary);
  if (!in) input_error(p.string(), "cannot open (permission denied?)");
  if (in.peek() == std::char_traits<char>::eof()) input_error(p.string(), "empty file");
}

Gray read_any(const fs::path& p, bool any_depth) {
  check_readable(p);
  if (detail::is_netpbm(p)) return detail::read_netpbm(p);
  return detail::read_opencv(p, any_depth);
}

std::uint16_t scaled(int d, double scale) { return d < 0 ? 0 : static_cast<std::uint16_t>(std::lround(d * scale)); }
}  // namespace

Image8 read_gray(const fs::path& p) {
  Gray g = read_any(p, false);
  if (g.width <= 0 || g.height <= 0) input_error(p.string(), "empty image");
  return to_image8(Image16{g.width, g.height, g.maxval, std::move(g.v)});  // v * 255 / maxval, rounded
}

Image16 read_gray16(const fs::path& p) {
  Gray g = read_any(p, true);
  if (g.width <= 0 || g.height <= 0) input_error(p.string(), "empty image");
  return Image16{g.width, g.height, g.maxval, std::move(g.v)};
}

FloatMap read_disparity(const fs::path& p, double scale) {
  if (!(scale > 0)) input_error("scale", "must be > 0");
  check_readable(p);
  FloatMap m;
  if (detail::is_pfm(p)) {
    m.v = detail::read_pfm(p, m.width, m.height);
    return m;
  }
  Gray g = read_any(p, true);
  m.width = g.width;
  m.height = g.height;
  m.v.resize(g.v.size());
  for (std::size_t i = 0; i < g.v.size(); ++i)
    m.v[i] = g.v[i] == 0 ? std::numeric_limits<float>::infinity() : static_cast<float>(g.v[i] / scale);
  return m;
}

Image8 read_mask(const fs::path& p) { return read_gray(p); }

void check_disparity_output(const fs::path& p, int max_disparity, const WriteOptions& opt) {
  const std::string e = detail::lower_ext(p);
  if (e != ".pfm" && e != ".png" && e != ".pgm")
    input_error(p.string(), "unknown output format '" + e + "' (use .pfm, .png or .pgm)");
  if (e != ".pfm") {
    if (!(opt.png_scale > 0)) input_error("--png-scale", "must be > 0");
    if (max_disparity * opt.png_scale > 65535)
      input_error("--png-scale", "max disparity " + std::to_string(max_disparity) + " x " +
                                     std::to_string(opt.png_scale) + " does not fit 16 bits");
  }
}

void write_disparity(const fs::path& p, const DisparityMap& d, const WriteOptions& opt) {
  int maxd = 0;
  for (int v : d.d) maxd = std::max(maxd, v);
  check_disparity_output(p, maxd, opt);
  AtomicOutput out(p);
  const std::string e = detail::lower_ext(p);
  if (e == ".pfm") {
    detail::write_pfm(out.temp_path(), d.width, d.height, to_float(d).v);
  } else {
    std::vector<std::uint16_t> v(d.d.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = scaled(d.d[i], opt.png_scale);
    if (e == ".pgm") {
      detail::write_pgm16(out.temp_path(), d.width, d.height, v);
    } else {
      std::vector<unsigned char> s(v.size() * 2);
      for (std::size_t i = 0; i < v.size(); ++i) {
        s[2 * i] = static_cast<unsigned char>(v[i] >> 8);
        s[2 * i + 1] = static_cast<unsigned char>(v[i] & 255);
      }
      write_png(out.temp_path(), d.width, d.height, 1, 16, s);
    }
  }
  out.commit();
}

void check_disparity_output(const fs::path& p, int min_disparity, int max_disparity, const WriteOptions& opt) {
  check_disparity_output(p, std::max(0, max_disparity), opt);
  if (detail::lower_ext(p) != ".pfm" && min_disparity < 0)
    input_error(p.string(), "16-bit PNG/PGM cannot hold negative disparities (--min-disparity " +
                                std::to_string(min_disparity) + "); write .pfm");
}

void write_disparity(const fs::path& p, const DisparityQ& d, const WriteOptions& opt) {
  const std::string e = detail::lower_ext(p);
  int qmin = 0, qmax = 0;
  for (std::int16_t q : d.q)
    if (q != kInvalidQ) {
      qmin = std::min<int>(qmin, q);
      qmax = std::max<int>(qmax, q);
    }
  check_disparity_output(p, (qmax + kDispScale - 1) / kDispScale, opt);
  if (e != ".pfm" && qmin < 0) input_error(p.string(), "16-bit PNG/PGM cannot hold negative disparities; write .pfm");
  AtomicOutput out(p);
  if (e == ".pfm") {
    detail::write_pfm(out.temp_path(), d.width, d.height, to_float(d).v);
  } else {
    std::vector<std::uint16_t> v(d.q.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = d.q[i] == kInvalidQ ? 0 : static_cast<std::uint16_t>(std::lround(d.q[i] * opt.png_scale / kDispScale));
    if (e == ".pgm") {
      detail::write_pgm16(out.temp_path(), d.width, d.height, v);
    } else {
      std::vector<unsigned char> s(v.size() * 2);
      for (std::size_t i = 0; i < v.size(); ++i) {
        s[2 * i] = static_cast<unsigned char>(v[i] >> 8);
        s[2 * i + 1] = static_cast<unsigned char>(v[i] & 255);
      }
      write_png(out.temp_path(), d.width, d.height, 1, 16, s);
    }
  }
  out.commit();
}

void write_gray_pgm(const fs::path& p, const Image16& im) {
  AtomicOutput out(p);
  detail::write_pgm(out.temp_path(), im.width, im.height, im.maxval, im.pixels);
  out.commit();
}

void write_color_png(const fs::path& p, const DisparityQ& d, int mind, int maxd) {
  // Colours of whole pixels: the map scaled so that min..max spans the colour map.
  DisparityMap m{d.width, d.height, std::vector<int>(d.q.size())};
  for (std::size_t i = 0; i < d.q.size(); ++i)
    m.d[i] = d.q[i] == kInvalidQ ? -1 : std::max(0, d.q[i] - mind * kDispScale);
  write_color_png(p, m, 0, (maxd - mind) * kDispScale);
}

void write_color_png(const fs::path& p, const DisparityMap& d, int mind, int maxd) {
  if (detail::lower_ext(p) != ".png") input_error(p.string(), "colour output must be a .png file");
  // Piecewise-linear map: dark blue, blue, cyan, yellow, red, dark red.
  static const float anchors[6][3] = {{0, 0, 128}, {0, 0, 255}, {0, 255, 255}, {255, 255, 0}, {255, 0, 0}, {128, 0, 0}};
  AtomicOutput out(p);
  std::vector<unsigned char> s(d.d.size() * 3, 0);
  const float span = maxd > mind ? static_cast<float>(maxd - mind) : 1.0f;
  for (std::size_t i = 0; i < d.d.size(); ++i) {
    if (d.d[i] < 0) continue;
    float t = std::clamp((d.d[i] - mind) / span, 0.0f, 1.0f) * 5.0f;
    const int k = std::min(4, static_cast<int>(t));
    const float f = t - k;
    for (int c = 0; c < 3; ++c)
      s[3 * i + c] = static_cast<unsigned char>(std::lround(anchors[k][c] + f * (anchors[k + 1][c] - anchors[k][c])));
  }
  write_png(out.temp_path(), d.width, d.height, 3, 8, s);
  out.commit();
}

}  // namespace evk::stereo
