#include "io/png_slice.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include "core/field/resample_cpu.hpp"
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

namespace {
// 1st..99th percentile window of the finite values; maps to 0..255.
struct Window {
  float lo = 0, hi = 1;
  explicit Window(const std::vector<float>& d) {
    std::vector<float> v;
    v.reserve(d.size());
    for (float x : d)
      if (std::isfinite(x)) v.push_back(x);
    if (v.empty()) return;
    std::nth_element(v.begin(), v.begin() + v.size() / 100, v.end());
    lo = v[v.size() / 100];
    std::nth_element(v.begin(), v.begin() + v.size() * 99 / 100, v.end());
    hi = v[v.size() * 99 / 100];
  }
  std::uint8_t operator()(float x) const {
    if (!std::isfinite(x)) return 0;
    const float t = hi > lo ? (x - lo) / (hi - lo) : 0;
    return static_cast<std::uint8_t>(std::clamp(t, 0.0f, 1.0f) * 255 + 0.5f);
  }
};
}  // namespace

void write_checkerboards(const std::filesystem::path& path, const Volume& ref, const std::vector<float>& before,
                         const std::vector<float>& after, int tile) {
  const Geometry& g = ref.geo;
  if (before.size() != g.voxels() || after.size() != g.voxels())
    throw std::invalid_argument("write_checkerboards: image sizes differ from the reference");
  tile = std::max(1, tile);
  const Window wr(ref.data), wb(before), wa(after);
  const int gap = 4;
  const int scale = std::max(1, 400 / std::max({g.nx, g.ny, g.nz}));
  const int W = (2 * g.nx + gap) * scale, H = (g.ny + gap + g.nz) * scale;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(W) * H * 3, 0);
  auto put = [&](int px, int py, std::uint8_t c) {
    for (int dy = 0; dy < scale; ++dy)
      for (int dx = 0; dx < scale; ++dx) {
        const std::size_t i = (static_cast<std::size_t>(py * scale + dy) * W + px * scale + dx) * 3;
        rgb[i] = rgb[i + 1] = rgb[i + 2] = c;
      }
  };
  for (int panel = 0; panel < 2; ++panel) {
    const std::vector<float>& mov = panel == 0 ? before : after;
    const Window& wm = panel == 0 ? wb : wa;
    const int x0 = panel * (g.nx + gap);
    // axial: z = nz/2, rows = y descending
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = g.index(x, y, g.nz / 2);
        put(x0 + x, g.ny - 1 - y, ((x / tile + y / tile) % 2) ? wm(mov[i]) : wr(ref.data[i]));
      }
    // coronal: y = ny/2, rows = z descending
    for (int z = 0; z < g.nz; ++z)
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = g.index(x, g.ny / 2, z);
        put(x0 + x, g.ny + gap + g.nz - 1 - z, ((x / tile + z / tile) % 2) ? wm(mov[i]) : wr(ref.data[i]));
      }
  }
  write_png_rgb(path, W, H, rgb);
}

}  // namespace evk::reg_deform
