// `gi evolve`: search -> minimize -> per class: tune the original (baseline) and the evolved genome
// -> validate on hold-out cases -> the variants to install.
#include "evk/gi/evolve.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace evk::gi {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }
std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}
}  // namespace

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::vector<std::pair<std::string, std::string>> genome_header(const std::string& txt) {
  std::vector<std::pair<std::string, std::string>> h;
  std::size_t pos = 0;
  while (pos <= txt.size()) {
    std::size_t nl = txt.find('\n', pos);
    if (nl == std::string::npos) nl = txt.size();
    const std::string line = text::trim(txt.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty() || line[0] != '#') continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    h.emplace_back(text::trim(line.substr(1, colon - 1)), text::trim(line.substr(colon + 1)));
  }
  return h;
}

std::pair<int, int> evolve_size(const Problem& p, const EvolveOptions& o, int lanes) {
  int pop = o.population > 0 ? o.population : p.default_population();
  const int gens = o.generations > 0 ? o.generations : p.default_generations();
  if (o.population <= 0 && o.budget_s > 0 && o.candidates_per_s > 0) {
    // as many candidates as the search's share of the budget allows at the measured rate, spread
    // over the generations; never fewer than 20 per generation (the search stops at the budget)
    const double candidates = o.candidates_per_s * std::max(1, lanes) * o.budget_s * o.search_share;
    if (candidates < static_cast<double>(pop) * gens) pop = std::max(20, static_cast<int>(candidates / gens));
  }
  return {std::max(2, pop), std::max(1, gens)};
}

namespace {
// Writes the search's run directory's config.json (what was searched, where, from when).
void evolve_write_config(const Problem& p, Evaluator& ev, const SearchOptions& so, const std::vector<std::string>& classes,
                         int pop, int gens, std::uint64_t seed) {
  fs::create_directories(so.run_dir);
  const DeviceSummary d = ev.device();
  write_text_atomic((fs::path(so.run_dir) / "config.json").string(),
                    nlohmann::json{{"problem", p.name()}, {"entry", p.kernel_entry()}, {"population", pop},
                                   {"generations", gens}, {"seed", seed}, {"tolerance", so.tolerance},
                                   {"repeats", so.timing.repeats}, {"device", d.name}, {"cc", d.cc},
                                   {"lanes", ev.lanes()}, {"classes", classes}, {"budget_s", so.budget_s},
                                   {"nvrtc", nvrtc_version()}, {"started", utc_now()},
                                   {"objective", objective_name(so.objective)},
                                   {"energy_window_ms", so.timing.energy_window_ms}}
                            .dump(2) +
                        "\n");
}

// Gathers one variant per distinct tuned genome that won in some class; none: r.refusal says why.
void evolve_variants(const Problem& p, const Grammar& g, EvolveResult& r) {
  std::map<std::string, std::size_t> by_text;
  std::vector<EvolveVariant> all;
  for (const auto& ec : r.classes) {
    const std::string t = format_genome(g, ec.evolved);
    auto it = by_text.find(t);
    if (it == by_text.end()) {
      EvolveVariant v;
      v.genome = ec.evolved;
      v.text = t;
      v.constraints = p.constraints(ec.evolved.config);
      it = by_text.emplace(t, all.size()).first;
      all.push_back(v);
    }
    EvolveVariant& v = all[it->second];
    if (ec.validation.applicable && ec.validation.run > 0) v.validated.push_back(validated_line(ec.validation));
    if (ec.validation.energy) v.energy.push_back(energy_line(ec.validation));
    if (ec.wins) v.classes.push_back(ec.size_class);
  }
  for (auto& v : all)
    if (!v.classes.empty()) r.variants.push_back(v);
  if (r.variants.empty()) {
    std::string why;
    for (const auto& ec : r.classes) {
      why += (why.empty() ? "" : "; ") + ec.size_class + ": ";
      if (!ec.validation.blessed) why += ec.validation.reason.empty() ? "not validated" : ec.validation.reason;
      else if (ec.evolved == ec.pretuned) why += "the tuned variant is the pre-tuned original";
      else if (r.objective != Objective::time) why += ec.why;
      else why += fixed(ec.validation.speedup_pretuned_median, 3) + "x vs the pre-tuned original";
    }
    r.refusal = r.objective == Objective::time
                    ? "the evolved variant beats the pre-tuned original in no size class (" + why + ")"
                    : std::string("no energy variant ships: it saves at least 10% energy for at most 5% more time "
                                  "than the pre-tuned original in no size class (") + why + ")";
  }
}
}  // namespace

EvolveResult evolve(const Problem& p, const Grammar& g, const EvaluatorFactory& make_evaluator, const EvolveOptions& o,
                    const std::function<void(const EvolveProgress&)>& progress) {
  const auto t0 = Clock::now();
  EvolveResult r;
  r.objective = o.objective;
  std::vector<std::string> classes = o.classes.empty() ? p.class_names() : o.classes;
  for (const auto& c : classes) p.check_class(c);
  double best_shown = 0;
  auto report = [&](const std::string& stage, int done, int total) {
    if (!progress) return;
    EvolveProgress e;
    e.stage = stage;
    e.done = done;
    e.total = total;
    e.best_speedup = best_shown;
    e.elapsed_s = since(t0);
    e.budget_s = o.budget_s;
    progress(e);
  };
  if (!o.work_dir.empty()) fs::create_directories(o.work_dir);
  auto save = [&](const std::string& name, const Genome& x) {
    if (!o.work_dir.empty())
      write_text_atomic((fs::path(o.work_dir) / name).string(), genome_file({{"kernel", p.name()}}, format_genome(g, x)));
  };

  // 1. search
  {
    auto ev = make_evaluator(true, 1);
    const auto [pop, gens] = evolve_size(p, o, ev->lanes());
    r.population = pop;
    SearchOptions so = o.search;
    so.population = pop;
    so.generations = gens;
    so.seed = o.seed;
    so.classes = classes;
    so.budget_s = o.budget_s > 0 ? o.budget_s * o.search_share : 0;
    so.problem = p.name();
    so.resume = false;
    so.objective = o.objective;
    so.run_dir = o.work_dir.empty() ? "" : (fs::path(o.work_dir) / "run").string();
    if (!so.run_dir.empty()) evolve_write_config(p, *ev, so, classes, pop, gens, o.seed);
    report("search", 0, gens);
    r.search = run_search(g, *ev, so, [&](const GenerationStats& s, const SearchState&) {
      best_shown = s.best_so_far_speedup;
      report("search", s.generation + 1, gens);
    });
    for (const auto& h : r.search.history) r.search_wall_s += h.wall_s;
    r.generations = static_cast<int>(r.search.history.size());
    if (!so.run_dir.empty()) write_report(so.run_dir);
    if (r.search.best_genome.empty()) {
      r.refusal = "the search found no correct variant";
      r.elapsed_s = since(t0);
      return r;
    }
    r.best = parse_genome(g, r.search.best_genome, "best genome of the search");
    save("best.genome", r.best);
  }

  // 2. minimize on one probe set covering every class, then per class: tune and validate
  std::vector<int> per_class;
  for (const auto& c : classes) per_class.push_back(p.probe_cases(c));
  const auto min_cases = probe_cases(classes, per_class, o.minimize.case_seed);
  int keep = static_cast<int>(min_cases.size());
  keep = std::min(32, std::max({keep, o.cases > 0 ? 2 : 1}));
  auto ev = make_evaluator(false, keep);
  best_shown = 0;
  {
    MinimizeOptions mo = o.minimize;
    mo.cases = min_cases;
    mo.objective = o.objective;
    report("minimize", 0, 0);
    auto m = minimize(g, *ev, r.best, mo, [&](int d, int t) { report("minimize", d, t); });
    r.minimized = m.output;
    save("min.genome", r.minimized);
  }
  for (const auto& c : classes) {
    EvolveClass ec;
    ec.size_class = c;
    TuneOptions to = o.tune;
    to.cases = probe_cases({c}, {p.probe_cases(c)}, o.tune.case_seed);
    to.objective = o.objective;
    ec.pretuned = tune(g, *ev, empty_genome(g), to, [&](int d, int t) { report("tune original (" + c + ")", d, t); }).output;
    save("pretuned-" + c + ".genome", ec.pretuned);
    ec.evolved = tune(g, *ev, r.minimized, to, [&](int d, int t) { report("tune evolved (" + c + ")", d, t); }).output;
    save("evolved-" + c + ".genome", ec.evolved);
    ValidateOptions vo = o.validate;
    vo.cases = o.cases;
    vo.size_class = c;
    vo.constraints = p.constraints(ec.evolved.config);
    vo.timing.energy = vo.timing.energy || o.measure_energy || needs_energy(o.objective);
    ec.validation = validate(g, *ev, ec.evolved, &ec.pretuned, vo, [&](int d, int t) { report("validate (" + c + ")", d, t); });
    ec.wins = class_wins(ec, o.objective, o.min_gain);
    if (ec.validation.blessed)
      best_shown = std::max(best_shown, o.objective == Objective::time || !(ec.validation.energy_ratio_pretuned_median > 0)
                                            ? ec.validation.speedup_pretuned_median
                                            : 1 / ec.validation.energy_ratio_pretuned_median);
    r.classes.push_back(ec);
  }

  // 3. one variant per distinct tuned genome that won somewhere
  evolve_variants(p, g, r);
  r.elapsed_s = since(t0);
  report("done", 1, 1);
  return r;
}

bool class_wins(EvolveClass& ec, Objective o, double min_gain) {
  const ValidateResult& v = ec.validation;
  const bool candidate = v.blessed && v.has_pretuned && !(ec.evolved == ec.pretuned);
  if (o == Objective::time) return candidate && v.speedup_pretuned_median > 1 + min_gain;
  const ShipDecision d = v.energy ? energy_ship_rule(v.energy_ratio_pretuned_median, v.time_ratio_pretuned_median)
                                  : ShipDecision{false, "energy not measured on the hold-out cases: " + v.energy_note};
  ec.why = d.why;
  return candidate && d.ships;
}

std::string variant_file(const Problem& p, const DeviceSummary& d, const EvolveResult& r, const EvolveVariant& v,
                         const std::string& id, std::uint64_t seed) {
  std::vector<std::pair<std::string, std::string>> h = {
      {"kernel", p.name()},
      {"id", id},
      {"device", d.name},
      {"cc", cc_text(d.cc)},
      {"driver", d.driver},
      {"cuda", d.cuda},
      {"nvrtc", nvrtc_version()},
      {"date", utc_now()},
      {"seed", std::to_string(seed)},
      {"population", std::to_string(r.population)},
      {"generations", std::to_string(r.generations)},
      {"search_wall_s", fixed(r.search_wall_s, 1)},
  };
  std::string cls;
  for (const auto& c : v.classes) cls += (cls.empty() ? "" : ", ") + c;
  h.emplace_back("classes", cls);
  for (const auto& c : v.constraints) h.emplace_back("requires", c);
  for (const auto& l : v.validated) h.emplace_back("validated", l);
  if (r.objective != Objective::time) {
    h.emplace_back("objective", objective_name(r.objective));
    for (const auto& l : v.energy) h.emplace_back("energy", l);
  }
  h.emplace_back("source", "gi evolve");
  return genome_file(h, v.text);
}

}  // namespace evk::gi
