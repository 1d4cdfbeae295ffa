// The GP search (GECCO 2014/2015): unique random single mutants first; each generation 50%
// truncation selection (zero penalty and no slower than the re-timed reference + tolerance), one
// child by mutation and one by crossover per parent, missing children random; genotypic and
// two-tier phenotypic tabu; a new training case per generation. A run directory makes it durable.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "evk/gi/budget.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/grammar.hpp"
#include "evk/gi/objective.hpp"

namespace evk::gi {

struct SearchOptions {
  int population = 100;
  int generations = 10;
  std::uint64_t seed = 1;
  double tolerance = 0.10;      // a parent may be this much slower than the reference
  TimingSpec timing;
  int tabu_rounds = 3;          // replacement rounds for phenotypic duplicates
  double watchdog_min_s = 1;    // per candidate: min + factor * reference time * launches
  double watchdog_factor = 50;
  // Loop-guard deadline per candidate evaluation: max(deadline_min_ms, deadline_factor * reference
  // time); a candidate that runs past it stops its loops and gets a penalty (TimingSpec::budget_ms).
  double deadline_factor = 20;
  double deadline_min_ms = 5;
  // Adaptive repeats for candidates (the reference always gets timing.repeats): stop after
  // min_repeats when (max - min) / median <= stop_spread, or when every run took longer than
  // give_up_factor * reference * (1 + tolerance) (it cannot become a parent).
  int min_repeats = 3;
  double stop_spread = 0.01;
  double give_up_factor = 1.5;
  std::string run_dir;          // empty: nothing written
  bool resume = false;          // continue from run_dir/checkpoint.json
  std::string problem;          // recorded in the run directory
  // Size classes of the training cases: generation g uses classes[g % size] (empty: the problem's
  // first class, through the evaluator's default).
  std::vector<std::string> classes;
  // Wall-time budget of this call in seconds (0: none): no generation starts that the mean
  // generation time so far says would end after it (generation 0 always runs).
  double budget_s = 0;
  // The clock of budget_s and stop_before (empty: steady_clock; gi evolve passes its own).
  SecondsClock clock;
  // Asked before every generation but the first with the mean generation time so far (seconds on
  // `clock`): true ends the search there (gi evolve: the next generation would eat into the time
  // reserved for validation).
  std::function<bool(double generation_s)> stop_before;
  // What fitness minimises (objective.hpp): energy and edp also measure joules per launch
  // (timing.energy is set for them); parents must still be within the tolerance in time.
  Objective objective = Objective::time;
};

struct Individual {
  Genome genome;
  std::string text;
  std::string status = "new";   // ok, compile_error, illegal_config, launch_error, crash, hang, worker_error
  double fitness = std::numeric_limits<double>::infinity();
  double time_ms = 0, penalty = 0;  // time_ms: on lane 0's scale (raw_ms x lane 0's reference / its lane's)
  double raw_ms = 0;                // as measured on its lane
  int lane = 0;                     // the device (lane) that ran it
  double ticks = 0;  // per-SM clock ticks (RunResult::ticks) of its last timed run
  int sms = 0;
  double joules = 0;  // per launch, on lane 0's scale (0: not measured)
  double raw_j = 0;   // as measured on its lane
  double watts = 0;
  std::string summary;
  bool correct() const { return status == "ok" && penalty == 0; }
};

struct GenerationStats {
  int generation = 0;
  std::uint64_t case_seed = 0;
  std::string case_describe;
  std::string size_class;
  std::vector<double> lane_ref_ms;  // the reference re-timed on each lane (lane 0 = ref_ms)
  double ref_ms = 0, best_ms = 0, best_speedup = 0, median_ms = 0;
  int evaluated = 0, compiled = 0, correct = 0, faster = 0, parents = 0;
  int tabu_genotype = 0, tabu_phenotype = 0, tabu_code = 0;
  int crashes = 0, hangs = 0, restarts = 0;
  double compile_s = 0, run_s = 0, wall_s = 0, compile_cpu_s = 0;
  double compile_wait_s = 0;  // of run time, waiting for a chunk's compilation (compile_s overlaps runs)
  double breed_s = 0, reference_s = 0;  // the rest of wall_s: breeding + tabu, the reference's run
  double ref_ticks = 0, best_ticks = 0;  // per-SM clock ticks (longest SM span) of the reference / best
  int ref_sms = 0;
  std::string best_genome;
  double best_so_far_speedup = 0;
  std::string best_so_far_genome;
  // The objective (SearchOptions::objective) and energy: the best is the candidate of the lowest
  // fitness, best_speedup its speed-up; best_gain = the reference's objective value / the best's
  // (= best_speedup for time). Joules per launch (0: not measured).
  std::string objective = "time";
  std::vector<double> lane_ref_j;
  double ref_j = 0, best_j = 0;
  double best_gain = 0, best_so_far_gain = 0;
};

struct SearchState {
  int next_generation = 0;
  std::vector<Individual> population;  // the last evaluated generation
  std::string rng;                     // std::mt19937_64 state as text
  std::set<std::uint64_t> tabu_genotype, tabu_phenotype, tabu_code;
  std::string best_genome;
  double best_speedup = 0, best_ms = 0, best_ref_ms = 0;
  double best_gain = 0, best_j = 0, best_ref_j = 0;  // GenerationStats::best_gain of the best so far
  std::vector<GenerationStats> history;
  DeviceSummary device;
};

// Indices of the parents: correct, time <= ref * (1 + tolerance), best fitness first, at most max_parents.
// (time and fitness are on lane 0's scale, so candidates timed on different GPUs compare fairly.)
std::vector<int> select_parents(const std::vector<Individual>& pop, double ref_ms, double tolerance, int max_parents);

using GenerationCallback = std::function<void(const GenerationStats&, const SearchState&)>;
SearchState run_search(const Grammar& g, Evaluator& ev, const SearchOptions& opt, const GenerationCallback& cb = {});

// Phenotype tier 1 key of a candidate (preprocessed source + non-macro options + config).
std::uint64_t phenotype_hash(const Variant& v, const std::vector<std::string>& options);

// Run directory (rundir.cpp): config.json, checkpoint.json, generations.{csv,jsonl}, best.genome,
// failures.log, report.md, fitness.svg.
void save_checkpoint(const std::string& dir, const SearchState& s);
SearchState load_checkpoint(const std::string& dir, const Grammar& g);
void write_generation_logs(const std::string& dir, const std::vector<GenerationStats>& h);
std::vector<GenerationStats> read_generation_log(const std::string& dir);
// The generation log checked as a run's: generations 0, 1, 2 ... in order and, when the directory
// holds a checkpoint, as many as it has or one fewer (a kill between the checkpoint and the log).
// InputError naming the damaged file. `gi report` reads the log through it.
std::vector<GenerationStats> read_run_log(const std::string& dir);
// What `gi run --resume` continues from, every file checked before any of them is used: config.json
// (read_run_config), checkpoint.json (load_checkpoint) and the generation log against it.
struct RunConfig {
  std::string problem;
  int population = 0, generations = 0, repeats = 0;
  std::uint64_t seed = 1;
  double tolerance = 0.10;
  std::vector<std::string> classes;
  Objective objective = Objective::time;  // absent in runs from before objectives: time
  double energy_window_ms = 200;          // TimingSpec::energy_window_ms of an energy or edp run
};
// config.json of a run of problem `p`: a JSON object naming `p`, population 2..100000, generations
// 1..100000, a seed, tolerance 0..10, repeats 1..1000 (default `repeats`), size classes of `p`, an
// objective (time, energy or edp; default time), energy_window_ms 1..60000 (default 200).
RunConfig read_run_config(const std::string& dir, const Problem& p, int repeats);
SearchState load_run(const std::string& dir, const Grammar& g);
void write_text_atomic(const std::string& path, const std::string& text);
std::string read_text(const std::string& path);  // InputError naming the path when unreadable
// A genome file in docs/FORMATS.md format: "# evokernels genome v1", "# key: value" headers, text.
std::string genome_file(const std::vector<std::pair<std::string, std::string>>& header, const std::string& genome);
// The genome file `text` with compute capability cc (major * 10 + minor) in its `# validated-cc:`
// header (added after `# cc:` when absent; merged when present); unchanged when cc is the file's own
// `cc` or is listed already. Throws InputError (naming `where`) for text without the genome header.
std::string with_validated_cc(const std::string& text, int cc, const std::string& where);

// Report (report.cpp): markdown summary with an SVG fitness-per-generation plot (written beside it).
std::string fitness_svg(const std::vector<GenerationStats>& h);
void write_report(const std::string& dir);

}  // namespace evk::gi
