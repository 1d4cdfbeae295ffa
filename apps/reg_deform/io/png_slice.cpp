#include "png_slice.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include "../core/resample_cpu.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "evk/png.hpp"

namespace evk::reg_deform {

void write_png_rgb(const std::filesystem::path& path, int w, int h, const std::vector<std::uint8_t>& rgb) {
  if (rgb.size() != static_cast<std::size_t>(w) * h * 3) throw std::invalid_argument("write_png_rgb: size mismatch");
  AtomicOutput out(path);
  write_png(out.temp_path(), w, h, 3, 8, rgb);
  out.commit();
}

void write_snapshot(const std::filesystem::path& path, const Volume& before, const Volume& after, const Field& def,
                    double spacing) {
  const Geometry& g = after.geo;
  const int z = g.nz / 2, bz = before.geo.nz / 2;
  // Intensity window from the before image's 1st and 99th percentiles.
  std::vector<float> v(before.data);
  std::sort(v.begin(), v.end());
  const float lo = v.empty() ? 0 : v[v.size() / 100], hi = v.empty() ? 1 : v[v.size() * 99 / 100];
  auto grey = [&](float x) {
    const float t = hi > lo ? (x - lo) / (hi - lo) : 0;
    return static_cast<std::uint8_t>(std::clamp(t, 0.0f, 1.0f) * 255 + 0.5f);
  };
  const int pw = std::max(g.nx, before.geo.nx), ph = std::max(g.ny, before.geo.ny);
  const int scale = std::max(1, 320 / std::max(pw, ph));
  const int W = (2 * pw + 4) * scale, H = ph * scale;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(W) * H * 3, 0);
  // panel pixel -> scaled block; thin = only the block's top row and left column (grid lines)
  // vert/horiz: only the block's left column / bottom row (thin grid lines)
  auto put = [&](int px, int py, std::uint8_t r, std::uint8_t gg, std::uint8_t b, bool vert = false, bool horiz = false) {
    for (int dy = 0; dy < scale; ++dy)
      for (int dx = 0; dx < scale; ++dx) {
        if ((vert || horiz) && !(vert && dx == 0) && !(horiz && dy == scale - 1)) continue;
        const std::size_t i = (static_cast<std::size_t>(py * scale + dy) * W + px * scale + dx) * 3;
        rgb[i] = r;
        rgb[i + 1] = gg;
        rgb[i + 2] = b;
      }
  };
  const int s = std::max(1, static_cast<int>(std::lround(spacing)));
  // left: the input slice with the regular grid
  for (int y = 0; y < before.geo.ny; ++y)
    for (int x = 0; x < before.geo.nx; ++x) {
      const std::uint8_t c = grey(before.data[before.geo.index(x, y, bz)]);
      put(x, ph - 1 - y, c, c, c);
      if (x % s == 0 || y % s == 0) put(x, ph - 1 - y, 255, 200, 0, x % s == 0, y % s == 0);
    }
  // right: the resampled slice with the input's grid lines carried through the transformation
  const std::vector<float> fc = floating_coordinates(def, before.geo);
  const std::size_t nv = g.voxels();
  auto cell = [&](int x, int y, int a) { return std::floor(fc[a * nv + g.index(x, y, z)] / s); };
  const int off = pw + 4;
  for (int y = 0; y < g.ny; ++y)
    for (int x = 0; x < g.nx; ++x) {
      const std::uint8_t c = grey(after.data[g.index(x, y, z)]);
      bool vert = false, horiz = false;  // a grid cell boundary between this voxel and the next in x / y
      for (int a = 0; a < 2; ++a) {
        const double here = cell(x, y, a);
        if (x > 0 && cell(x - 1, y, a) != here) vert = true;
        if (y > 0 && cell(x, y - 1, a) != here) horiz = true;
      }
      put(off + x, ph - 1 - y, c, c, c);
      if (vert || horiz) put(off + x, ph - 1 - y, 0, 220, 255, vert, horiz);
    }
  write_png_rgb(path, W, H, rgb);
}

}  // namespace evk::reg_deform
