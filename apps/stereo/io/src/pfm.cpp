// PFM (Portable Float Map), the Middlebury convention: "Pf" (grey) or "PF" (colour; the first
// channel is used), negative scale = little-endian, rows stored bottom to top.
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "evk/error.hpp"
#include "io/src/detail.hpp"

namespace evk::stereo::detail {

namespace fs = std::filesystem;

std::vector<float> read_pfm(const fs::path& p, int& width, int& height) {
  std::ifstream in(p, std::ios::binary);
  if (!in) input_error(p.string(), "cannot open");
  std::string magic;
  long w = 0, h = 0;
  double scale = 0;
  if (!(in >> magic >> w >> h >> scale) || (magic != "Pf" && magic != "PF")) input_error(p.string(), "bad PFM header");
  if (w <= 0 || h <= 0 || w > 100000 || h > 100000) input_error(p.string(), "bad PFM size");
  if (scale == 0 || !std::isfinite(scale)) input_error(p.string(), "bad PFM scale (must be a nonzero number)");
  if (!std::isspace(in.get())) input_error(p.string(), "bad PFM header (no whitespace after the scale)");
  const int ch = magic == "PF" ? 3 : 1;
  const std::size_t n = static_cast<std::size_t>(w) * h;
  {  // enough bytes for the announced size? (checked before allocating it)
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    const auto here = in.tellg();
    if (!ec && here >= 0 && size - static_cast<std::uintmax_t>(here) < n * ch * 4)
      input_error(p.string(), "truncated PFM data (" + std::to_string(w) + "x" + std::to_string(h) + " needs " +
                                  std::to_string(n * ch * 4) + " bytes after the header, the file has " +
                                  std::to_string(size - static_cast<std::uintmax_t>(here)) + ")");
  }
  std::vector<unsigned char> raw(n * ch * 4);
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  if (in.gcount() != static_cast<std::streamsize>(raw.size())) input_error(p.string(), "truncated PFM data");
  const bool little = scale < 0;
  std::vector<float> v(n);
  for (long y = 0; y < h; ++y)
    for (long x = 0; x < w; ++x) {
      const unsigned char* b = &raw[((static_cast<std::size_t>(h - 1 - y) * w + x) * ch) * 4];
      unsigned char q[4] = {b[0], b[1], b[2], b[3]};
      if (!little) std::swap(q[0], q[3]), std::swap(q[1], q[2]);
      std::memcpy(&v[static_cast<std::size_t>(y) * w + x], q, 4);
    }
  width = static_cast<int>(w);
  height = static_cast<int>(h);
  return v;
}

void write_pfm(const fs::path& p, int w, int h, const std::vector<float>& v) {
  std::ofstream out(p, std::ios::binary);
  out << "Pf\n" << w << " " << h << "\n-1.0\n";
  for (int y = h - 1; y >= 0; --y)
    out.write(reinterpret_cast<const char*>(&v[static_cast<std::size_t>(y) * w]), static_cast<std::streamsize>(w) * 4);
  out.close();  // the last buffer is written here: check it too
  if (!out) input_error(p.string(), "write failed (disk full?)");
}

}  // namespace evk::stereo::detail
