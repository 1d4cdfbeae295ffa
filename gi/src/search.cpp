// The generation loop of the GP search and parent selection (see search_engine.hpp for the rest).
#include "evk/gi/search.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <sstream>
#include <thread>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "search_engine.hpp"

namespace evk::gi {

namespace {
// Runs f(lane) for every lane, one thread per lane (inline for one lane); rethrows the first error.
void for_lanes(int lanes, const std::function<void(int)>& f) {
  if (lanes <= 1) {
    f(0);
    return;
  }
  std::vector<std::exception_ptr> err(static_cast<std::size_t>(lanes));
  std::vector<std::thread> ts;
  for (int l = 0; l < lanes; ++l)
    ts.emplace_back([&, l] {
      try {
        f(l);
      } catch (...) {
        err[static_cast<std::size_t>(l)] = std::current_exception();
      }
    });
  for (auto& t : ts) t.join();
  for (auto& e : err)
    if (e) std::rethrow_exception(e);
}

std::string rng_text(const Rng& r) {
  std::ostringstream o;
  o << r;
  return o.str();
}
}  // namespace

std::uint64_t phenotype_hash(const Variant& v, const std::vector<std::string>& options) {
  std::vector<std::string> rest;
  auto defs = defines_of(options, &rest);
  std::string key = preprocess(v.source, defs);
  key += "\n--options:";
  for (const auto& o : rest) key += " " + o;
  key += "\n--config:";
  for (const auto& [k, val] : v.config) key += " " + k + "=" + val;
  return fnv1a64(key.data(), key.size());
}

std::vector<int> select_parents(const std::vector<Individual>& pop, double ref_ms, double tolerance, int max_parents) {
  std::vector<int> ok;
  for (std::size_t i = 0; i < pop.size(); ++i)
    if (pop[i].correct() && pop[i].time_ms <= ref_ms * (1 + tolerance)) ok.push_back(static_cast<int>(i));
  std::stable_sort(ok.begin(), ok.end(), [&](int a, int b) { return pop[a].fitness < pop[b].fitness; });
  if (static_cast<int>(ok.size()) > max_parents) ok.resize(std::max(0, max_parents));
  return ok;
}

namespace detail {

std::uint64_t config_hash(const Config& c) {
  std::string k;
  for (const auto& [a, b] : c) k += a + "=" + b + ";";
  return fnv1a64(k.data(), k.size()) * 31;
}

void Search::start() {
  namespace fs = std::filesystem;
  if (needs_energy(o_.objective)) o_.timing.energy = true;
  if (!o_.run_dir.empty()) fs::create_directories(o_.run_dir);
  if (o_.resume) {
    s_ = load_checkpoint(o_.run_dir, g_);
    std::istringstream in(s_.rng);
    in >> rng_;
    if (!in) input_error((fs::path(o_.run_dir) / "checkpoint.json").string(), "damaged checkpoint: bad RNG state");
    drop_logs_from(s_.next_generation);
  } else {
    if (!o_.run_dir.empty()) drop_logs_from(0);  // of a run killed before its first checkpoint
    rng_.seed(o_.seed);
    s_.tabu_genotype.insert(genome_hash(g_, empty_genome(g_)));
  }
  s_.device = ev_.device();
  // the reference: the original kernel (with loop guards), default config
  Variant ref = apply(g_, empty_genome(g_));
  ref_compiled_ = ev_.compile({ref});
  if (!ref_compiled_[0].ok) throw std::runtime_error("the original kernel does not compile: " + ref_compiled_[0].log);
  ref_cfg_ = ref.config;
  if (!o_.resume) {
    try {
      s_.tabu_phenotype.insert(phenotype_hash(ref, ev_.options(ref.config)));
    } catch (const std::exception&) {
    }
    s_.tabu_code.insert(ref_compiled_[0].code_hash ^ config_hash(ref.config));
  }
}

SearchState Search::run(const GenerationCallback& cb) {
  start();
  const double t_start = now_s(o_.clock);
  const int first_gen = s_.next_generation;
  for (int gen = s_.next_generation; gen < o_.generations; ++gen) {
    if (gen > first_gen) {  // stop before a generation that would overrun the budget
      const double el = now_s(o_.clock) - t_start, mean = el / (gen - first_gen);
      if (o_.budget_s > 0 && el + mean > o_.budget_s) break;
      if (o_.stop_before && o_.stop_before(mean)) break;
    }
    const GenerationStats st = generation(gen);
    if (!o_.run_dir.empty()) {
      // the per-candidate logs first: after a kill anywhere here, the resumed run drops what
      // they hold of generations its checkpoint does not have (drop_logs_from), so they list
      // every generation exactly once
      write_failures(st);
      save_checkpoint(o_.run_dir, s_);
      write_generation_logs(o_.run_dir, s_.history);
    }
    if (cb) cb(st, s_);
  }
  return s_;
}

GenerationStats Search::generation(int gen) {
  GenerationStats st;
  st.generation = gen;
  auto t0 = Clock::now();
  int restarts0 = ev_.restarts();
  std::vector<Genome> kids = gen == 0 ? first_generation(st) : breed(st);
  st.breed_s = since(t0);
  time_reference(st);
  std::vector<Individual> pop = evaluate(kids, st);
  score(st, pop);
  auto par = select_parents(pop, st.ref_ms, o_.tolerance, o_.population / 2);
  st.parents = static_cast<int>(par.size());
  st.restarts = ev_.restarts() - restarts0;
  st.wall_s = since(t0);
  st.best_so_far_speedup = s_.best_speedup;
  st.best_so_far_gain = s_.best_gain;
  st.best_so_far_genome = s_.best_genome;
  s_.population = std::move(pop);
  s_.next_generation = gen + 1;
  s_.rng = rng_text(rng_);
  s_.history.push_back(st);
  return st;
}

// The generation's training case and the reference on it (full repeats, no deadline), re-timed on
// every lane.
void Search::time_reference(GenerationStats& st) {
  auto tref = Clock::now();
  st.case_seed = (o_.seed << 20) + static_cast<std::uint64_t>(st.generation);
  st.size_class = o_.classes.empty() ? "" : o_.classes[static_cast<std::size_t>(st.generation) % o_.classes.size()];
  const CaseInfo ci = ev_.set_case(st.case_seed, false, st.size_class);
  st.case_describe = ci.describe;
  if (st.size_class.empty()) st.size_class = ci.size_class;
  TimingSpec rt = o_.timing;
  rt.min_repeats = rt.repeats;
  rt.stop_spread = rt.give_up_ms = rt.budget_ms = 0;
  const int lanes = std::max(1, ev_.lanes());
  std::vector<RunResult> rr(static_cast<std::size_t>(lanes));
  for_lanes(lanes, [&](int l) { rr[static_cast<std::size_t>(l)] = ev_.run_on(l, ref_compiled_[0], ref_cfg_, rt, 120); });
  for (int l = 0; l < lanes; ++l) {
    const RunResult& r = rr[static_cast<std::size_t>(l)];
    if (!r.ok() || r.check.penalty > 0)
      throw std::runtime_error("the original kernel failed on training case " + std::to_string(st.case_seed) +
                               (lanes > 1 ? " on lane " + std::to_string(l) : std::string()) + ": " +
                               (r.ok() ? r.check.summary : r.message));
    st.lane_ref_ms.push_back(r.median_ms);
  }
  st.ref_ms = rr[0].median_ms;
  st.objective = objective_name(o_.objective);
  if (rt.energy) {  // the reference's joules on every lane: the scale of the candidates' (and needed)
    for (int l = 0; l < lanes; ++l) {
      const RunResult& r = rr[static_cast<std::size_t>(l)];
      if (!(r.joules > 0))
        throw std::runtime_error("the original kernel's energy could not be measured on training case " +
                                 std::to_string(st.case_seed) +
                                 (lanes > 1 ? " on lane " + std::to_string(l) : std::string()) + ": " + r.energy_note);
      st.lane_ref_j.push_back(r.joules);
    }
    st.ref_j = rr[0].joules;
  }
  st.ref_ticks = rr[0].ticks;
  st.ref_sms = rr[0].sms;
  st.reference_s = since(tref);
}

void Search::score(GenerationStats& st, const std::vector<Individual>& pop) {
  std::vector<double> times;
  st.evaluated = static_cast<int>(pop.size());
  double best_fitness = 0;  // the best is the correct candidate of the lowest fitness (time: time_ms)
  for (const auto& ind : pop) {
    if (ind.status != "compile_error" && ind.status != "illegal_config") ++st.compiled;
    if (ind.status == "crash") ++st.crashes;
    if (ind.status == "hang") ++st.hangs;
    if (!ind.correct()) continue;
    ++st.correct;
    times.push_back(ind.time_ms);
    if (ind.time_ms < st.ref_ms) ++st.faster;
    if (!std::isfinite(ind.fitness)) continue;  // energy not measured (a candidate too slow to be a parent)
    if (st.best_ms == 0 || ind.fitness < best_fitness) {
      best_fitness = ind.fitness;
      st.best_ms = ind.time_ms;
      st.best_j = ind.joules;
      st.best_ticks = ind.ticks;
      st.best_genome = ind.text;
    }
  }
  if (times.empty()) return;
  std::sort(times.begin(), times.end());
  st.median_ms = times[times.size() / 2];
  if (st.best_ms == 0) return;
  st.best_speedup = st.ref_ms / st.best_ms;
  st.best_gain = o_.objective == Objective::time
                     ? st.best_speedup
                     : objective_value(o_.objective, st.ref_ms, st.ref_j) / best_fitness;
  if (st.best_gain > s_.best_gain) {
    s_.best_gain = st.best_gain;
    s_.best_speedup = st.best_speedup;
    s_.best_genome = st.best_genome;
    s_.best_ms = st.best_ms;
    s_.best_ref_ms = st.ref_ms;
    s_.best_j = st.best_j;
    s_.best_ref_j = st.ref_j;
  }
}

}  // namespace detail

SearchState run_search(const Grammar& g, Evaluator& ev, const SearchOptions& opt, const GenerationCallback& cb) {
  detail::Search s(g, ev, opt);
  return s.run(cb);
}

}  // namespace evk::gi
