// `<tool> gi ...`: grammar, apply, run, minimize, tune, validate, report (and the hidden worker).
#pragma once
#include <functional>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "evk/gi/problem.hpp"

namespace evk::gi {
// command: the subcommand's name ("gi"; a tool with a second evolvable kernel adds another, e.g.
// "gi-inexact", whose worker processes are started through that name).
void add_gi_command(CLI::App& app, std::function<std::unique_ptr<Problem>()> make_problem,
                    const std::string& command = "gi", const std::string& description = "");
}  // namespace evk::gi
