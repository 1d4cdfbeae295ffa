// reg_deform as a GI problem (gi/include/evk/gi/problem.hpp): the paper's tile kernel, its six
// configuration macros + block size, a new random case per seed (the deformed white-noise sphere
// in a 217^3 cube) with the CPU field on the active tiles as reference, and the paper's penalties.
#pragma once
#include <memory>

#include "evk/gi/problem.hpp"

namespace evk::reg_deform {

struct GiProblemOptions {
  int case_size = 217;  // random-case cube side
};

// The paper's penalty constant (its fitness unit was GPU clock ticks / 10).
inline constexpr double kPenaltyScale = 213748364.0;

// The paper's penalties for one run: worst voxel error > 0.001 -> K * (error + 0.1), capped at K;
// unset voxels -> K * their fraction; any error > 0.1 -> K * the fraction of such voxels.
evk::gi::Check penalize(double worst, std::size_t unset, std::size_t wrong, std::size_t bad_over_tol, std::size_t total);

std::unique_ptr<evk::gi::Problem> make_gi_problem(const GiProblemOptions& opt = {});

}  // namespace evk::reg_deform
