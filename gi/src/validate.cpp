// `gi validate`: the original, the pre-tuned original and the evolved genome on unseen hold-out cases
// of one size class; speed-ups, and (TimingSpec::energy) joules per launch and energy ratios.
#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "evk/gi/post.hpp"
#include "post_util.hpp"

namespace evk::gi {

using post_detail::fmt;
using post_detail::good;
using post_detail::Spread;
using post_detail::spread;

namespace {
// The kernels compared on every case, compiled.
struct Kernels {
  Variant orig, evo, pre;
  std::vector<Compiled> comp;  // original, evolved[, pre-tuned]
  bool has_pretuned = false;
};

// Per-case ratios gathered over the cases run.
struct Ratios {
  std::vector<double> speedup, speedup_pre, time_pre;  // original / evolved, pre-tuned / evolved, evolved / pre-tuned
  std::vector<double> energy, energy_pre;              // evolved / original joules, evolved / pre-tuned joules
  int energy_cases = 0;                                // cases with the joules of every kernel
};

// Runs the kernels on the current case (a hold-out case within the constraints) into c; the
// evolved kernel's failure becomes res.reason, the ratios go into q.
void validate_case(Evaluator& ev, const Kernels& k, const TimingSpec& timing, ValidateCase& c, ValidateResult& res,
                   Ratios& q) {
  const double limit = 120 + timing.energy_limit_s();
  RunResult ro = ev.run(k.comp[0], k.orig.config, timing, limit);
  if (!good(ro)) throw std::runtime_error("validate: the original kernel fails on hold-out case " + c.describe);
  c.original_ms = ro.median_ms;
  RunResult rp;
  if (k.has_pretuned) {
    rp = ev.run(k.comp[2], k.pre.config, timing, limit);
    c.pretuned_ms = good(rp) ? rp.median_ms : 0;
  }
  RunResult re = ev.run(k.comp[1], k.evo.config, timing, limit);
  c.evolved_status = status_name(re.status);
  c.evolved_ms = re.median_ms;
  c.evolved_max_error = re.check.max_error;
  c.evolved_penalty = re.check.penalty;
  c.summary = re.ok() ? re.check.summary : re.message;
  res.max_error = std::max(res.max_error, c.evolved_max_error);
  res.max_penalty = std::max(res.max_penalty, c.evolved_penalty);
  if (!re.ok() && res.reason.empty()) res.reason = "evolved kernel " + c.evolved_status + " on hold-out case " + c.describe;
  if (re.ok() && re.check.penalty > 0 && res.reason.empty())
    res.reason = "evolved kernel has penalty " + fmt(re.check.penalty) + " on hold-out case " + c.describe + " (" + c.summary + ")";
  if (re.ok() && re.median_ms > 0) {
    q.speedup.push_back(c.original_ms / re.median_ms);
    if (c.pretuned_ms > 0) {
      q.speedup_pre.push_back(c.pretuned_ms / re.median_ms);
      q.time_pre.push_back(re.median_ms / c.pretuned_ms);
    }
  }
  if (!timing.energy) return;
  c.original_j = ro.joules;
  c.pretuned_j = good(rp) ? rp.joules : 0;
  c.evolved_j = re.joules;
  // joules: of every kernel compared, or a note naming the first that has none
  for (const auto* r : {&ro, &rp, &re}) {
    if (r == &rp && !k.has_pretuned) continue;
    if (!(r->joules > 0) && c.energy_note.empty())
      c.energy_note = std::string(r == &ro ? "original" : r == &rp ? "pre-tuned original" : "evolved") + ": " +
                      (r->energy_note.empty() ? "no joules" : r->energy_note);
  }
  if (!c.energy_note.empty() || !good(re)) {
    if (res.energy_note.empty()) res.energy_note = c.energy_note.empty() ? "evolved kernel failed" : c.energy_note;
    return;
  }
  ++q.energy_cases;
  q.energy.push_back(c.evolved_j / c.original_j);
  if (k.has_pretuned) q.energy_pre.push_back(c.evolved_j / c.pretuned_j);
}
}  // namespace

ValidateResult validate(const Grammar& g, Evaluator& ev, const Genome& evolved, const Genome* pretuned,
                        const ValidateOptions& o, const StepCallback& cb) {
  ValidateResult res;
  res.size_class = o.size_class;
  res.has_pretuned = pretuned != nullptr;
  Kernels k;
  k.orig = original_variant(g);
  k.evo = apply(g, evolved);
  k.pre = pretuned ? apply(g, *pretuned) : Variant{};
  k.has_pretuned = pretuned != nullptr;
  std::vector<Variant> vs{k.orig, k.evo};
  if (pretuned) vs.push_back(k.pre);
  k.comp = ev.compile(vs);
  if (!k.comp[0].ok) throw std::runtime_error("validate: the original kernel does not compile: " + k.comp[0].log);
  if (!k.comp[1].ok) {
    res.reason = "the evolved kernel does not compile";
    return res;
  }
  if (pretuned && !k.comp[2].ok) throw std::runtime_error("validate: the pre-tuned genome does not compile: " + k.comp[2].log);
  Ratios q;
  TimingSpec timing = o.timing;
  timing.race_checks = kValidateRaceChecks;  // 26 checked launches per kernel and case, not 2: rare races show
  for (int i = 0; i < o.cases; ++i) {
    ValidateCase c;
    c.seed = o.first_seed + static_cast<std::uint64_t>(i);
    const CaseInfo info = ev.set_case(c.seed, true, o.size_class);
    c.describe = info.describe;
    if (res.size_class.empty()) res.size_class = info.size_class;
    c.skipped = violated_constraint(o.constraints, info.properties);
    if (!c.skipped.empty()) {  // the dispatch never runs the variant on such a request
      ++res.skipped;
    } else {
      ++res.run;
      validate_case(ev, k, timing, c, res, q);
    }
    res.cases.push_back(c);
    if (cb) cb(i + 1, o.cases);
  }
  const Spread s = spread(q.speedup), sq = spread(q.speedup_pre);
  res.speedup_median = s.median;
  res.speedup_min = s.min;
  res.speedup_max = s.max;
  res.speedup_pretuned_median = sq.median;
  res.speedup_pretuned_min = sq.min;
  res.speedup_pretuned_max = sq.max;
  res.time_ratio_pretuned_median = spread(q.time_pre).median;
  res.energy = timing.energy && res.run > 0 && q.energy_cases == res.run;
  if (timing.energy && res.run == 0 && res.energy_note.empty()) res.energy_note = "no hold-out case run";
  if (res.energy) {
    const Spread e = spread(q.energy), ep = spread(q.energy_pre);
    res.energy_ratio_median = e.median;
    res.energy_ratio_min = e.min;
    res.energy_ratio_max = e.max;
    res.energy_ratio_pretuned_median = ep.median;
    res.energy_ratio_pretuned_min = ep.min;
    res.energy_ratio_pretuned_max = ep.max;
  }
  res.applicable = res.run > 0 || res.cases.empty();
  if (res.run == 0 && !res.cases.empty() && res.reason.empty())
    res.reason = "every hold-out case of class " + res.size_class + " is outside the variant's constraints";
  res.blessed = res.reason.empty() && res.run > 0;
  res.beats_pretuned = res.blessed && res.has_pretuned && !q.speedup_pre.empty() && res.speedup_pretuned_median > 1.0;
  return res;
}

std::string validated_line(const ValidateResult& r) {
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s cases=%d speedup=%.3f (%.3f..%.3f) pretuned=%.3f (%.3f..%.3f) max_error=%.3g",
                r.size_class.empty() ? "default" : r.size_class.c_str(), r.run, r.speedup_median, r.speedup_min,
                r.speedup_max, r.speedup_pretuned_median, r.speedup_pretuned_min, r.speedup_pretuned_max, r.max_error);
  return buf;
}

std::string energy_line(const ValidateResult& r) {
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s cases=%d energy=%.3f (%.3f..%.3f) pretuned=%.3f (%.3f..%.3f) time_vs_pretuned=%.3f",
                r.size_class.empty() ? "default" : r.size_class.c_str(), r.run, r.energy_ratio_median,
                r.energy_ratio_min, r.energy_ratio_max, r.energy_ratio_pretuned_median, r.energy_ratio_pretuned_min,
                r.energy_ratio_pretuned_max, r.time_ratio_pretuned_median);
  return buf;
}

}  // namespace evk::gi
