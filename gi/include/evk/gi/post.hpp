// After the search: bloat removal (gene knock-out against measured noise), exhaustive tuning of
// launch parameters, and validation on unseen hold-out cases.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "evk/gi/evaluate.hpp"
#include "evk/gi/genome.hpp"

namespace evk::gi {

using StepCallback = std::function<void(int done, int total)>;

// The unmodified original kernel (no loop guards), default config.
Variant original_variant(const Grammar& g);

// Compiles and runs one variant on the evaluator's current case.
RunResult measure(Evaluator& ev, const Variant& v, const TimingSpec& t, double timeout_s = 60);

struct MinimizeOptions {
  std::uint64_t case_seed = 7777;  // training-side case used for every measurement
  TimingSpec timing{3, 21, true};
  int noise_samples = 5;           // repeated measurements of the input genome: the noise
  double sigmas = 3;
  double min_noise_fraction = 0.005;  // noise floor: 0.5% of the time
};
struct MinimizeResult {
  Genome input, output;
  double base_ms = 0, noise_ms = 0, output_ms = 0;
  std::vector<std::string> log;  // one line per gene: kept/removed and why
};
MinimizeResult minimize(const Grammar& g, Evaluator& ev, const Genome& x, const MinimizeOptions& o = {},
                        const StepCallback& cb = {});

struct TuneOptions {
  std::uint64_t case_seed = 7778;
  TimingSpec timing{2, 11, true};
  int max_combinations = 512;  // beyond: one parameter at a time
  bool options = true;         // then every combination of the NVRTC option genes (nvrtc_option_params)
};
struct TuneEntry {
  Config config;
  std::string status;
  double ms = 0;
};
struct TuneResult {
  Genome input, output;
  double input_ms = 0, output_ms = 0;
  std::vector<std::string> tuned;  // parameter names
  std::vector<TuneEntry> table;
};
// Tunes the number/choice parameters (launch geometry and friends) of x exhaustively.
TuneResult tune(const Grammar& g, Evaluator& ev, const Genome& x, const TuneOptions& o = {}, const StepCallback& cb = {});

struct ValidateOptions {
  int cases = 5;
  std::uint64_t first_seed = 0;
  TimingSpec timing{3, 21, true};
};
struct ValidateCase {
  std::uint64_t seed = 0;
  std::string describe;
  double original_ms = 0, pretuned_ms = 0, evolved_ms = 0;
  double evolved_max_error = 0, evolved_penalty = 0;
  std::string evolved_status, summary;
};
struct ValidateResult {
  std::vector<ValidateCase> cases;
  double max_error = 0;
  double speedup_median = 0, speedup_min = 0, speedup_max = 0;                 // vs the original
  double speedup_pretuned_median = 0, speedup_pretuned_min = 0, speedup_pretuned_max = 0;  // vs pre-tuned original
  bool has_pretuned = false;
  bool blessed = false;
  std::string reason;  // why not blessed
};
ValidateResult validate(const Grammar& g, Evaluator& ev, const Genome& evolved, const Genome* pretuned,
                        const ValidateOptions& o = {}, const StepCallback& cb = {});

}  // namespace evk::gi
