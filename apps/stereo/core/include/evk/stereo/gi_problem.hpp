// The stereo problem for the GI engine: stereoKernel's source, its 14 configuration parameters,
// training/hold-out cases (synthetic 320x240 pairs, disparities 0..50, 11x11 window, as in the
// paper's training setup) and the paper's per-pixel penalties, made strict where the paper ignored
// pixels (the tool promises the CPU reference bit for bit):
//   candidate left it unset                          -> 200
//   reference invalid (-1), candidate not -1          -> 100 (the paper ignored these pixels)
//   reference valid, candidate non-finite or outside 0..50 (-1 included) -> 100
//   otherwise                                         -> |candidate - reference|
// Check::penalty is the mean per-pixel penalty over all pixels (the paper's selection threshold
// "not more than 6.0 per pixel" applies to it directly); 0 means identical to the reference.
#pragma once
#include <memory>

#include "evk/gi/problem.hpp"

namespace evk::stereo {
std::unique_ptr<gi::Problem> make_gi_problem();
}  // namespace evk::stereo
