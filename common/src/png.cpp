#include <zlib.h>

#include <fstream>

#include "evk/error.hpp"
#include "evk/png.hpp"

#include <cstdint>
#include <stdexcept>

namespace evk {

namespace {
void put32(std::vector<unsigned char>& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(v >> s));
}
void chunk(std::ofstream& out, const char* type, const std::vector<unsigned char>& data) {
  std::vector<unsigned char> b;
  put32(b, static_cast<std::uint32_t>(data.size()));
  b.insert(b.end(), type, type + 4);
  b.insert(b.end(), data.begin(), data.end());
  const uLong crc = crc32(crc32(0L, Z_NULL, 0), b.data() + 4, static_cast<uInt>(b.size() - 4));
  put32(b, static_cast<std::uint32_t>(crc));
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}
}  // namespace

void write_png(const std::filesystem::path& p, int w, int h, int channels, int depth,
               const std::vector<unsigned char>& samples) {
  const std::size_t row = static_cast<std::size_t>(w) * channels * (depth / 8);
  if (samples.size() != row * h) throw std::logic_error("write_png: sample count does not match the size");
  std::vector<unsigned char> raw;
  raw.reserve((row + 1) * h);
  for (int y = 0; y < h; ++y) {
    raw.push_back(0);
    raw.insert(raw.end(), samples.begin() + static_cast<std::ptrdiff_t>(row * y),
               samples.begin() + static_cast<std::ptrdiff_t>(row * (y + 1)));
  }
  uLongf zn = compressBound(static_cast<uLong>(raw.size()));
  std::vector<unsigned char> z(zn);
  if (compress2(z.data(), &zn, raw.data(), static_cast<uLong>(raw.size()), 6) != Z_OK)
    throw std::runtime_error("zlib compression failed");
  z.resize(zn);
  std::ofstream out(p, std::ios::binary);
  if (!out) input_error(p.string(), "cannot open for writing");
  const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  out.write(reinterpret_cast<const char*>(sig), 8);
  std::vector<unsigned char> ihdr;
  put32(ihdr, static_cast<std::uint32_t>(w));
  put32(ihdr, static_cast<std::uint32_t>(h));
  ihdr.push_back(static_cast<unsigned char>(depth));
  ihdr.push_back(channels == 3 ? 2 : 0);
  ihdr.push_back(0);
  ihdr.push_back(0);
  ihdr.push_back(0);
  chunk(out, "IHDR", ihdr);
  chunk(out, "IDAT", z);
  chunk(out, "IEND", {});
  out.close();  // the last buffer is written here: check it too
  if (!out) input_error(p.string(), "write failed (disk full?)");
}

}  // namespace evk
