// `<tool> gi ...`: grammar, apply, run, minimize, tune, validate, evolve, install, list, remove,
// report (and the hidden worker).
#pragma once
#include <functional>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "evk/dispatch.hpp"
#include "evk/gi/problem.hpp"

namespace evk::gi {
// command: the subcommand's name ("gi"; a tool with a second evolvable kernel adds another, e.g.
// "gi-inexact", whose worker processes are started through that name).
// make_registry: the tool's registry with its built-in variants (for `gi list` / `gi remove`); none:
// only the overlay directory is listed.
void add_gi_command(CLI::App& app, std::function<std::unique_ptr<Problem>()> make_problem,
                    std::function<evk::Registry()> make_registry = {}, const std::string& command = "gi",
                    const std::string& description = "");
}  // namespace evk::gi
