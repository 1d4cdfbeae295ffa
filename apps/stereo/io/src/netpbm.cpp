// PGM/PPM (P2, P3, P5, P6) reading and PGM writing.
#include <cctype>
#include <fstream>

#include "evk/error.hpp"
#include "io/io.hpp"
#include "io/src/detail.hpp"

namespace evk::stereo::detail {

namespace fs = std::filesystem;

std::string lower_ext(const fs::path& p) {
  std::string e = p.extension().string();
  for (auto& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

static std::string magic(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char m[2] = {0, 0};
  in.read(m, 2);
  return in ? std::string(m, 2) : std::string();
}

bool is_netpbm(const fs::path& p) {
  const std::string m = magic(p);
  return m == "P2" || m == "P3" || m == "P5" || m == "P6";
}
bool is_pfm(const fs::path& p) {
  const std::string m = magic(p);
  return m == "Pf" || m == "PF";
}

std::uint8_t rgb_to_gray(int r, int g, int b) {
  // ITU-R BT.601 luma in 14-bit fixed point, rounded (as OpenCV's RGB->GRAY).
  return static_cast<std::uint8_t>((r * 4899 + g * 9617 + b * 1868 + 8192) >> 14);
}

// Next header integer, skipping whitespace and # comments.
static long header_int(std::istream& in, const fs::path& p, const char* what) {
  int c;
  while ((c = in.peek()) != EOF) {
    if (std::isspace(c)) {
      in.get();
    } else if (c == '#') {
      std::string line;
      std::getline(in, line);
    } else {
      break;
    }
  }
  long v = -1;
  if (!(in >> v) || v < 0) {
    if (std::string(what) == "sample") input_error(p.string(), "truncated or bad pixel data (a number expected)");
    input_error(p.string(), std::string("bad Netpbm header (") + what + ")");
  }
  return v;
}

Gray read_netpbm(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) input_error(p.string(), "cannot open");
  char m[2];
  in.read(m, 2);
  const char kind = m[1];
  const bool ascii = kind == '2' || kind == '3';
  const int channels = (kind == '3' || kind == '6') ? 3 : 1;
  Gray g;
  const long w = header_int(in, p, "width"), h = header_int(in, p, "height"), maxval = header_int(in, p, "maxval");
  if (w <= 0 || h <= 0) input_error(p.string(), "empty image");
  if (w > 100000 || h > 100000) input_error(p.string(), "image too large");
  if (maxval <= 0 || maxval > 65535) input_error(p.string(), "maxval must be 1..65535");
  g.width = static_cast<int>(w);
  g.height = static_cast<int>(h);
  g.maxval = static_cast<int>(maxval);
  const std::size_t n = static_cast<std::size_t>(w) * h;
  const int bps = maxval > 255 ? 2 : 1;
  std::uintmax_t extra = 0;  // bytes after the announced binary data
  {  // enough bytes left for the samples the header announces? (checked before allocating them)
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    const auto here = in.tellg();  // -1 when the header's last number ran into the end of the file
    if (!ec) {
      const std::uintmax_t at = here >= 0 ? static_cast<std::uintmax_t>(here) : size;
      const std::uintmax_t left = at <= size ? size - at : 0;
      // binary: one separator byte then the samples; text: at least a digit and a separator each
      const std::uintmax_t need = ascii ? 2 * n * channels : 1 + n * channels * bps;
      if (left < need)
        input_error(p.string(), "truncated pixel data (" + std::to_string(w) + "x" + std::to_string(h) + (channels == 3 ? " RGB" : "") +
                                    " needs " + std::to_string(need) + " bytes after the header, the file has " +
                                    std::to_string(left) + ")");
      extra = left - need;
    }
  }
  std::vector<std::uint16_t> s(n * channels);
  if (ascii) {
    for (auto& x : s) {
      long v = header_int(in, p, "sample");
      if (v > maxval) input_error(p.string(), "sample above maxval");
      x = static_cast<std::uint16_t>(v);
    }
  } else {
    const int sep = in.get();
    if (!std::isspace(sep)) input_error(p.string(), "bad Netpbm header (no whitespace after maxval)");
    // CRLF: the LF would be read as the first pixel and the last one dropped (one byte too many)
    if (sep == '\r' && in.peek() == '\n' && extra > 0)
      input_error(p.string(), "CRLF line end after the header of a binary image (exactly one whitespace byte expected)");
    std::vector<unsigned char> raw(s.size() * bps);
    in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
    if (in.gcount() != static_cast<std::streamsize>(raw.size())) input_error(p.string(), "truncated pixel data");
    for (std::size_t i = 0; i < s.size(); ++i)
      s[i] = bps == 2 ? static_cast<std::uint16_t>(raw[2 * i] << 8 | raw[2 * i + 1]) : raw[i];
  }
  if (channels == 1) {
    g.v = std::move(s);
  } else {
    g.v.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      // weights applied at full depth in double, rounded
      g.v[i] = static_cast<std::uint16_t>(0.299 * s[3 * i] + 0.587 * s[3 * i + 1] + 0.114 * s[3 * i + 2] + 0.5);
      if (g.maxval == 255) g.v[i] = rgb_to_gray(s[3 * i], s[3 * i + 1], s[3 * i + 2]);
    }
  }
  return g;
}

void write_pgm(const fs::path& p, int w, int h, int maxval, const std::vector<std::uint16_t>& v) {
  std::ofstream out(p, std::ios::binary);
  if (!out) input_error(p.string(), "cannot open for writing");
  out << "P5\n" << w << " " << h << "\n" << maxval << "\n";
  const bool wide = maxval > 255;  // Netpbm: two bytes a sample, most significant first, above 255
  std::vector<unsigned char> raw(v.size() * (wide ? 2 : 1));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (wide) {
      raw[2 * i] = static_cast<unsigned char>(v[i] >> 8);
      raw[2 * i + 1] = static_cast<unsigned char>(v[i] & 255);
    } else {
      raw[i] = static_cast<unsigned char>(v[i]);
    }
  }
  out.write(reinterpret_cast<const char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  out.close();  // the last buffer is written here: check it too
  if (!out) input_error(p.string(), "write failed (disk full?)");
}

void write_pgm16(const fs::path& p, int w, int h, const std::vector<std::uint16_t>& v) { write_pgm(p, w, h, 65535, v); }

}  // namespace evk::stereo::detail

namespace evk::stereo {
void write_pgm8(const std::filesystem::path& p, const Image8& im) {
  std::ofstream out(p, std::ios::binary);
  if (!out) input_error(p.string(), "cannot open for writing");
  out << "P5\n" << im.width << " " << im.height << "\n255\n";
  out.write(reinterpret_cast<const char*>(im.pixels.data()), static_cast<std::streamsize>(im.pixels.size()));
  out.close();
  if (!out) input_error(p.string(), "write failed (disk full?)");
}
}  // namespace evk::stereo
