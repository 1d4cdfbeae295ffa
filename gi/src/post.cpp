#include "evk/gi/post.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "post_util.hpp"

namespace evk::gi {

Variant original_variant(const Grammar& g) {
  Variant v;
  for (const auto& l : g.lines) v.source += l.text + "\n";
  v.config = empty_genome(g).config;
  return v;
}

RunResult measure(Evaluator& ev, const Variant& v, const TimingSpec& t, double timeout_s) {
  auto c = ev.compile({v});
  if (!c[0].ok) {
    RunResult r;
    r.status = RunResult::Status::worker_error;
    r.message = "does not compile: " + c[0].log.substr(0, 500);
    return r;
  }
  return ev.run(c[0], v.config, t, timeout_s);
}

std::vector<CaseRef> probe_cases(const std::vector<std::string>& classes, const std::vector<int>& per_class,
                                 std::uint64_t seed) {
  std::vector<CaseRef> out;
  for (std::size_t c = 0; c < classes.size(); ++c) {
    const int n = c < per_class.size() ? std::max(1, per_class[c]) : 1;
    for (int k = 0; k < n; ++k) out.push_back({classes[c], seed + static_cast<std::uint64_t>(k)});
  }
  return out;
}

using post_detail::fmt;
using post_detail::good;
using post_detail::spread;

namespace {
std::string case_name(const CaseRef& c) {
  return (c.size_class.empty() ? std::string() : c.size_class + ":") + std::to_string(c.seed);
}
// Noise of repeated measurements: the sample standard deviation.
double stdev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  return std::sqrt(var / static_cast<double>(v.size() - 1));
}
// Moves each case to the first seed of its class (from its own, up to 32 tries) within the genome's
// constraints, as the dispatch would never run the variant elsewhere; a line in `log` per moved case.
void cases_within(Evaluator& ev, const std::vector<std::string>& constraints, std::vector<CaseRef>& cases,
                  std::vector<std::string>& log) {
  for (auto& c : cases) {
    std::string why;
    int tries = 0;
    for (; tries < 32; ++tries, ++c.seed) {
      why = violated_constraint(constraints, ev.set_case(c.seed, false, c.size_class).properties);
      if (why.empty()) break;
    }
    if (!why.empty())
      throw std::runtime_error("minimize: no case of class " + (c.size_class.empty() ? "(default)" : c.size_class) +
                               " within the genome's constraints (" + why + ")");
    if (tries > 0)
      log.push_back("case " + case_name(c) + " used: the " + std::to_string(tries) +
                    " before it in its class are outside the genome's constraints");
  }
}
// The non-default configuration and option values of x: its configuration genes.
std::vector<std::string> config_genes(const Grammar& g, const Genome& x) {
  std::vector<std::string> genes;
  for (const auto& p : g.params)
    if (auto it = x.config.find(p.name); it != x.config.end() && it->second != p.default_value) genes.push_back(p.name);
  for (const auto& p : g.option_params)
    if (auto it = x.options.find(p.name); it != x.options.end() && it->second != p.default_value) genes.push_back(p.name);
  return genes;
}

// The input genome's value and noise on every case (o.noise_samples runs of run(case) each) into
// res, and per case the limit a knock-out must keep within: the median + o.sigmas x the noise.
std::vector<double> noise_limits(const MinimizeOptions& o, const std::vector<CaseRef>& cases,
                                 const std::function<RunResult(std::size_t)>& run, MinimizeResult& res) {
  const std::size_t nc = cases.size();
  std::vector<double> limit(nc);
  res.case_base_ms.resize(nc);
  res.case_noise_ms.resize(nc);
  for (std::size_t k = 0; k < nc; ++k) {
    std::vector<double> samples;
    for (int i = 0; i < o.noise_samples; ++i) {
      RunResult r = run(k);
      if (!good(r) || (needs_energy(o.objective) && !(r.joules > 0)))
        throw std::runtime_error("minimize: the input genome fails on case " + case_name(cases[k]) + ": " +
                                 (!r.ok() ? r.message : good(r) ? "no energy measured: " + r.energy_note : r.check.summary));
      samples.push_back(objective_value(o.objective, r.median_ms, r.joules));
    }
    res.case_noise_ms[k] = stdev(samples);
    res.case_base_ms[k] = spread(samples).median;
    const double noise = std::max(res.case_noise_ms[k], o.min_noise_fraction * res.case_base_ms[k]);
    limit[k] = res.case_base_ms[k] + o.sigmas * noise;
  }
  res.base_ms = res.case_base_ms[0];
  res.noise_ms = res.case_noise_ms[0];
  return limit;
}
}  // namespace

int minimize_genes(const Grammar& g, const Genome& x) {
  return static_cast<int>(config_genes(g, x).size() + x.edits.size());
}

MinimizeResult minimize(const Grammar& g, Evaluator& ev, const Genome& x, const MinimizeOptions& o, const StepCallback& cb) {
  MinimizeResult res;
  res.input = x;
  std::vector<CaseRef> cases = o.cases.empty() ? std::vector<CaseRef>{{"", o.case_seed}} : o.cases;
  if (!o.constraints.empty()) cases_within(ev, o.constraints, cases, res.log);
  const std::size_t nc = cases.size();
  TimingSpec timing = o.timing;
  timing.energy = timing.energy || needs_energy(o.objective);
  const char* unit = objective_unit(o.objective);
  // correct (and with joules where the objective needs them), and the objective's value
  const auto fine = [&](const RunResult& r) { return good(r) && (!needs_energy(o.objective) || r.joules > 0); };
  const auto value = [&](const RunResult& r) { return objective_value(o.objective, r.median_ms, r.joules); };
  auto compile_one = [&](const Genome& y) {
    Variant v = apply(g, y);
    auto c = ev.compile({v});
    return std::make_pair(v, std::move(c[0]));
  };
  std::size_t current = nc;  // the evaluator's case: set only when it changes
  auto run_on_case = [&](std::size_t k, const Variant& v, const Compiled& c) {
    if (k != current) ev.set_case(cases[k].seed, false, cases[k].size_class);
    current = k;
    if (!c.ok) {
      RunResult r;
      r.status = RunResult::Status::worker_error;
      r.message = "does not compile: " + c.log.substr(0, 500);
      return r;
    }
    return ev.run(c, v.config, timing, 60 + timing.energy_limit_s());
  };
  // the input genome's time and noise on every case
  const StageBudget budget(o.budget_s, o.clock);
  std::vector<double> limit;
  {
    auto [v, c] = compile_one(x);
    limit = noise_limits(o, cases, [&](std::size_t k) { return run_on_case(k, v, c); }, res);
  }
  // a knock-out measures every case once, as one noise sample did
  const double first_step_s = budget.elapsed_s() / std::max(1, o.noise_samples);
  double knock_s = 0;
  // One knock-out: removed when correct and within the limit on every case.
  auto try_without = [&](const Genome& cand, const std::string& gene) {
    auto [v, c] = compile_one(cand);
    std::string times;
    for (std::size_t k = 0; k < nc; ++k) {
      RunResult r = run_on_case(k, v, c);
      if (!fine(r)) {
        res.log.push_back("kept " + gene + (good(r) ? ": no energy measured without it" : ": fails without it") +
                          (nc > 1 ? " on case " + case_name(cases[k]) : ""));
        return false;
      }
      if (value(r) > limit[k]) {
        res.log.push_back("kept " + gene + ": " + fmt(value(r)) + " " + unit + " without it (limit " + fmt(limit[k]) + ")" +
                          (nc > 1 ? " on case " + case_name(cases[k]) : ""));
        return false;
      }
      times += (times.empty() ? "" : ", ") + fmt(value(r));
    }
    res.log.push_back("removed " + gene + ": " + times + " " + unit + " without it (limit " + fmt(limit[0]) +
                      (nc > 1 ? " on the first of " + std::to_string(nc) + " cases" : "") + ")");
    return true;
  };
  // genes: non-default config values, then the edits, left to right
  Genome cur = x;
  Genome dflt = empty_genome(g);
  const std::vector<std::string> cfg_genes = config_genes(g, x);
  auto slot = [](Genome& y, const std::string& name) -> std::string& {
    return y.config.count(name) ? y.config[name] : y.options[name];
  };
  const int total = minimize_genes(g, x);
  int done = 0;
  res.genes = total;
  // a knock-out, unless it and the output's final measurement would end after the budget
  auto knock = [&](const Genome& cand, const std::string& gene) {
    if (!res.budget_stopped && budget.overruns(res.tried > 0 ? knock_s / res.tried : first_step_s, 2))
      res.budget_stopped = true;
    if (res.budget_stopped) {
      res.log.push_back("kept " + gene + ": not tried (the budget ran out)");
      return false;
    }
    const double t = budget.elapsed_s();
    const bool removed = try_without(cand, gene);
    knock_s += budget.elapsed_s() - t;
    ++res.tried;
    return removed;
  };
  for (const auto& name : cfg_genes) {
    Genome cand = cur;
    slot(cand, name) = slot(dflt, name);
    if (knock(cand, name + "=" + slot(cur, name))) cur = cand;
    if (cb) cb(++done, total);
  }
  for (const auto& e : x.edits) {
    Genome cand = cur;
    auto it = std::find(cand.edits.begin(), cand.edits.end(), e);
    if (it == cand.edits.end()) continue;
    cand.edits.erase(it);
    if (knock(cand, e.text())) cur = cand;
    if (cb) cb(++done, total);
  }
  if (res.budget_stopped)
    res.log.push_back("the budget stopped minimize after " + std::to_string(res.tried) + " of " + std::to_string(total) +
                      " genes (" + fmt(budget.elapsed_s(), 3) + " s of " + fmt(o.budget_s, 3) +
                      " s): the genes not tried stay");
  res.output = cur;
  auto [v, c] = compile_one(cur);
  for (std::size_t k = 0; k < nc; ++k) res.case_output_ms.push_back(value(run_on_case(k, v, c)));
  res.output_ms = res.case_output_ms[0];
  return res;
}

namespace {
// The state of one tune: the cases, the input's times (the base) and the best genome so far.
struct Tuner {
  const Grammar& g;
  Evaluator& ev;
  const TuneOptions& o;
  TuneResult& res;
  std::vector<CaseRef> cases;
  std::size_t nc = 0;
  std::size_t current = 0;  // the evaluator's case: set only when it changes
  std::vector<double> base_ms;
  bool base_ok = false;
  Genome best;
  double best_score = INFINITY, best_ms = 0;
  StageBudget budget;         // TuneOptions::budget_s
  double spent_s = 0;         // measuring configurations (the input's measurement included)
  int measured = 0;
  bool stopped = false;       // the budget ended the tune

  // The timing of every run: energy too where the objective needs it.
  TimingSpec spec() const {
    TimingSpec t = o.timing;
    t.energy = t.energy || needs_energy(o.objective);
    return t;
  }
  // Measures genomes on every case (one case switch per case per batch): the objective's value
  // (time: ms) t[i][k], or < 0 failed.
  std::vector<std::vector<double>> measure_all(const std::vector<Genome>& cands, std::vector<std::string>& status) {
    std::vector<Variant> vs;
    for (const auto& c : cands) vs.push_back(apply(g, c));
    auto comp = ev.compile(vs);
    std::vector<std::vector<double>> t(cands.size(), std::vector<double>(nc, -1));
    status.assign(cands.size(), "ok");
    for (std::size_t i = 0; i < cands.size(); ++i)
      if (!comp[i].ok) status[i] = "compile_error";
    for (std::size_t k = 0; k < nc; ++k) {
      if (k != current) ev.set_case(cases[k].seed, false, cases[k].size_class);
      current = k;
      for (std::size_t i = 0; i < cands.size(); ++i) {
        if (status[i] != "ok") continue;
        RunResult r = ev.run(comp[i], vs[i].config, spec(), 60 + spec().energy_limit_s());
        const double v = objective_value(o.objective, r.median_ms, r.joules);  // time: the median ms
        if (!r.ok()) status[i] = status_name(r.status);
        else if (r.check.penalty > 0) status[i] = "wrong";
        else if (needs_energy(o.objective) && !(r.joules > 0)) status[i] = "no_energy";
        else t[i][k] = v;
        if (k == 0 && r.ok()) t[i][0] = r.check.penalty > 0 ? -v : v;
      }
    }
    return t;
  }
  // score: geometric mean of t / base over the cases (base missing: plain time on the first case)
  double score_of(const std::vector<double>& t) const {
    double lg = 0;
    for (std::size_t k = 0; k < nc; ++k) {
      if (t[k] <= 0) return std::numeric_limits<double>::infinity();
      lg += std::log(base_ok && base_ms[k] > 0 ? t[k] / base_ms[k] : t[k]);
    }
    return std::exp(lg / static_cast<double>(nc));
  }
  // Measures a set of candidates: each goes into the table, the best scoring one is kept.
  void try_set(const std::vector<Genome>& cands) {
    std::vector<std::string> status;
    const double t0 = budget.elapsed_s();
    auto t = measure_all(cands, status);
    spent_s += budget.elapsed_s() - t0;
    measured += static_cast<int>(cands.size());
    for (std::size_t i = 0; i < cands.size(); ++i) {
      TuneEntry e;
      e.config = cands[i].config;
      for (const auto& [k, v] : cands[i].options) e.config[k] = v;
      e.status = status[i];
      e.ms = std::fabs(t[i][0]);
      if (status[i] == "ok") {
        const double sc = score_of(t[i]);
        e.score = std::isfinite(sc) ? sc : 0;
        if (sc < best_score) {
          best_score = sc;
          best_ms = t[i][0];
          best = cands[i];
        }
      }
      res.table.push_back(e);
    }
  }
  // Measures candidates in sets of 32, or of as many as the budget has room for at the mean time
  // per configuration so far, reporting done0 + those measured of `total` after each; false when
  // the budget stopped it (then `stopped`).
  bool try_batches(const std::vector<Genome>& cands, const StepCallback& cb, int done0 = 0, int total = -1) {
    const int n = static_cast<int>(cands.size());
    if (total < 0) total = n;
    for (int i = 0; i < n;) {
      const int k = budget.fits(spent_s / std::max(1, measured), std::min(32, n - i));
      if (k == 0) {
        stopped = true;
        return false;
      }
      try_set(std::vector<Genome>(cands.begin() + i, cands.begin() + i + k));
      i += k;
      if (cb) cb(done0 + i, total);
    }
    return true;
  }
};

// The launch parameters worth tuning: numbers and choices of 2 to 64 values.
std::vector<const ConfigParam*> tune_params(const Grammar& g) {
  std::vector<const ConfigParam*> ps;
  for (const auto& p : g.params)
    if ((p.kind == ConfigParam::Kind::number || p.kind == ConfigParam::Kind::choice) && p.values.size() > 1 &&
        p.values.size() <= 64)
      ps.push_back(&p);
  return ps;
}

// Tries every combination of the parameters' values on x.
void tune_grid(Tuner& tu, const Genome& x, const std::vector<const ConfigParam*>& ps, const StepCallback& cb) {
  std::vector<Genome> cands{x};
  for (auto* p : ps) {
    std::vector<Genome> next;
    for (const auto& c : cands)
      for (const auto& v : p->values) {
        Genome n = c;
        n.config[p->name] = v;
        next.push_back(n);
      }
    cands = next;
  }
  tu.try_batches(cands, cb);
}

// Coordinate descent, twice over: each parameter's values in turn on the best genome so far.
void tune_descent(Tuner& tu, const std::vector<const ConfigParam*>& ps, const StepCallback& cb) {
  int total = 0, done = 0;
  for (auto* p : ps) total += 2 * static_cast<int>(p->values.size());
  for (int pass = 0; pass < 2; ++pass)
    for (auto* p : ps) {
      std::vector<Genome> cands;
      for (const auto& v : p->values) {
        Genome n = tu.best;
        n.config[p->name] = v;
        cands.push_back(n);
      }
      if (!tu.try_batches(cands, cb, done, total)) return;
      done += static_cast<int>(p->values.size());
    }
}

// The NVRTC option genes, exhaustively, on the best launch configuration.
void tune_options(Tuner& tu, const StepCallback& cb) {
  if (tu.stopped) return;  // the budget ended the launch parameters' tuning
  const Genome start = tu.best;
  std::vector<Genome> cands{start};
  for (const auto& p : tu.g.option_params) {  // every combination of the option values
    tu.res.tuned.push_back(p.name);
    std::vector<Genome> next;
    for (const auto& c : cands)
      for (const auto& v : p.values) {
        Genome n = c;
        n.options[p.name] = v;
        next.push_back(n);
      }
    cands = next;
  }
  cands.erase(std::remove(cands.begin(), cands.end(), start), cands.end());  // measured already
  tu.try_batches(cands, cb);
}
}  // namespace

TuneResult tune(const Grammar& g, Evaluator& ev, const Genome& x, const TuneOptions& o, const StepCallback& cb) {
  TuneResult res;
  res.input = x;
  res.planned = tune_planned(g, o);
  Tuner tu{g, ev, o, res};
  tu.budget = StageBudget(o.budget_s, o.clock);
  tu.cases = o.cases.empty() ? std::vector<CaseRef>{{"", o.case_seed}} : o.cases;
  const std::size_t nc = tu.cases.size();
  tu.nc = nc;
  tu.current = nc;
  const std::vector<const ConfigParam*> ps = tune_params(g);
  for (auto* p : ps) res.tuned.push_back(p->name);
  std::vector<std::string> st0;
  const auto base = tu.measure_all({x}, st0)[0];
  tu.spent_s = tu.budget.elapsed_s();  // the first estimate of a configuration's time
  tu.measured = 1;
  tu.base_ms.assign(nc, 0);
  tu.base_ok = st0[0] == "ok";
  for (std::size_t k = 0; k < nc; ++k) tu.base_ms[k] = base[k] > 0 ? base[k] : 0;
  res.input_ms = tu.base_ok ? tu.base_ms[0] : 0;
  tu.best = x;
  tu.best_score = tu.base_ok ? tu.score_of(base) : INFINITY;
  tu.best_ms = tu.base_ok ? tu.base_ms[0] : 0;
  double combos = 1;
  for (auto* p : ps) combos *= static_cast<double>(p->values.size());
  if (combos <= o.max_combinations) tune_grid(tu, x, ps, cb);
  else tune_descent(tu, ps, cb);
  // then the NVRTC option genes, exhaustively, on the best launch configuration
  if (o.options && !g.option_params.empty()) tune_options(tu, cb);
  res.output = tu.best;
  res.output_ms = std::isfinite(tu.best_score) ? tu.best_ms : 0;
  res.output_score = std::isfinite(tu.best_score) && tu.base_ok ? tu.best_score : 0;
  res.budget_stopped = tu.stopped;
  if (tu.stopped)
    res.note = "the budget stopped tuning after " + std::to_string(res.table.size()) + " of " +
               std::to_string(res.planned) + " configurations (" + fmt(tu.budget.elapsed_s(), 3) + " s of " +
               fmt(o.budget_s, 3) + " s); the best so far is kept";
  return res;
}

int tune_planned(const Grammar& g, const TuneOptions& o) {
  const std::vector<const ConfigParam*> ps = tune_params(g);
  double combos = 1, values = 0;
  for (auto* p : ps) {
    combos *= static_cast<double>(p->values.size());
    values += static_cast<double>(p->values.size());
  }
  double n = combos <= o.max_combinations ? combos : 2 * values;
  if (o.options && !g.option_params.empty()) {
    double opt = 1;
    for (const auto& p : g.option_params) opt *= static_cast<double>(p.values.size());
    n += opt - 1;
  }
  return static_cast<int>(n);
}

}  // namespace evk::gi
