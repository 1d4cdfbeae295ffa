// `<tool> gi ...`: grammar, classes, apply, run, minimize, tune, validate, evolve, install, list,
// remove, report (and the hidden worker). One file per subcommand under gi/src/cli/.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "evk/dispatch.hpp"
#include "evk/gi/problem.hpp"

namespace evk::gi {

using MakeProblem = std::function<std::unique_ptr<Problem>()>;

// A tool whose GI command can start from one of several seed kernels (stereo: ssd, expert, sgm):
// `gi --seed-kernel NAME ...` (also after the subcommand, and as --seed-kernel=NAME) picks one; the
// worker processes get the same option. A NAME not in `names`: exit 2.
struct SeedKernels {
  std::vector<std::string> names;  // the choices, in the order the messages list them
  std::string default_name;        // without --seed-kernel
  std::function<std::unique_ptr<Problem>(const std::string& name)> make;
};

// command: the subcommand's name ("gi"; a tool with a second evolvable kernel adds another, e.g.
// "gi-inexact", whose worker processes are started through that name).
// make_registry: the tool's registry with its built-in variants (for `gi list` / `gi remove`); none:
// only the overlay directory is listed.
void add_gi_command(CLI::App& app, MakeProblem make_problem, std::function<evk::Registry()> make_registry = {},
                    const std::string& command = "gi", const std::string& description = "");
void add_gi_command(CLI::App& app, SeedKernels seeds, std::function<evk::Registry()> make_registry = {},
                    const std::string& command = "gi", const std::string& description = "");
}  // namespace evk::gi
