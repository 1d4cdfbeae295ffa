// The search objectives and the energy ship rule (evk/gi/objective.hpp).
#include "evk/gi/objective.hpp"

#include <cstdio>

#include "evk/error.hpp"

namespace evk::gi {

const char* objective_name(Objective o) {
  switch (o) {
    case Objective::time: return "time";
    case Objective::energy: return "energy";
    case Objective::edp: return "edp";
  }
  return "?";
}

const char* objective_unit(Objective o) {
  switch (o) {
    case Objective::time: return "ms";
    case Objective::energy: return "J";
    case Objective::edp: return "J*ms";
  }
  return "?";
}

Objective parse_objective(const std::string& text, const std::string& what) {
  if (text == "time") return Objective::time;
  if (text == "energy") return Objective::energy;
  if (text == "edp") return Objective::edp;
  input_error(what, "must be time, energy or edp (got '" + text + "')");
}

bool needs_energy(Objective o) { return o != Objective::time; }

double objective_value(Objective o, double ms, double joules) {
  switch (o) {
    case Objective::time: return ms;
    case Objective::energy: return joules;
    case Objective::edp: return joules * ms;
  }
  return ms;
}

ShipDecision energy_ship_rule(double energy_ratio, double time_ratio) {
  ShipDecision d;
  if (!(energy_ratio > 0) || !(time_ratio > 0)) {
    d.why = "energy not measured on the hold-out cases";
    return d;
  }
  // ratios of measured values: 1e-9 keeps a saving of exactly 10% (or a slow-down of exactly 5%)
  // from failing on the last bit of a division
  constexpr double eps = 1e-9;
  const double saving = 1 - energy_ratio, slower = time_ratio - 1;
  char b[200];
  std::snprintf(b, sizeof b, "%+.1f%% energy, %+.1f%% time vs the pre-tuned original", -100 * saving, 100 * slower);
  d.why = b;
  const bool saves = saving >= kMinEnergySaving - eps, fast_enough = slower <= kMaxTimeIncrease + eps;
  d.ships = saves && fast_enough;
  if (!saves) d.why += " (an energy variant must save at least 10% energy)";
  else if (!fast_enough) d.why += " (an energy variant may take at most 5% more time)";
  return d;
}

}  // namespace evk::gi
