// Block matching (reg_aladin; Ourselin et al. 2001, Modat et al. 2014), CPU reference.
// The reference is cut into 4x4x4 blocks from voxel 0; a block is usable when more than 32 of its
// voxels are inside the image, finite and in the mask, and their variance is > 0. The `percent` %
// of all blocks with the highest variance are matched (fewer when fewer are usable). Each is
// compared with the warped floating image (the floating resampled onto the reference grid through
// the current transformation, NaN outside) at every integer displacement in [-3, 3]^3 voxels: the
// absolute normalised cross-correlation over the voxels valid in both (more than 32 needed). The
// best displacement is the argmax (ties: the first in z, y, x order); a block with no candidate of
// correlation > 0 has no match. Each match also carries a sub-voxel refinement (parabola vertex per
// axis) that the registration uses only with --subvoxel.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

inline constexpr int kBlockWidth = 4;
inline constexpr int kBlockVoxels = 64;
inline constexpr int kCaptureRange = 3;                     // voxels each way
inline constexpr int kCandidates = 7 * 7 * 7;               // (2 * range + 1)^3
inline constexpr int kMinOverlap = kBlockVoxels / 2 + 1;    // > 32 voxels

struct BlockLayout {
  int bx = 0, by = 0, bz = 0;  // blocks per axis: ceil(n / 4)
  std::vector<int> active;     // block indices (x fastest), highest variance first
  int usable = 0;              // blocks that passed the usability test
  int total() const { return bx * by * bz; }
  // First voxel of block b.
  void corner(int b, int& x, int& y, int& z) const {
    x = (b % bx) * kBlockWidth;
    y = ((b / bx) % by) * kBlockWidth;
    z = (b / (bx * by)) * kBlockWidth;
  }
};

// Selects the blocks to match. `mask`: empty = every voxel; else one byte per reference voxel.
BlockLayout select_blocks(const Volume& ref, const Mask& mask, int percent);

struct BlockMatch {
  std::int32_t dx = 0, dy = 0, dz = 0;  // best displacement (reference voxels); valid when ncc > 0
  float ncc = 0;                        // its |NCC|; 0 = no match
  // Sub-voxel refinement along each axis (used with AffineOptions::subvoxel): the vertex of the
  // parabola through the |NCC| at d-1, d, d+1, in [-0.5, 0.5]; 0 where a neighbour is outside the
  // range or not a candidate, or the three do not make a maximum. Computed as subvoxel_offset.
  float fx = 0, fy = 0, fz = 0;
  float reserved = 0;
};

// The sub-voxel offset from the |NCC| at d-1 (cm), d (c0), d+1 (cp); cm or cp < 0: not available.
// The GPU repeats these double operations (block_match.cpp is compiled without FMA contraction).
double subvoxel_offset(double cm, double c0, double cp);

// The CPU reference (double precision sums, all cores): one match per layout.active entry.
std::vector<BlockMatch> match_blocks_cpu(const Volume& ref, const Mask& mask, const std::vector<float>& warped,
                                         const BlockLayout& layout, int threads = 0);
// |NCC| of one block at one displacement (the quantity the argmax runs over; 0 when undefined).
double block_ncc(const Volume& ref, const Mask& mask, const std::vector<float>& warped, int block,
                 const BlockLayout& layout, int dx, int dy, int dz);

// The matrix taking reference voxel indices to floating voxel indices for a world->world map.
Mat44 voxel_map(const Geometry& ref, const Geometry& flo, const Mat44& ref2flo);

// The floating image on the reference grid through ref2flo (reference world -> floating world):
// trilinear, NaN outside [0, n-1] (within 1e-4 voxel), as reg_aladin warps for block matching.
std::vector<float> warp_linear_cpu(const Geometry& ref, const Volume& flo, const Mat44& ref2flo, int threads = 0);

}  // namespace evk::reg_deform
