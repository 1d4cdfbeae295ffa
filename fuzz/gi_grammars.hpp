// The three tools' GI problems and grammars, built once, for the genome and checkpoint harnesses.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gi/gi_problem.hpp"  // barracuda_exact (apps/barracuda_exact/gi/)
#include "evk/gi/grammar.hpp"
#include "evk/stereo/gi_problem.hpp"
#include "gi_problem.hpp"

namespace evk::fuzz {

struct Kernels {
  std::vector<std::unique_ptr<gi::Problem>> problems;
  std::vector<gi::Grammar> grammars;
  Kernels() {
    problems.push_back(evk::stereo::make_gi_problem());
    problems.push_back(evk::reg_deform::make_gi_problem());
    problems.push_back(evk::barracuda_exact::make_gi_problem());
    for (const auto& p : problems) grammars.push_back(gi::make_grammar(*p));
  }
  static const Kernels& get() {
    static const Kernels k;
    return k;
  }
};

}  // namespace evk::fuzz
