// After the search: bloat removal (gene knock-out against measured noise), exhaustive tuning of
// launch parameters, and validation on unseen hold-out cases.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "evk/gi/budget.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/objective.hpp"

namespace evk::gi {

using StepCallback = std::function<void(int done, int total)>;

// The unmodified original kernel (no loop guards), default config.
Variant original_variant(const Grammar& g);

// Compiles and runs one variant on the evaluator's current case.
RunResult measure(Evaluator& ev, const Variant& v, const TimingSpec& t, double timeout_s = 60);

// A training-side case of a size class ("": the problem's first class).
struct CaseRef {
  std::string size_class;
  std::uint64_t seed = 0;
};
// The probe cases of minimize/tune: for each class, `per_class[i]` consecutive seeds from `seed`.
std::vector<CaseRef> probe_cases(const std::vector<std::string>& classes, const std::vector<int>& per_class,
                                 std::uint64_t seed);

struct MinimizeOptions {
  std::uint64_t case_seed = 7777;  // training-side case used for every measurement (when `cases` is empty)
  // Measure on these cases instead (e.g. one per size class): a gene goes only when the kernel without
  // it is within the noise limit on every one of them. Empty: {("", case_seed)}.
  std::vector<CaseRef> cases;
  TimingSpec timing{3, 21, true};
  int noise_samples = 5;           // repeated measurements of the input genome: the noise
  double sigmas = 3;
  double min_noise_fraction = 0.005;  // noise floor: 0.5% of the time
  // The input genome's constraints (Problem::constraints): a case outside them is replaced by the next
  // seed of its class within them (up to 32 tries), as the dispatch would never run the variant there.
  std::vector<std::string> constraints;
  // What a gene must help: time (ms), energy (joules per launch) or edp; energy and edp measure
  // joules (timing.energy), and a knock-out without them keeps the gene. The *_ms fields below then
  // hold the objective's value.
  Objective objective = Objective::time;
  // A share of gi evolve's budget, seconds on `clock` (0: none): no knock-out starts that, at the
  // mean length of those so far (first: of the noise measurements), would end after it together
  // with the output's final measurement; the genes not tried stay (the log says so).
  double budget_s = 0;
  SecondsClock clock;
};
struct MinimizeResult {
  Genome input, output;
  double base_ms = 0, noise_ms = 0, output_ms = 0;  // on the first case
  std::vector<double> case_base_ms, case_noise_ms, case_output_ms;  // per case
  std::vector<std::string> log;  // one line per gene: kept/removed and why
  int genes = 0, tried = 0;      // genes of the input, knocked out and measured
  bool budget_stopped = false;   // budget_s ended it before every gene was tried (the last log line says so)
};
MinimizeResult minimize(const Grammar& g, Evaluator& ev, const Genome& x, const MinimizeOptions& o = {},
                        const StepCallback& cb = {});
// The genes minimize() knocks out one at a time: x's non-default configuration and option values, and its edits.
int minimize_genes(const Grammar& g, const Genome& x);

struct TuneOptions {
  std::uint64_t case_seed = 7778;
  // Measure on these cases instead (empty: {("", case_seed)}); a configuration must be correct on all
  // of them and is scored by the geometric mean of its time over the input genome's time per case.
  std::vector<CaseRef> cases;
  TimingSpec timing{2, 11, true};
  int max_combinations = 512;  // beyond: one parameter at a time
  bool options = true;         // then every combination of the NVRTC option genes (nvrtc_option_params)
  // What the score is of: time, energy or edp (objective.hpp); energy and edp measure joules
  // (timing.energy), and a configuration without them fails. The *ms fields then hold its value.
  Objective objective = Objective::time;
  // A share of gi evolve's budget, seconds on `clock` (0: none): configurations are measured in
  // sets of at most as many as fit in what is left at the mean time per configuration so far (the
  // input's measurement first); when none fits the tune stops with the best so far.
  double budget_s = 0;
  SecondsClock clock;
};
struct TuneEntry {
  Config config;
  std::string status;
  double ms = 0;     // on the first case
  double score = 0;  // geometric mean of ms / the input's ms over the cases (0: failed somewhere)
};
struct TuneResult {
  Genome input, output;
  double input_ms = 0, output_ms = 0;  // on the first case
  double output_score = 1;             // the output's score (1 = the input)
  std::vector<std::string> tuned;  // parameter names
  std::vector<TuneEntry> table;    // every configuration tried
  int planned = 0;                 // configurations a tune without a budget tries (tune_planned)
  bool budget_stopped = false;     // budget_s ended it after table.size() of them
  std::string note;                // budget_stopped: "the budget stopped tuning after N of M configurations ..."
};
// Tunes the number/choice parameters (launch geometry and friends) of x exhaustively.
TuneResult tune(const Grammar& g, Evaluator& ev, const Genome& x, const TuneOptions& o = {}, const StepCallback& cb = {});
// The configurations tune() measures besides the input without a budget: the grid (or twice each
// parameter's values above max_combinations), then every other combination of the option genes.
int tune_planned(const Grammar& g, const TuneOptions& o = {});

// gi validate's untimed checked launches per kernel and case after the timed ones (TimingSpec::race_checks).
constexpr int kValidateRaceChecks = 24;

struct ValidateOptions {
  int cases = 5;
  std::uint64_t first_seed = 0;
  TimingSpec timing{3, 21, true};  // timing.energy: joules per launch of every kernel too
  std::string size_class;              // hold-out cases of this class ("": the problem's first class)
  std::vector<std::string> constraints;  // the evolved variant's constraints: cases outside them are skipped
};
struct ValidateCase {
  std::uint64_t seed = 0;
  std::string describe;
  double original_ms = 0, pretuned_ms = 0, evolved_ms = 0;
  double original_j = 0, pretuned_j = 0, evolved_j = 0;  // joules per launch (timing.energy; 0: not measured)
  std::string energy_note;                               // why a kernel's joules are missing
  double evolved_max_error = 0, evolved_penalty = 0;
  std::string evolved_status, summary;
  std::string skipped;  // non-empty: not run, outside the variant's constraints (the violated one)
};
struct ValidateResult {
  std::string size_class;
  std::vector<ValidateCase> cases;
  int run = 0, skipped = 0;  // cases run / skipped for the variant's constraints
  double max_error = 0, max_penalty = 0;
  double speedup_median = 0, speedup_min = 0, speedup_max = 0;                 // vs the original
  double speedup_pretuned_median = 0, speedup_pretuned_min = 0, speedup_pretuned_max = 0;  // vs pre-tuned original
  bool has_pretuned = false;
  bool blessed = false;      // every case run was correct (and at least one ran)
  bool applicable = true;    // false: every case was outside the variant's constraints
  bool beats_pretuned = false;  // blessed, compared with a pre-tuned original, median speed-up > 1
  std::string reason;  // why not blessed
  // Per-case evolved / pre-tuned time (the energy ship rule's time), median.
  double time_ratio_pretuned_median = 0;
  // Energy (timing.energy): `energy` when joules were measured for every kernel on every case run;
  // ratios evolved / original and evolved / pre-tuned (below 1: the evolved kernel uses less).
  bool energy = false;
  std::string energy_note;  // why not (no counter, a burst that failed)
  double energy_ratio_median = 0, energy_ratio_min = 0, energy_ratio_max = 0;
  double energy_ratio_pretuned_median = 0, energy_ratio_pretuned_min = 0, energy_ratio_pretuned_max = 0;
};
ValidateResult validate(const Grammar& g, Evaluator& ev, const Genome& evolved, const Genome* pretuned,
                        const ValidateOptions& o = {}, const StepCallback& cb = {});
// The genome file's `validated` line (docs/FORMATS.md): "CLASS cases=N speedup=M (LO..HI)
// pretuned=M (LO..HI) max_error=E".
std::string validated_line(const ValidateResult& r);
// The genome file's `energy` line of an energy variant: "CLASS cases=N energy=M (LO..HI)
// pretuned=M (LO..HI) time_vs_pretuned=T" (ratios evolved / original, evolved / pre-tuned).
std::string energy_line(const ValidateResult& r);

}  // namespace evk::gi
