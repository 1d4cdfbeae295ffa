// app_problems.hpp, stereo's part (compiled with stereo_core's include directory only).
#include "app_problems.hpp"

#include "gi/gi_problem.hpp"

namespace evk::app_problems {
std::unique_ptr<gi::Problem> stereo() { return evk::stereo::make_gi_problem(); }
std::unique_ptr<gi::Problem> stereo_expert() { return evk::stereo::make_expert_gi_problem(); }
}  // namespace evk::app_problems
