// reg_deform's subcommands (one file each; cli.cpp adds them) and what they share: the run options
// from the common flags, the plan's -v line, per-stage times and the --json summary.
#pragma once
#include <CLI/CLI.hpp>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <string>

#include "core/compute.hpp"
#include "evk/cli.hpp"

namespace evk::reg_deform {

void add_field_command(CLI::App& app);     // cli_field.cpp
void add_resample_command(CLI::App& app);  // cli_field.cpp
void add_jacobian_command(CLI::App& app);  // cli_field.cpp
void add_grid_command(CLI::App& app);      // cli_make.cpp
void add_random_case_command(CLI::App& app);  // cli_make.cpp
void add_snapshot_command(CLI::App& app);  // cli_make.cpp
void add_affine_command(CLI::App& app);    // cli_affine.cpp
void add_register_command(CLI::App& app);  // cli_register.cpp
void add_cohort_command(CLI::App& app);    // cli_cohort.cpp (register-many)

// Per-stage wall times for --verbose and --json.
struct Stages {
  const CommonOptions& opt;
  nlohmann::json times = nlohmann::json::object();
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  void done(const std::string& stage);
  // A stage of `ms` that ended within the current one (the field inside a resample job).
  void done_part(const std::string& stage, double ms);
};

RunOptions run_options(const CommonOptions& c, int threads = 0);
// plan_run + the -v line "backend: gpu (reason), kernel VARIANT, CONFIG" (`what`: "kernel" or
// "field kernel").
Plan plan_verbose(const CommonOptions& c, const Request& request, const std::string& what = "kernel",
                  int threads = 0);
// The backend plan_backend chooses, made on a thread (device enumeration and the CUDA context: a large
// part of a short command on a GPU) while the caller reads its inputs. get() gives the plan or
// rethrows its error; the backend name is checked at once.
std::future<Plan> start_backend(const CommonOptions& c, int threads = 0);
// The --json fields every field job prints: command, backend, device, kernel, genome, times_ms.
nlohmann::json summary(const std::string& cmd, const Plan& p, const Stages& st);
void print_json(const nlohmann::json& j, const CommonOptions& opt);
// register's and register-many's grid options: --sx, --ln, --maxit, --be, --le, --jl (cli_register.cpp).
void add_grid_options(CLI::App* cmd, RegisterOptions& o);
// --pad: a number or nan (InputError naming --pad otherwise).
float parse_pad(const std::string& s);

}  // namespace evk::reg_deform
