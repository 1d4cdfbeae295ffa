#include "evk/gi/post.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>

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

namespace {
bool good(const RunResult& r) { return r.ok() && r.check.penalty == 0; }
std::string fmt(double v, int prec = 4) {
  std::ostringstream o;
  o.precision(prec);
  o << v;
  return o.str();
}
struct Spread {
  double median = 0, min = 0, max = 0;
};
Spread spread(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  return s;
}
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
}  // namespace

MinimizeResult minimize(const Grammar& g, Evaluator& ev, const Genome& x, const MinimizeOptions& o, const StepCallback& cb) {
  MinimizeResult res;
  res.input = x;
  std::vector<CaseRef> cases = o.cases.empty() ? std::vector<CaseRef>{{"", o.case_seed}} : o.cases;
  if (!o.constraints.empty()) {  // only cases the variant may run (the next seeds of the class otherwise)
    for (auto& c : cases) {
      std::string why;
      int tries = 0;
      for (; tries < 32; ++tries, ++c.seed) {
        why = violated_constraint(o.constraints, ev.set_case(c.seed, false, c.size_class).properties);
        if (why.empty()) break;
      }
      if (!why.empty())
        throw std::runtime_error("minimize: no case of class " + (c.size_class.empty() ? "(default)" : c.size_class) +
                                 " within the genome's constraints (" + why + ")");
      if (tries > 0)
        res.log.push_back("case " + case_name(c) + " used: the " + std::to_string(tries) +
                          " before it in its class are outside the genome's constraints");
    }
  }
  const std::size_t nc = cases.size();
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
    return ev.run(c, v.config, o.timing, 60);
  };
  // the input genome's time and noise on every case
  std::vector<double> limit(nc);
  res.case_base_ms.resize(nc);
  res.case_noise_ms.resize(nc);
  {
    auto [v, c] = compile_one(x);
    for (std::size_t k = 0; k < nc; ++k) {
      std::vector<double> samples;
      for (int i = 0; i < o.noise_samples; ++i) {
        RunResult r = run_on_case(k, v, c);
        if (!good(r))
          throw std::runtime_error("minimize: the input genome fails on case " + case_name(cases[k]) + ": " +
                                   (r.ok() ? r.check.summary : r.message));
        samples.push_back(r.median_ms);
      }
      res.case_noise_ms[k] = stdev(samples);
      res.case_base_ms[k] = spread(samples).median;
      const double noise = std::max(res.case_noise_ms[k], o.min_noise_fraction * res.case_base_ms[k]);
      limit[k] = res.case_base_ms[k] + o.sigmas * noise;
    }
  }
  res.base_ms = res.case_base_ms[0];
  res.noise_ms = res.case_noise_ms[0];
  // One knock-out: removed when correct and within the limit on every case.
  auto try_without = [&](const Genome& cand, const std::string& gene) {
    auto [v, c] = compile_one(cand);
    std::string times;
    for (std::size_t k = 0; k < nc; ++k) {
      RunResult r = run_on_case(k, v, c);
      if (!good(r)) {
        res.log.push_back("kept " + gene + ": fails without it" + (nc > 1 ? " on case " + case_name(cases[k]) : ""));
        return false;
      }
      if (r.median_ms > limit[k]) {
        res.log.push_back("kept " + gene + ": " + fmt(r.median_ms) + " ms without it (limit " + fmt(limit[k]) + ")" +
                          (nc > 1 ? " on case " + case_name(cases[k]) : ""));
        return false;
      }
      times += (times.empty() ? "" : ", ") + fmt(r.median_ms);
    }
    res.log.push_back("removed " + gene + ": " + times + " ms without it (limit " + fmt(limit[0]) +
                      (nc > 1 ? " on the first of " + std::to_string(nc) + " cases" : "") + ")");
    return true;
  };
  // genes: non-default config values, then the edits, left to right
  Genome cur = x;
  Genome dflt = empty_genome(g);
  std::vector<std::string> cfg_genes;
  for (const auto& p : g.params)
    if (cur.config[p.name] != p.default_value) cfg_genes.push_back(p.name);
  for (const auto& p : g.option_params)
    if (cur.options[p.name] != p.default_value) cfg_genes.push_back(p.name);
  auto slot = [](Genome& y, const std::string& name) -> std::string& {
    return y.config.count(name) ? y.config[name] : y.options[name];
  };
  int total = static_cast<int>(cfg_genes.size() + x.edits.size()), done = 0;
  for (const auto& name : cfg_genes) {
    Genome cand = cur;
    slot(cand, name) = slot(dflt, name);
    if (try_without(cand, name + "=" + slot(cur, name))) cur = cand;
    if (cb) cb(++done, total);
  }
  for (const auto& e : x.edits) {
    Genome cand = cur;
    auto it = std::find(cand.edits.begin(), cand.edits.end(), e);
    if (it == cand.edits.end()) continue;
    cand.edits.erase(it);
    if (try_without(cand, e.text())) cur = cand;
    if (cb) cb(++done, total);
  }
  res.output = cur;
  auto [v, c] = compile_one(cur);
  for (std::size_t k = 0; k < nc; ++k) res.case_output_ms.push_back(run_on_case(k, v, c).median_ms);
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

  // Measures genomes on every case (one case switch per case per batch): times[i][k], or < 0 failed.
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
        RunResult r = ev.run(comp[i], vs[i].config, o.timing, 60);
        if (!r.ok()) status[i] = status_name(r.status);
        else if (r.check.penalty > 0) status[i] = "wrong";
        else t[i][k] = r.median_ms;
        if (k == 0 && r.ok()) t[i][0] = r.check.penalty > 0 ? -r.median_ms : r.median_ms;
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
    auto t = measure_all(cands, status);
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
  // Measures candidates in sets of 32, reporting progress after each.
  void try_batches(const std::vector<Genome>& cands, const StepCallback& cb) {
    int total = static_cast<int>(cands.size());
    for (int i = 0; i < total; i += 32) {
      try_set(std::vector<Genome>(cands.begin() + i, cands.begin() + std::min(total, i + 32)));
      if (cb) cb(std::min(total, i + 32), total);
    }
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
      tu.try_set(cands);
      done += static_cast<int>(p->values.size());
      if (cb) cb(done, total);
    }
}

// The NVRTC option genes, exhaustively, on the best launch configuration.
void tune_options(Tuner& tu, const StepCallback& cb) {
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
  Tuner tu{g, ev, o, res};
  tu.cases = o.cases.empty() ? std::vector<CaseRef>{{"", o.case_seed}} : o.cases;
  const std::size_t nc = tu.cases.size();
  tu.nc = nc;
  tu.current = nc;
  const std::vector<const ConfigParam*> ps = tune_params(g);
  for (auto* p : ps) res.tuned.push_back(p->name);
  std::vector<std::string> st0;
  const auto base = tu.measure_all({x}, st0)[0];
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
  return res;
}

ValidateResult validate(const Grammar& g, Evaluator& ev, const Genome& evolved, const Genome* pretuned,
                        const ValidateOptions& o, const StepCallback& cb) {
  ValidateResult res;
  res.size_class = o.size_class;
  res.has_pretuned = pretuned != nullptr;
  Variant orig = original_variant(g);
  Variant evo = apply(g, evolved);
  Variant pre = pretuned ? apply(g, *pretuned) : Variant{};
  std::vector<Variant> vs{orig, evo};
  if (pretuned) vs.push_back(pre);
  auto comp = ev.compile(vs);
  if (!comp[0].ok) throw std::runtime_error("validate: the original kernel does not compile: " + comp[0].log);
  if (!comp[1].ok) {
    res.reason = "the evolved kernel does not compile";
    return res;
  }
  if (pretuned && !comp[2].ok) throw std::runtime_error("validate: the pre-tuned genome does not compile: " + comp[2].log);
  std::vector<double> sp, spp;
  TimingSpec timing = o.timing;
  timing.race_checks = 24;  // 26 checked launches per kernel and case, not 2: rare races show
  for (int i = 0; i < o.cases; ++i) {
    ValidateCase c;
    c.seed = o.first_seed + static_cast<std::uint64_t>(i);
    const CaseInfo info = ev.set_case(c.seed, true, o.size_class);
    c.describe = info.describe;
    if (res.size_class.empty()) res.size_class = info.size_class;
    c.skipped = violated_constraint(o.constraints, info.properties);
    if (!c.skipped.empty()) {  // the dispatch never runs the variant on such a request
      ++res.skipped;
      res.cases.push_back(c);
      if (cb) cb(i + 1, o.cases);
      continue;
    }
    ++res.run;
    RunResult ro = ev.run(comp[0], orig.config, timing, 120);
    if (!good(ro)) throw std::runtime_error("validate: the original kernel fails on hold-out case " + c.describe);
    c.original_ms = ro.median_ms;
    if (pretuned) {
      RunResult rp = ev.run(comp[2], pre.config, timing, 120);
      c.pretuned_ms = good(rp) ? rp.median_ms : 0;
    }
    RunResult re = ev.run(comp[1], evo.config, timing, 120);
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
      sp.push_back(c.original_ms / re.median_ms);
      if (c.pretuned_ms > 0) spp.push_back(c.pretuned_ms / re.median_ms);
    }
    res.cases.push_back(c);
    if (cb) cb(i + 1, o.cases);
  }
  Spread s = spread(sp), sq = spread(spp);
  res.speedup_median = s.median;
  res.speedup_min = s.min;
  res.speedup_max = s.max;
  res.speedup_pretuned_median = sq.median;
  res.speedup_pretuned_min = sq.min;
  res.speedup_pretuned_max = sq.max;
  res.applicable = res.run > 0 || res.cases.empty();
  if (res.run == 0 && !res.cases.empty() && res.reason.empty())
    res.reason = "every hold-out case of class " + res.size_class + " is outside the variant's constraints";
  res.blessed = res.reason.empty() && res.run > 0;
  res.beats_pretuned = res.blessed && res.has_pretuned && !spp.empty() && res.speedup_pretuned_median > 1.0;
  return res;
}

std::string validated_line(const ValidateResult& r) {
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s cases=%d speedup=%.3f (%.3f..%.3f) pretuned=%.3f (%.3f..%.3f) max_error=%.3g",
                r.size_class.empty() ? "default" : r.size_class.c_str(), r.run, r.speedup_median, r.speedup_min,
                r.speedup_max, r.speedup_pretuned_median, r.speedup_pretuned_min, r.speedup_pretuned_max, r.max_error);
  return buf;
}

}  // namespace evk::gi
