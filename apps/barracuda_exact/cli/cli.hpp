// The parts of barracuda_exact's command line shared between its files (cli.cpp: main, split;
// index_command.cpp: `index`; map_command.cpp: `map`'s options; map_report.cpp: `map`'s summary and --json keys).
#pragma once
#include <string>

#include "evk/cli.hpp"
#include "map/map_options.hpp"

namespace evk::barracuda_exact {

// `index`: bwa index's five files, the suffixes sorted on GPUs or the CPU.
void add_index_command(CLI::App& app);

// `damage`: the ancient-DNA damage profile of a BAM (damage_command.cpp).
void add_damage_command(CLI::App& app);

// `map`: bwa aln + samse/sampe, or the exact mode (--exact).
void add_map_command(CLI::App& app, const std::string& command_line);

// `map`'s summary (stderr when the output is a file), --json keys (stdout) and -v lines.
void print_exact_stats(const MapOptions& mo, const CommonOptions& co, const MapStats& st);
void print_aln_stats(const MapOptions& mo, const CommonOptions& co, const MapStats& st);

}  // namespace evk::barracuda_exact
