// `reg_deform affine`: global (rigid/affine) registration, reg_aladin's method and options.
#pragma once
#include <CLI/CLI.hpp>

namespace evk::reg_deform {
void add_affine_command(CLI::App& app);
}
