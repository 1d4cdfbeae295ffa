#include "core/field/active.hpp"

#include <string>

#include "evk/error.hpp"

namespace evk::reg_deform {

std::vector<std::uint32_t> active_voxels(const Geometry& ref, const Mask& mask) {
  const std::size_t nv = ref.voxels();
  if (nv > 0xffffffffull) input_error("reference", "too many voxels for 32-bit voxel indices");
  std::vector<std::uint32_t> v;
  v.reserve(mask.empty() ? nv : nv / 4);
  for (std::size_t i = 0; i < nv; ++i)
    if (mask.empty() || mask[i]) v.push_back(static_cast<std::uint32_t>(i));
  return v;
}

TileLayout tile_layout(const Geometry& ref, int t) {
  TileLayout l;
  l.t = t;
  l.nx = ref.nx;
  l.nty = (ref.ny + t - 1) / t;
  l.ntz = (ref.nz + t - 1) / t;
  if (static_cast<unsigned long long>(l.nx) * l.nty * l.ntz > 0xffffffffull)
    input_error("reference", "too large for 32-bit tile codes");
  return l;
}

std::vector<std::uint32_t> active_tiles(const Geometry& ref, const Mask& mask, const TileLayout& l) {
  std::vector<std::uint32_t> codes;
  for (int tz = 0; tz < l.ntz; ++tz)
    for (int ty = 0; ty < l.nty; ++ty)
      for (int x = 0; x < l.nx; ++x) {
        bool any = mask.empty();
        for (int k = 0; k < l.t && !any; ++k) {
          const int z = tz * l.t + k;
          if (z >= ref.nz) break;
          for (int j = 0; j < l.t; ++j) {
            const int y = ty * l.t + j;
            if (y >= ref.ny) break;
            if (mask[ref.index(x, y, z)]) {
              any = true;
              break;
            }
          }
        }
        if (any) codes.push_back(l.code(x, ty, tz));
      }
  return codes;
}

std::size_t count_active(const Geometry& ref, const Mask& mask) {
  if (mask.empty()) return ref.voxels();
  std::size_t n = 0;
  for (auto m : mask) n += m != 0;
  return n;
}

}  // namespace evk::reg_deform
