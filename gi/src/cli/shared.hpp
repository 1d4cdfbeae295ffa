// What the `gi` subcommand files (gi/src/cli/<verb>.cpp) share: the command's context, the
// evaluators, genome input and output, progress lines. Internal to evk_gi.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "evk/gi/cli.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gi/objective.hpp"
#include "evk/gi/post.hpp"

namespace evk::gi::cli {

// One `gi` command of a tool: how it makes its problem and registry, and the --seed-kernel chosen.
struct Context {
  std::string command;                           // "gi", "gi-inexact": the worker is started through it
  MakeProblem make_problem;                      // a tool with one seed kernel
  SeedKernels seeds;                             // a tool with several (seeds.make set)
  std::function<evk::Registry()> make_registry;  // may be empty
  std::string seed;                              // --seed-kernel ("" = seeds.default_name)

  std::unique_ptr<Problem> problem() const;
  std::string seed_name() const;  // the chosen seed kernel; "" for a tool with one
};
using Ctx = std::shared_ptr<Context>;

// GENOME, -o, --class, --device, --json, --objective, --energy-window: what minimize and tune take.
struct GenomeArgs {
  std::string genome, out, cls;
  int device = 0;
  bool json = false;
  std::string objective = "time";
  double energy_window = 200;
};
// --objective and --energy-window of minimize and tune (as gi run's and gi evolve's); `what` leads
// --objective's help ("What to tune for").
void add_objective_options(CLI::App& c, GenomeArgs& o, const char* what);
// --objective parsed and, for energy and edp, the energy counter of --device checked: InputError
// (exit 2) naming --objective, before any worker starts or anything is written.
Objective objective_of(const GenomeArgs& o);

// The subcommands, one file each.
void add_grammar(CLI::App& gi, const Ctx& ctx);
void add_classes(CLI::App& gi, const Ctx& ctx);
void add_apply(CLI::App& gi, const Ctx& ctx);
void add_run(CLI::App& gi, const Ctx& ctx);
void add_minimize(CLI::App& gi, const Ctx& ctx);
void add_tune(CLI::App& gi, const Ctx& ctx);
void add_validate(CLI::App& gi, const Ctx& ctx);
void add_evolve(CLI::App& gi, const Ctx& ctx);
void add_install(CLI::App& gi, const Ctx& ctx);
void add_list(CLI::App& gi, const Ctx& ctx);
void add_remove(CLI::App& gi, const Ctx& ctx);
void add_report(CLI::App& gi, const Ctx& ctx);
void add_worker(CLI::App& gi, const Ctx& ctx);

// "ssd, expert or sgm": the choices of --seed-kernel in messages.
std::string choices_text(const std::vector<std::string>& names);
// A genome file's text, or stdin for "-" (InputError naming a missing file).
std::string read_genome_arg(const std::string& path);
// `text` to `path` through AtomicOutput, or to stdout for "" or "-".
void write_output(const std::string& path, const std::string& text);
// The genome file of a `gi minimize` / `gi tune` result (docs/FORMATS.md header with provenance),
// written to `out`, or to stdout unless the result goes there as JSON. `classes`: the size classes
// measured on ("measured_on").
// `objective`: energy and edp add the header's `objective` line.
void write_result_genome(const Problem& p, const DeviceSummary& d, const std::string& source, const std::string& genome,
                         const std::string& out, bool json_out, const std::vector<std::string>& classes = {},
                         Objective objective = Objective::time);

// The evaluator for `devices` (--devices: one lane per GPU, same kind only) or, when empty, the
// single `device`. Worker logs go to log (lane 0) and log.<index> (other lanes); "" discards them.
struct Evaluators {
  std::unique_ptr<Evaluator> ev;
  std::vector<int> devices;
};
Evaluators make_evaluators(const Context& ctx, const Problem& p, const std::string& devices_spec, int device,
                           const std::string& log, const GpuEvaluatorOptions& eo, int keep_cases = 1);

// energy and edp read the energy counter of every GPU of `devices` (the indices of --device or
// --devices; "all" on a host without GPUs: device 0): one InputError naming --objective when one has
// none, before any worker starts or anything is written. time: nothing to check.
void require_energy_counter(Objective o, const std::string& devices_spec, int device);

// --class NAME (checked) or every size class.
std::vector<std::string> classes_of(const Problem& p, const std::string& cls);
// The probe cases (minimize/tune) of `classes`, from `seed`.
std::vector<CaseRef> probes_of(const Problem& p, const std::vector<std::string>& classes, std::uint64_t seed);
std::string join(const std::vector<std::string>& v, const std::string& sep = ", ");
// "<prefix>-<problem>-<UTC date with '-' for ':'>": the default run / work directory.
std::string default_dir(const std::string& prefix, const Problem& p);
// --overlay DIR, else the tools' overlay directory (InputError when there is none).
std::filesystem::path overlay_of(const std::string& opt);
// "what done/total", redrawn on a TTY (nothing otherwise).
void step_progress(bool tty, const char* what, int done, int total);

}  // namespace evk::gi::cli
