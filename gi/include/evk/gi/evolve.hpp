// `<tool> gi evolve`: re-tuning a GPU in one command. Search (sized to a time budget), minimize,
// tune per size class (the evolved genome and, as the baseline, the original), validate on hold-out
// cases of every class, and the genome file(s) to install: one per distinct tuned genome that beat
// its class's pre-tuned original with zero penalty, with the provenance and applicability header of
// docs/FORMATS.md. Every stage keeps to the budget (docs/GI.md "gi evolve"): validation's time is
// reserved first, from the measured cost of evaluations. The evaluators (and the clock) come from
// the caller so that CPU tests can run the whole pipeline against fakes.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "evk/gi/budget.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gi/post.hpp"
#include "evk/gi/search.hpp"

namespace evk::gi {

struct EvolveOptions {
  // The whole pipeline's seconds (0: none). The search gets search_share of it at most, and stops
  // earlier where its next generation would eat into the time reserved for validation; after it,
  // minimize and each tune get a share of what is left after that reserve, in proportion to their
  // estimated work; validation always runs (docs/GI.md "gi evolve").
  double budget_s = 3600;
  double search_share = 0.5;
  // Validation's reserve = its estimated time x this (the estimate: hold-out cases x (a new case +
  // 3 kernels' runs at validation's timing) per class at the costs measured so far, + a compile).
  double reserve_margin = 1.25;
  SecondsClock clock;                  // the budget's clock (empty: steady_clock); tests pass a fake one
  std::vector<std::string> classes;    // target size classes (empty: all of the problem's)
  int population = 0, generations = 0; // 0: the problem's paper value, population sized to the budget
  double candidates_per_s = 15;        // per lane, for sizing (H200 measurements: 14-20 candidates/s)
  std::uint64_t seed = 1;
  int cases = 10;                      // hold-out cases per class
  double min_gain = 0.01;              // a class counts as won above this median speed-up over the
                                       // pre-tuned original (1%: below it a win is timing noise)
  std::string work_dir;                // the search's run directory and intermediate genomes ("": none)
  SearchOptions search;                // tolerance, timing, ...: run_dir, classes, budget set here
  MinimizeOptions minimize;            // timing, noise: cases set here
  TuneOptions tune;                    // timing, limits: cases set here
  ValidateOptions validate;            // timing: cases, class, constraints set here
  // What the search, minimize and tune minimise (objective.hpp). energy and edp also measure joules
  // in validation and win a class by the energy ship rule (energy_ship_rule) instead of min_gain.
  Objective objective = Objective::time;
  bool measure_energy = false;         // joules in validation for time too (the GPU has a counter)
};

struct EvolveClass {
  std::string size_class;
  Genome pretuned, evolved;    // the original tuned on this class; the minimized genome tuned on it
  ValidateResult validation;   // evolved vs the original and `pretuned`, on this class's hold-out cases
  bool wins = false;           // blessed, and median speed-up over the pre-tuned original > 1 + min_gain
                               // (energy, edp: the energy ship rule holds)
  std::string why;             // energy, edp: what it saves and costs, and why it does not ship
};

struct EvolveVariant {
  Genome genome;
  std::string text;                     // format_genome
  std::vector<std::string> classes;     // where it won (the file's `classes`)
  std::vector<std::string> validated;   // `validated` lines: every class it was validated on
  std::vector<std::string> constraints; // Problem::constraints of its config (the file's `requires`)
  std::vector<std::string> energy;      // `energy` lines (energy_line): every class with joules measured
};

// One stage of the pipeline as run, on the budget's clock.
struct EvolveStage {
  std::string name;            // "search", "minimize", "tune original (CLASS)", "tune evolved (CLASS)", "validate (CLASS)"
  double budget_s = 0;         // its share of the budget when it started (validate: the time reserved for it; 0: no budget)
  double used_s = 0;
  int done = 0, total = 0;     // generations, genes, configurations or hold-out cases: done of planned
  bool budget_stopped = false; // the budget ended it before all its work (done < total; skipped: done == 0)
  std::string note;            // what the budget did to it, e.g. "the budget stopped tuning after 12 of 85 configurations ..."
};

struct EvolveResult {
  int population = 0, generations = 0;  // as run (generations: completed within the budget)
  double search_wall_s = 0;
  SearchState search;
  Genome best, minimized;
  std::vector<EvolveClass> classes;
  std::vector<EvolveVariant> variants;  // to install; empty: refused
  std::string refusal;                  // why nothing is installed
  double elapsed_s = 0;
  Objective objective = Objective::time;
  std::vector<EvolveStage> stages;      // in the order they ran
  double validation_reserve_s = 0;      // every class's, estimated when the search ended (0: no budget)
};

struct EvolveProgress {
  std::string stage;       // "search", "minimize", "tune original (paper)", ...
  int done = 0, total = 0; // within the stage
  double best_speedup = 0; // best so far: training speed-up during the search, then validated vs pre-tuned
  double elapsed_s = 0, budget_s = 0;
};

// make_evaluator(search, keep_cases): the search's evaluator (all requested devices) when `search`,
// else one device keeping `keep_cases` cases resident. Called once for the search, once after it.
using EvaluatorFactory = std::function<std::unique_ptr<Evaluator>(bool search, int keep_cases)>;

EvolveResult evolve(const Problem& p, const Grammar& g, const EvaluatorFactory& make_evaluator, const EvolveOptions& o,
                    const std::function<void(const EvolveProgress&)>& progress = {});

// The population and generations evolve() runs for a budget (explicit values win).
std::pair<int, int> evolve_size(const Problem& p, const EvolveOptions& o, int lanes);

// The genome file of a variant (docs/FORMATS.md): kernel, id, device, cc, driver, cuda, nvrtc, date,
// seed, population, generations, search_wall_s, classes, requires, validated, source; for energy and
// edp also objective and one energy line per class (docs/GI.md).
std::string variant_file(const Problem& p, const DeviceSummary& d, const EvolveResult& r, const EvolveVariant& v,
                         const std::string& id, std::uint64_t seed);

// Whether class `ec` is won (EvolveClass::wins; sets ec.why for energy and edp): blessed, compared
// with a pre-tuned original it differs from, and then for time a median speed-up over it above
// 1 + min_gain, for energy and edp the energy ship rule on the medians of the hold-out cases.
bool class_wins(EvolveClass& ec, Objective o, double min_gain);

// Header lines of a genome file ("# key: value"), in order, repeated keys kept.
std::vector<std::pair<std::string, std::string>> genome_header(const std::string& text);

// UTC time as 2026-11-22T03:07:44.
std::string utc_now();

}  // namespace evk::gi
