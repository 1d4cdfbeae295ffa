// The options both simulators share: --version, --seed, -t/--threads.
#pragma once
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace evk::sim {

inline void sim_cli_common(CLI::App& app, std::uint64_t& seed, int& threads) {
  app.set_version_flag("--version", app.get_name() + " (EvoKernels)");
  app.add_option("--seed", seed, "random seed")->capture_default_str();
  app.add_option("-t,--threads", threads, "threads (0 = all cores)")->check(CLI::Range(0, 4096))->capture_default_str();
}

}  // namespace evk::sim
