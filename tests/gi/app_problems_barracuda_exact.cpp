// app_problems.hpp, barracuda_exact's part (compiled with bc_core's include directory only).
#include "app_problems.hpp"

#include "gi/gi_problem.hpp"

namespace evk::app_problems {
std::unique_ptr<gi::Problem> barracuda_exact() { return evk::barracuda_exact::make_gi_problem(); }
}  // namespace evk::app_problems
