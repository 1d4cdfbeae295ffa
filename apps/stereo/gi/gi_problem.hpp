// The stereo problem for the GI engine: stereoKernel's source, its 14 configuration parameters,
// training/hold-out cases in four size classes (synthetic pairs, 11x11 window): `paper` 320x240
// with disparities 0..50 (the paper's training setup), `middlebury` 450x375, `kitti` 1242x375 and
// `1080p` 1920x1080, the last three cycling through disparities 0..63, 0..127, 0..255 by seed; and
// the paper's per-pixel penalties, made strict where the paper ignored pixels (the tool promises the
// CPU reference bit for bit):
//   candidate left it unset                          -> 200
//   reference invalid (-1), candidate not -1          -> 100 (the paper ignored these pixels)
//   reference valid, candidate non-finite or outside 0..50 (-1 included) -> 100
//   otherwise                                         -> |candidate - reference|
// Check::penalty is the mean per-pixel penalty over all pixels (the paper's selection threshold
// "not more than 6.0 per pixel" applies to it directly); 0 means identical to the reference.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "evk/gi/problem.hpp"

namespace evk::stereo {
std::unique_ptr<gi::Problem> make_gi_problem();
// The expert SSD kernel (kernels/original/stereo/ssd_expert.cu) as the seed: problem "stereo_expert",
// the same size classes, cases and penalties as make_gi_problem(); window 11 (EX_R 5); config
// parameters EX_TY, EX_DC, EX_DS (tile rows, disparities per chunk, per staged right strip).
std::unique_ptr<gi::Problem> make_expert_gi_problem();
// The problem of a seed kernel (`stereo gi --seed-kernel K`): "ssd" -> make_gi_problem(), "expert" ->
// make_expert_gi_problem(), "sgm" -> the SGM aggregation kernel (sgm_gi_problem.hpp); InputError
// naming --seed-kernel otherwise.
std::unique_ptr<gi::Problem> make_gi_problem_for_seed(const std::string& seed = "ssd");

// What case (seed, holdout) of a size class is (CPU only; the GPU case is made from it).
struct GiCase {
  std::string size_class;
  std::uint64_t seed = 0;
  bool holdout = false;
  int width = 0, height = 0, max_disparity = 0;  // disparities 0..max_disparity
  std::uint64_t pair_seed = 0;                   // make_synthetic_pair's seed: even training, odd hold-out
};
GiCase gi_case(std::uint64_t seed, bool holdout, const std::string& size_class);  // InputError: unknown class

// The size class of a request {width, height, ...}: the nearest class by pixel count (Tsukuba's
// 384x288 -> paper, Venus' 434x383 -> middlebury, 1242x375 -> kitti, 1920x1080 and above -> 1080p).
std::string gi_class_of(const gi::Properties& request);

// The `requires` lines a configuration implies: OUT_TYPE=uchar -> "max_disparity <= 253"; a window
// limit when XHALO or shared memory rule out the widest windows.
std::vector<std::string> gi_constraints(const gi::Config& cfg);
}  // namespace evk::stereo
