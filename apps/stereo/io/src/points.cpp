#include "io/points.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/src/detail.hpp"

namespace evk::stereo {
namespace {
float disparity_of_code(std::int16_t q) {
  return q == kInvalidQ ? std::numeric_limits<float>::infinity() : static_cast<float>(q) / 16.0f;
}
float disparity_of(const DisparityQ& d, std::size_t i) { return disparity_of_code(d.q[i]); }
}  // namespace

void write_depth_pfm(const std::filesystem::path& path, const Rig& rig, const DisparityQ& d) {
  std::vector<float> z(d.q.size());
  if (z.size() >= 65536) {  // depth depends on the 16-bit code alone: each code's once (was 20 ms at 1080p)
    std::vector<float> lut(65536);
    for (std::size_t c = 0; c < 65536; ++c)
      lut[c] = depth_from_disparity(rig, disparity_of_code(static_cast<std::int16_t>(static_cast<std::uint16_t>(c))));
    const float* t = lut.data();
    const std::int16_t* q = d.q.data();
    float* out = z.data();
    for (std::size_t i = 0; i < z.size(); ++i) out[i] = t[static_cast<std::uint16_t>(q[i])];
  } else {
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = depth_from_disparity(rig, disparity_of(d, i));
  }
  AtomicOutput out(path);
  detail::write_pfm(out.temp_path(), d.width, d.height, z);
  out.commit();
}

std::size_t write_points_ply(const std::filesystem::path& path, const Rig& rig, const DisparityQ& d, const Image16& left) {
  if (left.width != d.width || left.height != d.height) input_error(path.string(), "the image and the disparity map differ in size");
  std::vector<char> body;
  std::size_t n = 0;
  const double scale = 255.0 / std::max(1, left.maxval);
  for (int y = 0; y < d.height; ++y)
    for (int x = 0; x < d.width; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * static_cast<std::size_t>(d.width) + static_cast<std::size_t>(x);
      std::array<float, 3> p{};
      if (!point_from_disparity(rig, x, y, disparity_of(d, i), p)) continue;
      const auto g = static_cast<std::uint8_t>(left.pixels[i] * scale + 0.5);
      char rec[15];
      std::memcpy(rec, p.data(), 12);  // little-endian hosts only (x86-64, aarch64), as the PLY says
      rec[12] = rec[13] = rec[14] = static_cast<char>(g);
      body.insert(body.end(), rec, rec + sizeof rec);
      ++n;
    }
  AtomicOutput out(path);
  {
    std::ofstream f(out.temp_path(), std::ios::binary);
    f << "ply\nformat binary_little_endian 1.0\ncomment evokernels stereo: points of a disparity map through the rig's Q\n"
      << "element vertex " << n << "\nproperty float x\nproperty float y\nproperty float z\n"
      << "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n";
    f.write(body.data(), static_cast<std::streamsize>(body.size()));
    f.close();
    if (!f) input_error(path.string(), "write failed (disk full?)");
  }
  out.commit();
  return n;
}

}  // namespace evk::stereo
