// CLI conventions shared by the three tools (CLI11): common options, backend choice, the
// `devices` subcommand, and run_cli, which maps exceptions to one stderr line + exit code.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "evk/device.hpp"
#include "evk/dispatch.hpp"
#include "evk/main_guard.hpp"

namespace evk {

struct CommonOptions {
  std::string backend = "auto";  // auto | cpu | gpu
  std::string kernel = "auto";   // auto | original | evolved | FILE
  int device = 0;
  bool verbose = false;
  bool json = false;
};

// Adds --backend, --kernel, --device, --verbose, --json to a (sub)command (and the hidden
// --no-embedded-variants: set_embedded_variants_enabled(false), evk/embedded.hpp).
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

// Parses and runs; returns the process exit code. Errors: one line "tool: message" on stderr
// (run_guarded, evk/main_guard.hpp; CLI11 parse errors exit 2).
int run_cli(CLI::App& app, int argc, char** argv);

// --devices: "all" (indices 0 .. device_count() - 1; default: the GPUs gpu_environment() sees) or a
// comma-separated list of device indices like 0,1 (spaces allowed). InputError naming --devices for
// anything else or an index given twice.
std::vector<int> parse_devices(const std::string& spec, const std::function<int()>& device_count = {});

// Prints to stderr only when verbose (CLIs only; libraries never print).
void verbose_line(const CommonOptions& opt, const std::string& line);

}  // namespace evk
