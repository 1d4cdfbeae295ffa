// The three tools' GI problems and grammars, built once, for the genome and checkpoint harnesses.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "app_problems.hpp"  // tests/gi: the tools' problems, one translation unit per tool
#include "evk/gi/grammar.hpp"

namespace evk::fuzz {

struct Kernels {
  std::vector<std::unique_ptr<gi::Problem>> problems;
  std::vector<gi::Grammar> grammars;
  Kernels() {
    problems.push_back(evk::app_problems::stereo());
    problems.push_back(evk::app_problems::reg_deform());
    problems.push_back(evk::app_problems::barracuda_exact());
    for (const auto& p : problems) grammars.push_back(gi::make_grammar(*p));
  }
  static const Kernels& get() {
    static const Kernels k;
    return k;
  }
};

}  // namespace evk::fuzz
