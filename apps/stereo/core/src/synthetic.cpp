#include "core/synthetic.hpp"

#include <algorithm>
#include <random>

namespace evk::stereo {

Image8 random_image(int w, int h, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Image8 im{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h)};
  for (auto& p : im.pixels) p = static_cast<std::uint8_t>(rng() >> 56);
  return im;
}

SyntheticPair make_synthetic_pair(int w, int h, int maxd, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 12345);
  auto uni = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1)); };
  // Texture: noise averaged over 2x2 blocks of a finer noise field.
  Image8 noise = random_image(w + 1, h + 1, seed ^ 0xABCDEFull);
  Image8 tex{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      tex.pixels[static_cast<std::size_t>(y) * w + x] = static_cast<std::uint8_t>(
          (noise.at(x, y) + noise.at(x + 1, y) + noise.at(x, y + 1) + noise.at(x + 1, y + 1)) / 4);
  SyntheticPair s;
  s.left = tex;
  s.truth = {w, h, std::vector<int>(static_cast<std::size_t>(w) * h, uni(0, std::max(0, maxd / 4)))};
  const int nrect = uni(1, 4);
  for (int k = 0; k < nrect; ++k) {
    const int rw = uni(std::max(1, w / 8), std::max(1, w / 2)), rh = uni(std::max(1, h / 8), std::max(1, h / 2));
    const int x0 = uni(0, std::max(0, w - rw)), y0 = uni(0, std::max(0, h - rh));
    const int d = uni(maxd / 4, maxd);
    for (int y = y0; y < std::min(h, y0 + rh); ++y)
      for (int x = x0; x < std::min(w, x0 + rw); ++x) {
        int& t = s.truth.d[static_cast<std::size_t>(y) * w + x];
        t = std::max(t, d);
      }
  }
  // Right image: forward-warp each left pixel to x - d, nearer (larger d) wins; holes get new texture.
  Image8 fill = random_image(w, h, seed ^ 0x5151ull);
  s.right = fill;
  std::vector<int> zbuf(static_cast<std::size_t>(w) * h, -1);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int d = s.truth.at(x, y), xr = x - d;
      if (xr < 0) continue;
      const std::size_t i = static_cast<std::size_t>(y) * w + xr;
      if (d > zbuf[i]) {
        zbuf[i] = d;
        s.right.pixels[i] = s.left.at(x, y);
      }
    }
  return s;
}

}  // namespace evk::stereo
