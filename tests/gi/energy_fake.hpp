// A fake GPU with an energy counter for the engine's CPU tests (objectives, energy validation and the
// ship rule): FakeEvaluator's times, and joules = ms x watts, where the power is 100 W, 200 W with
// BLOCK_W=256 (faster and hungrier), and may fall with each deleted line (power_per_deletion); the
// time may instead rise with each deleted line (time_per_deletion). Joules are returned whether
// asked or not, as by a GPU that always has a counter; asked/not_asked count TimingSpec::energy.
#pragma once
#include <string>

#include "fake_evaluator.hpp"

namespace evk::gi::testing {

inline double fake_watts(const Config& cfg) { return cfg.at("BLOCK_W") == "256" ? 200.0 : 100.0; }

class EnergyFake : public FakeEvaluator {
 public:
  using FakeEvaluator::FakeEvaluator;
  RunResult run(const Compiled& c, const Config& cfg, const TimingSpec& t, double s) override {
    RunResult r = FakeEvaluator::run(c, cfg, t, s);
    (t.energy ? asked : not_asked)++;
    const std::string code(c.cubin.begin(), c.cubin.end());
    int deleted = 0;
    for (std::size_t p = code.find("\n;\n"); p != std::string::npos; p = code.find("\n;\n", p + 1)) ++deleted;
    if (time_per_deletion != 0 && r.check.penalty == 0)
      r.median_ms = (cfg.at("BLOCK_W") == "256" ? 0.95 : 1.0) * (1 + time_per_deletion * deleted) *
                    (class_ == "small" ? 0.25 : 1.0);
    r.min_ms = r.median_ms;
    const bool original = cfg == p_.default_config() && deleted == 0;
    if ((!no_energy_block.empty() && cfg.at("BLOCK_W") == no_energy_block) || (no_energy_ref && original)) {
      r.energy_note = "the energy counter changed 0 time(s) in 4.0 s of launches";
      return r;
    }
    r.watts = fake_watts(cfg) * std::max(0.3, 1 - power_per_deletion * deleted);
    r.joules = r.median_ms * 1e-3 * r.watts;
    return r;
  }
  int asked = 0, not_asked = 0;
  double power_per_deletion = 0;  // power falls by this fraction per deleted line
  double time_per_deletion = 0;   // not 0: time rises by this fraction per deleted line (instead of falling 1%)
  std::string no_energy_block;    // candidates with this BLOCK_W get no joules (a failed burst)
  bool no_energy_ref = false;     // neither does the original
};

}  // namespace evk::gi::testing
