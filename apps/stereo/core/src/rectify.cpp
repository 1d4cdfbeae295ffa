// The CPU reference of the rectification remap (core/rectify.hpp states the arithmetic). Written as
// plainly as possible, independently of the GPU kernel (core/src/sgm/rectify.cu).
#include "core/rectify.hpp"

#include <cmath>
#include <string>

#include "evk/error.hpp"

namespace evk::stereo {

namespace {
template <class T>
void remap_plain(const T* src, int w, int h, const float* mx, const float* my, T* dst) {
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * w + x;
      const float px = mx[i], py = my[i];
      const bool inside = px > -1.0f && px < static_cast<float>(w) && py > -1.0f && py < static_cast<float>(h);
      if (!inside) {  // also NaN, whose comparisons are all false
        dst[i] = 0;
        continue;
      }
      const int qx = static_cast<int>(std::floor(px * 256.0f + 0.5f));
      const int qy = static_cast<int>(std::floor(py * 256.0f + 0.5f));
      const int x0 = qx >> 8, y0 = qy >> 8;
      const std::uint32_t fx = static_cast<std::uint32_t>(qx & 255), fy = static_cast<std::uint32_t>(qy & 255);
      auto at = [&](int xx, int yy) -> std::uint32_t {
        if (xx < 0 || xx >= w || yy < 0 || yy >= h) return 0;
        return src[static_cast<std::size_t>(yy) * w + xx];
      };
      const std::uint32_t sum = (256 - fx) * (256 - fy) * at(x0, y0) + fx * (256 - fy) * at(x0 + 1, y0) +
                                (256 - fx) * fy * at(x0, y0 + 1) + fx * fy * at(x0 + 1, y0 + 1);
      dst[i] = static_cast<T>((sum + 32768u) >> 16);
    }
}
}  // namespace

void remap_cpu(const std::uint8_t* src, int w, int h, const float* mx, const float* my, std::uint8_t* dst) {
  remap_plain(src, w, h, mx, my, dst);
}
void remap_cpu(const std::uint16_t* src, int w, int h, const float* mx, const float* my, std::uint16_t* dst) {
  remap_plain(src, w, h, mx, my, dst);
}

void check_rectify_size(const RectifyMaps& m, int width, int height) {
  if (width != m.width || height != m.height)
    input_error("--rig", "the rig was calibrated on " + std::to_string(m.width) + "x" + std::to_string(m.height) +
                             " views, the frames are " + std::to_string(width) + "x" + std::to_string(height));
}

void rectify_image(const RectifyMaps& m, int camera, Image16& im) {
  check_rectify_size(m, im.width, im.height);
  const int k = camera ? 1 : 0;
  std::vector<std::uint16_t> out(im.pixels.size());
  remap_cpu(im.pixels.data(), im.width, im.height, m.x[k].data(), m.y[k].data(), out.data());
  im.pixels.swap(out);
}

RectifyMaps synthetic_rectify_maps(int w, int h, double angle, double k1) {
  RectifyMaps m;
  m.width = w;
  m.height = h;
  const double cx = (w - 1) / 2.0, cy = (h - 1) / 2.0, r2 = cx * cx + cy * cy > 0 ? cx * cx + cy * cy : 1.0;
  for (int k = 0; k < 2; ++k) {
    const double c = std::cos(k ? -angle : angle), s = std::sin(k ? -angle : angle);
    m.x[k].resize(static_cast<std::size_t>(w) * h);
    m.y[k].resize(m.x[k].size());
    for (int v = 0; v < h; ++v)
      for (int u = 0; u < w; ++u) {
        const double a = c * (u - cx) - s * (v - cy), b = s * (u - cx) + c * (v - cy);
        const double f = 1 + k1 * (a * a + b * b) / r2;
        const std::size_t i = static_cast<std::size_t>(v) * w + u;
        m.x[k][i] = static_cast<float>(cx + f * a);
        m.y[k][i] = static_cast<float>(cy + f * b);
      }
  }
  return m;
}

}  // namespace evk::stereo
