// Host side of the expert dense-field kernel (kernels/original/reg_deform/field_expert.cu): the
// per-axis tables it reads (first grid index and the 4 cubic B-spline weights of every reference
// coordinate, computed in double exactly as the CPU reference's axis weights, stored as float) and
// the limits of its tiles. Pure host code (CPU-tested).
#pragma once
#include <vector>

namespace evk::reg_deform {

inline constexpr int kExpertTileX = 32;    // voxels along x per block (one warp row)
inline constexpr int kExpertThreads = 256;  // threads per block

struct ExpertAxis {
  std::vector<int> first;     // n entries: floor(i / s)
  std::vector<float> weights; // 4 n entries: weights of grid indices first[i] .. first[i] + 3
};
ExpertAxis expert_axis(int n, double s);

// The most control-point columns any tile of `tile` consecutive voxels needs (the kernel holds
// tile + 4): first[last] - first[start] + 4 over the tiles starting at multiples of tile.
int expert_max_columns(const ExpertAxis& a, int tile);

// The kernel runs every spacing >= 1 voxel per axis (then a tile of T voxels needs <= T + 3 columns).
inline bool expert_supports(double sx, double sy, double sz) { return sx >= 1 && sy >= 1 && sz >= 1; }

}  // namespace evk::reg_deform
