// The engine's NVRTC option genes: part of every grammar (Grammar::option_params) and of every
// genome (Genome::options).
#pragma once
#include <string>
#include <vector>

#include "evk/gi/problem.hpp"

namespace evk::gi {

// NVRTC option genes (the engine's, the same for every app): code-generation options that keep
// results exact (no fast-math). Text form "nvrtc:NAME=value", after the config values:
//   nvrtc:maxrregcount=64   --maxrregcount=64          (0 = compiler's choice, the default)
//   nvrtc:ptxas-O=2         -Xptxas=-O2                (3 = the default)
//   nvrtc:vectorize=true    --extra-device-vectorization
// `gi tune` searches them after the launch parameters; the search itself leaves them alone.
std::vector<ConfigParam> nvrtc_option_params();
std::vector<std::string> nvrtc_options(const Config& option_values);  // non-default ones only
// apply() also writes them into the source's first line ("// evk-gi-nvrtc-options: ..."), so that
// tools that carry an evolved variant as source text alone compile it as `gi run` did: they append
// source_nvrtc_options(source) to their NVRTC options. {} when the line is absent.
std::vector<std::string> source_nvrtc_options(const std::string& source);

}  // namespace evk::gi
