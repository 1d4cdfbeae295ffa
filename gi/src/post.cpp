#include "evk/gi/post.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

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
}  // namespace

MinimizeResult minimize(const Grammar& g, Evaluator& ev, const Genome& x, const MinimizeOptions& o, const StepCallback& cb) {
  MinimizeResult res;
  res.input = x;
  ev.set_case(o.case_seed, false);
  Variant v = apply(g, x);
  std::vector<double> samples;
  for (int i = 0; i < o.noise_samples; ++i) {
    RunResult r = measure(ev, v, o.timing);
    if (!good(r)) throw std::runtime_error("minimize: the input genome fails: " + (r.ok() ? r.check.summary : r.message));
    samples.push_back(r.median_ms);
  }
  double mean = 0;
  for (double s : samples) mean += s;
  mean /= samples.size();
  double var = 0;
  for (double s : samples) var += (s - mean) * (s - mean);
  res.noise_ms = samples.size() > 1 ? std::sqrt(var / (samples.size() - 1)) : 0;
  res.base_ms = spread(samples).median;
  double noise = std::max(res.noise_ms, o.min_noise_fraction * res.base_ms);
  double limit = res.base_ms + o.sigmas * noise;
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
    RunResult r = measure(ev, apply(g, cand), o.timing);
    std::string gene = name + "=" + slot(cur, name);
    if (good(r) && r.median_ms <= limit) {
      res.log.push_back("removed " + gene + ": " + fmt(r.median_ms) + " ms without it (limit " + fmt(limit) + ")");
      cur = cand;
    } else {
      res.log.push_back("kept " + gene + ": " + (good(r) ? fmt(r.median_ms) + " ms without it" : "fails without it"));
    }
    if (cb) cb(++done, total);
  }
  for (const auto& e : x.edits) {
    Genome cand = cur;
    auto it = std::find(cand.edits.begin(), cand.edits.end(), e);
    if (it == cand.edits.end()) continue;
    cand.edits.erase(it);
    RunResult r = measure(ev, apply(g, cand), o.timing);
    if (good(r) && r.median_ms <= limit) {
      res.log.push_back("removed " + e.text() + ": " + fmt(r.median_ms) + " ms without it (limit " + fmt(limit) + ")");
      cur = cand;
    } else {
      res.log.push_back("kept " + e.text() + ": " + (good(r) ? fmt(r.median_ms) + " ms without it" : "fails without it"));
    }
    if (cb) cb(++done, total);
  }
  res.output = cur;
  RunResult fin = measure(ev, apply(g, cur), o.timing);
  res.output_ms = fin.median_ms;
  return res;
}

TuneResult tune(const Grammar& g, Evaluator& ev, const Genome& x, const TuneOptions& o, const StepCallback& cb) {
  TuneResult res;
  res.input = x;
  ev.set_case(o.case_seed, false);
  std::vector<const ConfigParam*> ps;
  for (const auto& p : g.params)
    if ((p.kind == ConfigParam::Kind::number || p.kind == ConfigParam::Kind::choice) && p.values.size() > 1 &&
        p.values.size() <= 64)
      ps.push_back(&p);
  for (auto* p : ps) res.tuned.push_back(p->name);
  RunResult base = measure(ev, apply(g, x), o.timing);
  res.input_ms = good(base) ? base.median_ms : 0;
  Genome best = x;
  double best_ms = good(base) ? base.median_ms : INFINITY;
  double combos = 1;
  for (auto* p : ps) combos *= static_cast<double>(p->values.size());
  auto try_set = [&](std::vector<Genome> cands) {
    std::vector<Variant> vs;
    for (auto& c : cands) vs.push_back(apply(g, c));
    auto comp = ev.compile(vs);
    for (std::size_t i = 0; i < cands.size(); ++i) {
      TuneEntry e;
      e.config = cands[i].config;
      for (const auto& [k, v] : cands[i].options) e.config[k] = v;
      if (!comp[i].ok) {
        e.status = "compile_error";
      } else {
        RunResult r = ev.run(comp[i], vs[i].config, o.timing, 60);
        e.status = !r.ok() ? status_name(r.status) : r.check.penalty > 0 ? "wrong" : "ok";
        e.ms = r.median_ms;
        if (good(r) && r.median_ms < best_ms) {
          best_ms = r.median_ms;
          best = cands[i];
        }
      }
      res.table.push_back(e);
    }
  };
  if (combos <= o.max_combinations) {
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
    int total = static_cast<int>(cands.size());
    for (int i = 0; i < total; i += 32) {
      try_set(std::vector<Genome>(cands.begin() + i, cands.begin() + std::min(total, i + 32)));
      if (cb) cb(std::min(total, i + 32), total);
    }
  } else {  // coordinate descent, twice over
    int total = 0, done = 0;
    for (auto* p : ps) total += 2 * static_cast<int>(p->values.size());
    for (int pass = 0; pass < 2; ++pass)
      for (auto* p : ps) {
        std::vector<Genome> cands;
        for (const auto& v : p->values) {
          Genome n = best;
          n.config[p->name] = v;
          cands.push_back(n);
        }
        try_set(cands);
        done += static_cast<int>(p->values.size());
        if (cb) cb(done, total);
      }
  }
  // then the NVRTC option genes, exhaustively, on the best launch configuration
  if (o.options && !g.option_params.empty()) {
    const Genome start = best;
    std::vector<Genome> cands{start};
    for (const auto& p : g.option_params) {  // every combination of the option values
      res.tuned.push_back(p.name);
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
    int total = static_cast<int>(cands.size());
    for (int i = 0; i < total; i += 32) {
      try_set(std::vector<Genome>(cands.begin() + i, cands.begin() + std::min(total, i + 32)));
      if (cb) cb(std::min(total, i + 32), total);
    }
  }
  res.output = best;
  res.output_ms = std::isfinite(best_ms) ? best_ms : 0;
  return res;
}

ValidateResult validate(const Grammar& g, Evaluator& ev, const Genome& evolved, const Genome* pretuned,
                        const ValidateOptions& o, const StepCallback& cb) {
  ValidateResult res;
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
  for (int i = 0; i < o.cases; ++i) {
    ValidateCase c;
    c.seed = o.first_seed + static_cast<std::uint64_t>(i);
    c.describe = ev.set_case(c.seed, true).describe;
    RunResult ro = ev.run(comp[0], orig.config, o.timing, 120);
    if (!good(ro)) throw std::runtime_error("validate: the original kernel fails on hold-out case " + c.describe);
    c.original_ms = ro.median_ms;
    if (pretuned) {
      RunResult rp = ev.run(comp[2], pre.config, o.timing, 120);
      c.pretuned_ms = good(rp) ? rp.median_ms : 0;
    }
    RunResult re = ev.run(comp[1], evo.config, o.timing, 120);
    c.evolved_status = status_name(re.status);
    c.evolved_ms = re.median_ms;
    c.evolved_max_error = re.check.max_error;
    c.evolved_penalty = re.check.penalty;
    c.summary = re.ok() ? re.check.summary : re.message;
    res.max_error = std::max(res.max_error, c.evolved_max_error);
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
  res.blessed = res.reason.empty() && !res.cases.empty();
  return res;
}

}  // namespace evk::gi
