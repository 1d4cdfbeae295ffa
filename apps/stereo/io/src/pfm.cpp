// PFM (Portable Float Map), the Middlebury convention: "Pf" (grey) or "PF" (colour; the first
// channel is used), negative scale = little-endian, rows stored bottom to top.
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "detail.hpp"
#include "evk/error.hpp"

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
  if (scale == 0) input_error(p.string(), "bad PFM scale 0");
  in.get();
  const int ch = magic == "PF" ? 3 : 1;
  const std::size_t n = static_cast<std::size_t>(w) * h;
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
  if (!out) input_error(p.string(), "write failed");
}

}  // namespace evk::stereo::detail
