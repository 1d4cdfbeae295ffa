// What a GI search minimises (`gi run/evolve --objective time|energy|edp`) and when an energy variant
// ships. time: the kernel's median time (ms; the papers' fitness, the default); energy: joules per
// launch from the GPU's energy counter (evk/energy.hpp, TimingSpec::energy); edp: the energy-delay
// product, joules x ms. A candidate's fitness is the objective's value plus the tool's penalty.
#pragma once
#include <string>

namespace evk::gi {

enum class Objective { time, energy, edp };

const char* objective_name(Objective o);  // "time", "energy", "edp"
const char* objective_unit(Objective o);  // "ms", "J", "J*ms"
// "time", "energy" or "edp"; anything else: InputError naming `what`.
Objective parse_objective(const std::string& text, const std::string& what = "--objective");
// energy and edp read the GPU's energy counter.
bool needs_energy(Objective o);
// The value minimised for a correct candidate of `ms` milliseconds and `joules` per launch.
double objective_value(Objective o, double ms, double joules);

// The energy ship rule of `gi evolve --objective energy|edp`: a variant ships only where, over the
// class's hold-out cases (medians of the per-case ratios evolved / pre-tuned original), it saves at
// least kMinEnergySaving of the energy for at most kMaxTimeIncrease more time.
constexpr double kMinEnergySaving = 0.10;
constexpr double kMaxTimeIncrease = 0.05;
struct ShipDecision {
  bool ships = false;
  std::string why;  // one line: what it saves and costs, and (when it does not ship) which limit it misses
};
// energy_ratio, time_ratio: medians of evolved / pre-tuned joules and ms (<= 0: not measured).
ShipDecision energy_ship_rule(double energy_ratio, double time_ratio);

}  // namespace evk::gi
