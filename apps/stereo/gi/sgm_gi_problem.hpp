// Stereo's second evolvable kernel: SGM path aggregation (kernels/original/stereo/sgm_aggregate.cu)
// as a gi::Problem. `stereo gi --seed-kernel sgm ...` works on it (make_gi_problem_for_seed); the
// default stays Stam's SSD kernel.
//
// Cases: synthetic 480x360 pairs, census costs, disparities 0..63, P1 10, P2 120, all 8 directions
// in one launch (8-bit volumes); training and hold-out pair seeds disjoint (2s, 2s+1). The
// reference: aggregate_direction_cpu per direction. Per volume element (every direction, pixel and
// disparity): unset (still poison) -> 200; otherwise |candidate - reference| (at most 100).
// Check::penalty is the mean over all elements; 0 = bit-identical.
// Config parameters: SGM_K (disparities per lane: 16, 8, 32) and SGM_MODE (1 staged census loads,
// 0 direct); launch geometry (G, Gs, Dp, shared memory) follows from SGM_K as in the tool.
#pragma once
#include <memory>

#include "evk/gi/problem.hpp"

namespace evk::stereo {
std::unique_ptr<gi::Problem> make_sgm_gi_problem();
}  // namespace evk::stereo
