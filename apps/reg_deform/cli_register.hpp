// `reg_deform register` (cli_register.cpp), added to the tool's CLI by cli.cpp.
#pragma once
#include <CLI/CLI.hpp>

void add_register_command(CLI::App& app);
