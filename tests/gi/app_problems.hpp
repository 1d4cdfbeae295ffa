// The three tools' GI problems for the engine tests and the fuzz harnesses (fuzz/gi_grammars.hpp),
// each made in a translation unit of its own (app_problems_<tool>.cpp, compiled with that tool's
// include directory only): the tools spell their includes from their app folders, whose core/ and
// gi/ hold headers of the same names (gi/gi_problem.hpp in all three), so a translation unit sees
// one tool.
#pragma once
#include <memory>

#include "evk/gi/problem.hpp"

namespace evk::app_problems {
std::unique_ptr<gi::Problem> stereo();             // evk::stereo::make_gi_problem()
std::unique_ptr<gi::Problem> stereo_expert();      // evk::stereo::make_expert_gi_problem()
std::unique_ptr<gi::Problem> reg_deform();         // evk::reg_deform::make_gi_problem()
std::unique_ptr<gi::Problem> reg_deform_expert();  // evk::reg_deform::make_expert_gi_problem()
std::unique_ptr<gi::Problem> barracuda_exact();    // evk::barracuda_exact::make_gi_problem()
}  // namespace evk::app_problems
