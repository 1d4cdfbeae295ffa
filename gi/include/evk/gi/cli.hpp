// `<tool> gi ...`: grammar, apply, run, minimize, tune, validate, report (and the hidden worker).
#pragma once
#include <functional>
#include <memory>

#include <CLI/CLI.hpp>

#include "evk/gi/problem.hpp"

namespace evk::gi {
void add_gi_command(CLI::App& app, std::function<std::unique_ptr<Problem>()> make_problem);
}  // namespace evk::gi
