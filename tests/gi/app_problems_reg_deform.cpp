// app_problems.hpp, reg_deform's part (compiled with reg_core's include directory only).
#include "app_problems.hpp"

#include "gi/gi_problem.hpp"

namespace evk::app_problems {
std::unique_ptr<gi::Problem> reg_deform() { return evk::reg_deform::make_gi_problem(); }
std::unique_ptr<gi::Problem> reg_deform_expert() { return evk::reg_deform::make_expert_gi_problem(); }
}  // namespace evk::app_problems
