// `gi evolve`: search -> minimize -> per class: tune the original (baseline) and the evolved genome
// -> validate on hold-out cases -> the variants to install.
#include "evk/gi/evolve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evolve_budget.hpp"
#include "text.hpp"

namespace fs = std::filesystem;

namespace evk::gi {

namespace {
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

namespace {
// The pipeline after the search (search() first): its clock, what evaluations cost so far (every
// evaluator goes through the meter), the stages' record, and the budget's split.
class Pipeline {
 public:
  Pipeline(const Problem& p, const Grammar& g, const EvolveOptions& o, EvolveResult& r,
           const std::function<void(const EvolveProgress&)>& progress)
      : p_(p), g_(g), o_(o), r_(r), progress_(progress), meter_(o.clock), t0_(now_s(o.clock)) {
    classes_ = o.classes.empty() ? p.class_names() : o.classes;
    for (const auto& c : classes_) p.check_class(c);
    if (!o.work_dir.empty()) fs::create_directories(o.work_dir);
    vt_ = o.validate.timing;
    vt_.energy = vt_.energy || o.measure_energy || needs_energy(o.objective);
    vt_.race_checks = kValidateRaceChecks;
    to_ = o.tune;
    to_.objective = o.objective;
    to_.clock = o.clock;
  }
  double elapsed() const { return now_s(o_.clock) - t0_; }
  bool search(const EvaluatorFactory& make_evaluator);  // false: nothing found (r.refusal says so)
  void post(const EvaluatorFactory& make_evaluator);

 private:
  void report(const std::string& stage, int done, int total) {
    if (!progress_) return;
    EvolveProgress e;
    e.stage = stage;
    e.done = done;
    e.total = total;
    e.best_speedup = best_shown_;
    e.elapsed_s = elapsed();
    e.budget_s = o_.budget_s;
    progress_(e);
  }
  void save(const std::string& name, const Genome& x) const {
    if (!o_.work_dir.empty())
      write_text_atomic((fs::path(o_.work_dir) / name).string(), genome_file({{"kernel", p_.name()}}, format_genome(g_, x)));
  }
  bool limited() const { return o_.budget_s > 0; }
  // Validation of classes [from, end): estimated seconds x the margin (0: no budget).
  double reserve_s(std::size_t from) const;
  // Estimated seconds of one tune on class c: making its probe cases and compiling (setup), then
  // measuring a configuration on them (per configuration; the input's measurement is one).
  struct TuneWork {
    double setup_s = 0, per_config_s = 0, total_s = 0;
  };
  TuneWork tune_work(const std::string& c) const;
  // What is left of the budget after the validation of classes [from, end) is reserved.
  double left_s(std::size_t from) const { return o_.budget_s - elapsed() - reserve_s(from); }
  // The share of left_s(from) for a stage of estimated work `work`, when `rest` is the estimated
  // work of it and of every stage after it.
  double allot(double work, double rest, std::size_t from) const;
  // A stage's budget_s for MinimizeOptions/TuneOptions (0: none), or false: skipped (its record says why).
  bool stage_budget(const std::string& name, double share, double least, int total, double& budget_s);
  Genome tune_stage(const std::string& name, const Genome& x, const std::string& c, double rest, std::size_t from,
                    Evaluator& ev);
  void minimize_stage(const std::vector<CaseRef>& cases, Evaluator& ev);

  const Problem& p_;
  const Grammar& g_;
  const EvolveOptions& o_;
  EvolveResult& r_;
  const std::function<void(const EvolveProgress&)>& progress_;
  detail::CostMeter meter_;
  double t0_ = 0, best_shown_ = 0;
  std::vector<std::string> classes_;
  TimingSpec vt_;  // validation's timing
  TuneOptions to_;
};

double Pipeline::reserve_s(std::size_t from) const {
  if (!limited()) return 0;
  double s = 0;
  for (std::size_t i = from; i < classes_.size(); ++i)
    s += o_.cases * (meter_.case_s(classes_[i]) + 3 * meter_.run_s(classes_[i], vt_)) + meter_.compile_s();
  return s * o_.reserve_margin;
}

Pipeline::TuneWork Pipeline::tune_work(const std::string& c) const {
  const double n = tune_planned(g_, to_) + 1, nc = p_.probe_cases(c);
  TuneWork w;
  w.setup_s = nc * meter_.case_s(c) + meter_.compile_s();
  w.per_config_s = nc * meter_.run_s(c, to_.timing) + meter_.compile_s() / 32;
  w.total_s = w.setup_s + n * w.per_config_s + std::ceil(n / 32) * meter_.compile_s();
  return w;
}

double Pipeline::allot(double work, double rest, std::size_t from) const {
  const double left = left_s(from);
  if (left <= 0) return 0;
  return rest > 0 ? left * std::min(1.0, work / rest) : left;
}

bool Pipeline::stage_budget(const std::string& name, double share, double least, int total, double& budget_s) {
  budget_s = 0;
  if (!limited()) return true;
  if (share > 0 && share >= least) {
    budget_s = share;
    return true;
  }
  EvolveStage st;
  st.name = name;
  st.budget_s = share;
  st.total = total;
  st.budget_stopped = true;
  st.note = "skipped: " + fixed(std::max(0.0, share), 1) + " s of the budget left for it after the " +
            fixed(reserve_s(0), 1) + " s reserved for validation, and it needs about " + fixed(least, 1) + " s";
  r_.stages.push_back(st);
  report(name + ": skipped", 0, total);
  return false;
}

bool Pipeline::search(const EvaluatorFactory& make_evaluator) {
  auto inner = make_evaluator(true, 1);
  detail::MeteredEvaluator ev(*inner, meter_);
  const auto [pop, gens] = evolve_size(p_, o_, ev.lanes());
  r_.population = pop;
  SearchOptions so = o_.search;
  so.population = pop;
  so.generations = gens;
  so.seed = o_.seed;
  so.classes = classes_;
  so.budget_s = limited() ? o_.budget_s * o_.search_share : 0;
  so.clock = o_.clock;
  bool for_reserve = false;  // stopped so that validation's reserve still fits
  so.stop_before = [&](double generation_s) {
    for_reserve = limited() && elapsed() + generation_s + reserve_s(0) > o_.budget_s;
    return for_reserve;
  };
  so.problem = p_.name();
  so.resume = false;
  so.objective = o_.objective;
  so.run_dir = o_.work_dir.empty() ? "" : (fs::path(o_.work_dir) / "run").string();
  if (!so.run_dir.empty()) evolve_write_config(p_, ev, so, classes_, pop, gens, o_.seed);
  report("search", 0, gens);
  r_.search = run_search(g_, ev, so, [&](const GenerationStats& s, const SearchState&) {
    best_shown_ = s.best_so_far_speedup;
    report("search", s.generation + 1, gens);
  });
  for (const auto& h : r_.search.history) r_.search_wall_s += h.wall_s;
  r_.generations = static_cast<int>(r_.search.history.size());
  EvolveStage st{"search", so.budget_s, elapsed(), r_.generations, gens, r_.generations < gens, ""};
  if (st.budget_stopped)
    st.note = "the budget stopped the search after " + std::to_string(st.done) + " of " + std::to_string(gens) +
              " generations" + (for_reserve ? " (the next would have eaten into the time reserved for validation)" : "");
  r_.stages.push_back(st);
  if (!so.run_dir.empty()) write_report(so.run_dir);
  if (r_.search.best_genome.empty()) {
    r_.refusal = "the search found no correct variant";
    return false;
  }
  r_.best = parse_genome(g_, r_.search.best_genome, "best genome of the search");
  save("best.genome", r_.best);
  return true;
}

void Pipeline::minimize_stage(const std::vector<CaseRef>& cases, Evaluator& ev) {
  MinimizeOptions mo = o_.minimize;
  mo.cases = cases;
  mo.objective = o_.objective;
  mo.clock = o_.clock;
  const int genes = minimize_genes(g_, r_.best);
  double per_step = meter_.compile_s();  // one measurement of every case
  for (const auto& c : cases) per_step += meter_.run_s(c.size_class, mo.timing) + meter_.case_s(c.size_class) / mo.noise_samples;
  const double work = (mo.noise_samples + genes + 1) * per_step;
  double rest = work;
  for (const auto& c : classes_) rest += 2 * tune_work(c).total_s;
  r_.minimized = r_.best;
  const double t = elapsed();
  // minimize comes first: its whole estimate (with the margin), up to half of what is left, if
  // that is more than its share by work
  const double share = std::max(allot(work, rest, 0), std::min(work * o_.reserve_margin, left_s(0) / 2));
  if (!stage_budget("minimize", share, (mo.noise_samples + 2) * per_step, genes, mo.budget_s)) return;
  report("minimize", 0, genes);
  auto m = minimize(g_, ev, r_.best, mo, [&](int d, int n) { report("minimize", d, n); });
  r_.minimized = m.output;
  r_.stages.push_back({"minimize", mo.budget_s, elapsed() - t, m.tried, m.genes, m.budget_stopped,
                       m.budget_stopped ? m.log.back() : ""});
}

Genome Pipeline::tune_stage(const std::string& name, const Genome& x, const std::string& c, double rest,
                            std::size_t from, Evaluator& ev) {
  TuneOptions to = to_;
  to.cases = probe_cases({c}, {p_.probe_cases(c)}, o_.tune.case_seed);
  const TuneWork work = tune_work(c);
  const int planned = tune_planned(g_, to);
  const double t = elapsed();
  // at least the input's measurement and one configuration
  if (!stage_budget(name, allot(work.total_s, rest, from), work.setup_s + 2 * work.per_config_s, planned, to.budget_s))
    return x;
  const TuneResult tr = tune(g_, ev, x, to, [&](int d, int n) { report(name, d, n); });
  r_.stages.push_back({name, to.budget_s, elapsed() - t, static_cast<int>(tr.table.size()), tr.planned,
                       tr.budget_stopped, tr.note});
  return tr.output;
}

void Pipeline::post(const EvaluatorFactory& make_evaluator) {
  // minimize on one probe set covering every class, then per class: tune and validate
  std::vector<int> per_class;
  for (const auto& c : classes_) per_class.push_back(p_.probe_cases(c));
  const auto min_cases = probe_cases(classes_, per_class, o_.minimize.case_seed);
  int keep = static_cast<int>(min_cases.size());
  keep = std::min(32, std::max({keep, o_.cases > 0 ? 2 : 1}));
  auto inner = make_evaluator(false, keep);
  detail::MeteredEvaluator ev(*inner, meter_);
  best_shown_ = 0;
  r_.validation_reserve_s = reserve_s(0);
  minimize_stage(min_cases, ev);
  save("min.genome", r_.minimized);
  for (std::size_t i = 0; i < classes_.size(); ++i) {
    const std::string& c = classes_[i];
    EvolveClass ec;
    ec.size_class = c;
    double rest = 0;  // the tunes' work from here on
    for (std::size_t j = i; j < classes_.size(); ++j) rest += 2 * tune_work(classes_[j]).total_s;
    ec.pretuned = tune_stage("tune original (" + c + ")", empty_genome(g_), c, rest, i, ev);
    save("pretuned-" + c + ".genome", ec.pretuned);
    ec.evolved = tune_stage("tune evolved (" + c + ")", r_.minimized, c, rest - tune_work(c).total_s, i, ev);
    save("evolved-" + c + ".genome", ec.evolved);
    ValidateOptions vo = o_.validate;
    vo.cases = o_.cases;
    vo.size_class = c;
    vo.constraints = p_.constraints(ec.evolved.config);
    vo.timing.energy = vt_.energy;
    const double reserved = reserve_s(i) - reserve_s(i + 1), t = elapsed();
    ec.validation = validate(g_, ev, ec.evolved, &ec.pretuned, vo, [&](int d, int n) { report("validate (" + c + ")", d, n); });
    const double used = elapsed() - t;
    r_.stages.push_back({"validate (" + c + ")", reserved, used, o_.cases, o_.cases, false,
                         limited() && used > reserved
                             ? "took " + fixed(used, 1) + " s, " + fixed(reserved, 1) + " s were reserved for it"
                             : ""});
    ec.wins = class_wins(ec, o_.objective, o_.min_gain);
    if (ec.validation.blessed)
      best_shown_ = std::max(best_shown_, o_.objective == Objective::time || !(ec.validation.energy_ratio_pretuned_median > 0)
                                              ? ec.validation.speedup_pretuned_median
                                              : 1 / ec.validation.energy_ratio_pretuned_median);
    r_.classes.push_back(ec);
  }
  evolve_variants(p_, g_, r_);  // one variant per distinct tuned genome that won somewhere
  report("done", 1, 1);
}
}  // namespace

EvolveResult evolve(const Problem& p, const Grammar& g, const EvaluatorFactory& make_evaluator, const EvolveOptions& o,
                    const std::function<void(const EvolveProgress&)>& progress) {
  EvolveResult r;
  r.objective = o.objective;
  Pipeline pipe(p, g, o, r, progress);
  if (pipe.search(make_evaluator)) pipe.post(make_evaluator);
  r.elapsed_s = pipe.elapsed();
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
