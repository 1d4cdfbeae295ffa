// Active-voxel lists for the GPU kernels: linear voxel indices (generic kernel) and 32-bit codes of
// 1x5x5 tiles (one x, five y, five z: the voxels sharing the same 64 control points at spacing 5).
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

// Linear indices of the voxels inside the mask (every voxel when the mask is empty), ascending.
std::vector<std::uint32_t> active_voxels(const Geometry& ref, const Mask& mask);

// Tile layout for tile side t (5 for the original kernel): tiles are 1 x t x t, x fastest.
struct TileLayout {
  int nx = 0, nty = 0, ntz = 0, t = 5;
  std::uint32_t code(int x, int ty, int tz) const {
    return static_cast<std::uint32_t>(x) + static_cast<std::uint32_t>(nx) * (static_cast<std::uint32_t>(ty) + static_cast<std::uint32_t>(nty) * tz);
  }
  void decode(std::uint32_t c, int& x, int& ty, int& tz) const {
    x = static_cast<int>(c % nx);
    const std::uint32_t r = c / nx;
    ty = static_cast<int>(r % nty);
    tz = static_cast<int>(r / nty);
  }
};
TileLayout tile_layout(const Geometry& ref, int t = 5);  // InputError when codes overflow 32 bits

// Codes of the tiles holding at least one active voxel, ascending (x fastest).
std::vector<std::uint32_t> active_tiles(const Geometry& ref, const Mask& mask, const TileLayout& layout);

// Number of active voxels (mask nonzero, or all).
std::size_t count_active(const Geometry& ref, const Mask& mask);

}  // namespace evk::reg_deform
