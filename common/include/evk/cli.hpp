// CLI conventions shared by the three tools (CLI11): common options, backend choice, the
// `devices` subcommand, and run_cli, which maps exceptions to one stderr line + exit code.
#pragma once
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "evk/device.hpp"
#include "evk/dispatch.hpp"

namespace evk {

struct CommonOptions {
  std::string backend = "auto";  // auto | cpu | gpu
  std::string kernel = "auto";   // auto | original | evolved | FILE
  int device = 0;
  bool verbose = false;
  bool json = false;
};

// Adds --backend, --kernel, --device, --verbose, --json to a (sub)command.
void add_common_options(CLI::App* cmd, CommonOptions& opt);

enum class Backend { cpu, gpu };
struct BackendChoice {
  Backend backend = Backend::cpu;
  DeviceInfo device;   // valid when backend == gpu
  std::string reason;  // e.g. "no CUDA device: ..." when auto fell back to the CPU
};
// auto -> the GPU --device if one is usable, else CPU; gpu without a usable GPU -> InputError.
BackendChoice choose_backend(const CommonOptions& opt);

// The tool's one application object with --version; `name` is the executable name.
std::unique_ptr<CLI::App> make_app(const std::string& name, const std::string& description);

// `<tool> devices [--json]`: GPUs, versions, and per kernel the variant that would run.
void add_devices_command(CLI::App& app, const std::string& tool, const std::function<Registry()>& make_registry);

// Parses and runs; returns the process exit code. Errors: one line "tool: message" on stderr.
int run_cli(CLI::App& app, int argc, char** argv);

// Prints to stderr only when verbose (CLIs only; libraries never print).
void verbose_line(const CommonOptions& opt, const std::string& line);

}  // namespace evk
