#include "evk/gi/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <thread>
#include <nlohmann/json.hpp>
#include <sstream>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"

namespace evk::gi {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

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

// A time on lane 0's scale, rounded to 10 significant digits (CUDA-event times have ~7), so that
// equal times stay equal whichever lane measured them and selection does not depend on the lanes.
double lane_scale(double ms, double factor) {
  const double v = ms * factor;
  if (!(v > 0) || !std::isfinite(v)) return v;
  const double mag = std::pow(10.0, 9 - std::floor(std::log10(v)));
  return std::round(v * mag) / mag;
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

namespace {

class Search {
 public:
  Search(const Grammar& g, Evaluator& ev, const SearchOptions& o) : g_(g), ev_(ev), o_(o) {}

  SearchState run(const GenerationCallback& cb) {
    namespace fs = std::filesystem;
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
    const auto t_start = Clock::now();
    const int first_gen = s_.next_generation;
    for (int gen = s_.next_generation; gen < o_.generations; ++gen) {
      if (o_.budget_s > 0 && gen > first_gen) {  // stop before a generation that would overrun the budget
        const double el = since(t_start), mean = el / (gen - first_gen);
        if (el + mean > o_.budget_s) break;
      }
      GenerationStats st;
      st.generation = gen;
      auto t0 = Clock::now();
      int restarts0 = ev_.restarts();
      // breed
      std::vector<Genome> kids;
      if (gen == 0) {
        parents_.clear();
        while (static_cast<int>(kids.size()) < o_.population && fresh_into(kids, st, 200)) {
        }
        fill_from(kids, st);
      } else {
        kids = breed(st);
      }
      st.breed_s = since(t0);
      // case + reference (full repeats, no deadline), re-timed on every lane
      auto tref = Clock::now();
      st.case_seed = (o_.seed << 20) + static_cast<std::uint64_t>(gen);
      st.size_class = o_.classes.empty() ? "" : o_.classes[static_cast<std::size_t>(gen) % o_.classes.size()];
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
      st.ref_ticks = rr[0].ticks;
      st.ref_sms = rr[0].sms;
      st.reference_s = since(tref);
      // evaluate
      std::vector<Individual> pop = evaluate(kids, st);
      // statistics and selection
      std::vector<double> times;
      st.evaluated = static_cast<int>(pop.size());
      for (const auto& ind : pop) {
        if (ind.status != "compile_error" && ind.status != "illegal_config") ++st.compiled;
        if (ind.status == "crash") ++st.crashes;
        if (ind.status == "hang") ++st.hangs;
        if (!ind.correct()) continue;
        ++st.correct;
        times.push_back(ind.time_ms);
        if (ind.time_ms < st.ref_ms) ++st.faster;
        if (st.best_ms == 0 || ind.time_ms < st.best_ms) {
          st.best_ms = ind.time_ms;
          st.best_ticks = ind.ticks;
          st.best_genome = ind.text;
        }
      }
      if (!times.empty()) {
        std::sort(times.begin(), times.end());
        st.median_ms = times[times.size() / 2];
        st.best_speedup = st.ref_ms / st.best_ms;
        if (st.best_speedup > s_.best_speedup) {
          s_.best_speedup = st.best_speedup;
          s_.best_genome = st.best_genome;
          s_.best_ms = st.best_ms;
          s_.best_ref_ms = st.ref_ms;
        }
      }
      auto par = select_parents(pop, st.ref_ms, o_.tolerance, o_.population / 2);
      st.parents = static_cast<int>(par.size());
      st.restarts = ev_.restarts() - restarts0;
      st.wall_s = since(t0);
      st.best_so_far_speedup = s_.best_speedup;
      st.best_so_far_genome = s_.best_genome;
      s_.population = std::move(pop);
      s_.next_generation = gen + 1;
      s_.rng = rng_text(rng_);
      s_.history.push_back(st);
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

 private:
  static std::uint64_t config_hash(const Config& c) {
    std::string k;
    for (const auto& [a, b] : c) k += a + "=" + b + ";";
    return fnv1a64(k.data(), k.size()) * 31;
  }

  bool unique_push(std::vector<Genome>& out, Genome c, GenerationStats& st) {
    if (is_empty(g_, c)) return false;
    auto h = genome_hash(g_, c);
    if (s_.tabu_genotype.count(h)) {
      ++st.tabu_genotype;
      return false;
    }
    s_.tabu_genotype.insert(h);
    out.push_back(std::move(c));
    return true;
  }

  // a new child: mutation of a random parent, else a random single mutant
  bool fresh_into(std::vector<Genome>& out, GenerationStats& st, int tries) {
    Genome base = empty_genome(g_);
    for (int t = 0; t < tries; ++t) {
      const Genome& p = parents_.empty() ? base : parents_[std::uniform_int_distribution<std::size_t>(0, parents_.size() - 1)(rng_)];
      if (unique_push(out, mutate(g_, p, rng_), st)) return true;
    }
    return false;
  }

  // Small grammars run out of unique single mutants: fill up with mutants of the children so far.
  void fill_from(std::vector<Genome>& kids, GenerationStats& st) {
    for (int t = 0; t < 20 * o_.population && !kids.empty() && static_cast<int>(kids.size()) < o_.population; ++t) {
      Genome b = kids[std::uniform_int_distribution<std::size_t>(0, kids.size() - 1)(rng_)];
      unique_push(kids, mutate(g_, b, rng_), st);
    }
  }

  std::vector<Genome> breed(GenerationStats& st) {
    const auto& prev = s_.population;
    double ref = s_.history.empty() ? 0 : s_.history.back().ref_ms;
    auto idx = select_parents(prev, ref, o_.tolerance, o_.population / 2);
    parents_.clear();
    for (int i : idx) parents_.push_back(prev[i].genome);
    std::vector<Genome> kids;
    std::uniform_int_distribution<std::size_t> any(0, parents_.empty() ? 0 : parents_.size() - 1);
    for (const auto& p : parents_) {
      bool ok = false;
      for (int t = 0; t < 10 && !ok; ++t) ok = unique_push(kids, mutate(g_, p, rng_), st);
      ok = false;
      for (int t = 0; t < 5 && !ok; ++t) ok = unique_push(kids, crossover(p, parents_[any(rng_)], rng_), st);
      for (int t = 0; t < 10 && !ok; ++t) ok = unique_push(kids, mutate(g_, p, rng_), st);
    }
    std::vector<Genome> keep = parents_;
    parents_.clear();  // missing children: random single mutants
    while (static_cast<int>(kids.size()) < o_.population && fresh_into(kids, st, 200)) {
    }
    parents_ = keep;
    fill_from(kids, st);
    if (static_cast<int>(kids.size()) > o_.population) kids.resize(o_.population);
    return kids;
  }

  // Compiles and runs the children: NVRTC threads compile the whole round in the background while
  // this thread takes each candidate in order as soon as it is compiled (tabu checks, replacements)
  // and hands it to the lane runners: one thread per lane (GPU) runs candidates in the order handed
  // over. Tier-2 duplicates found after compiling are replaced and go through another round. Each
  // candidate's time is put on lane 0's scale through the reference re-timed on its own lane, so
  // selection compares candidates timed on different GPUs fairly.
  std::vector<Individual> evaluate(std::vector<Genome>& kids, GenerationStats& st) {
    std::size_t n = kids.size();
    std::vector<Individual> pop(n);
    std::vector<Variant> vars(n);
    std::vector<Compiled> comp(n);
    std::vector<std::size_t> pending(n);
    for (std::size_t i = 0; i < n; ++i) pending[i] = i;
    const int lanes = std::max(1, ev_.lanes());
    std::vector<double> lane_ref(static_cast<std::size_t>(lanes), st.ref_ms), limit(lane_ref.size());
    std::vector<TimingSpec> lane_ts(lane_ref.size(), o_.timing);
    for (std::size_t l = 0; l < lane_ref.size(); ++l) {
      if (l < st.lane_ref_ms.size() && st.lane_ref_ms[l] > 0) lane_ref[l] = st.lane_ref_ms[l];
      const double ref = lane_ref[l];
      limit[l] = o_.watchdog_min_s + o_.watchdog_factor * (1 + o_.timing.warmup + o_.timing.repeats) * ref / 1000.0;
      TimingSpec& ts = lane_ts[l];
      ts.min_repeats = std::max(1, std::min(o_.min_repeats, ts.repeats));
      ts.stop_spread = o_.stop_spread;
      ts.give_up_ms = o_.give_up_factor > 0 ? o_.give_up_factor * ref * (1 + o_.tolerance) : 0;
      ts.budget_ms = std::max(o_.deadline_min_ms, o_.deadline_factor * ref);
    }
    auto run_one = [&](std::size_t i, int lane) {
      const auto l = static_cast<std::size_t>(lane);
      RunResult r = ev_.run_on(lane, comp[i], vars[i].config, lane_ts[l], limit[l]);
      Individual& ind = pop[i];
      ind.lane = lane;
      ind.status = status_name(r.status);
      if (!r.ok()) {
        ind.summary = r.message;
        return;
      }
      ind.raw_ms = r.median_ms;
      ind.time_ms = lane_scale(r.median_ms, lane == 0 ? 1.0 : st.ref_ms / lane_ref[l]);
      ind.ticks = r.ticks;
      ind.sms = r.sms;
      ind.penalty = r.check.penalty;
      ind.fitness = ind.time_ms + r.check.penalty;
      ind.summary = r.check.summary;
    };
    // the lane runners
    struct Runners {
      std::mutex m;
      std::condition_variable work, idle;
      std::deque<std::size_t> queue;
      int busy = 0;
      bool stop = false;
      std::vector<double> run_s;
      std::vector<std::thread> threads;
      ~Runners() {
        {
          std::lock_guard<std::mutex> lk(m);
          stop = true;
          queue.clear();
        }
        work.notify_all();
        for (auto& t : threads) t.join();
      }
    } rs;
    rs.run_s.assign(lane_ref.size(), 0.0);
    for (int lane = 0; lane < lanes; ++lane)
      rs.threads.emplace_back([&, lane] {
        for (;;) {
          std::size_t i = 0;
          {
            std::unique_lock<std::mutex> lk(rs.m);
            rs.work.wait(lk, [&] { return rs.stop || !rs.queue.empty(); });
            if (rs.queue.empty()) return;
            i = rs.queue.front();
            rs.queue.pop_front();
            ++rs.busy;
          }
          const auto t = Clock::now();
          try {
            run_one(i, lane);
          } catch (const std::exception& e) {
            pop[i].status = "worker_error";
            pop[i].summary = e.what();
          }
          {
            std::lock_guard<std::mutex> lk(rs.m);
            rs.run_s[static_cast<std::size_t>(lane)] += since(t);
            --rs.busy;
          }
          rs.idle.notify_all();
        }
      });
    auto dispatch = [&](std::size_t i) {
      {
        std::lock_guard<std::mutex> lk(rs.m);
        rs.queue.push_back(i);
      }
      rs.work.notify_one();
    };
    auto drain = [&] {
      std::unique_lock<std::mutex> lk(rs.m);
      rs.idle.wait(lk, [&] { return rs.queue.empty() && rs.busy == 0; });
    };
    for (int round = 0; !pending.empty(); ++round) {
      bool last = round >= o_.tabu_rounds;
      std::vector<std::size_t> to_compile;
      for (std::size_t i : pending) {
        for (int t = 0;; ++t) {  // tier 1: preprocessed source
          vars[i] = apply(g_, kids[i]);
          std::vector<std::string> opts;
          try {
            opts = ev_.options(vars[i].config);
          } catch (const std::exception& e) {
            pop[i].status = "illegal_config";
            pop[i].summary = e.what();
            break;
          }
          opts.insert(opts.end(), vars[i].options.begin(), vars[i].options.end());
          auto h = phenotype_hash(vars[i], opts);
          if (!s_.tabu_phenotype.count(h) || t >= o_.tabu_rounds * 4) {
            s_.tabu_phenotype.insert(h);
            to_compile.push_back(i);
            break;
          }
          ++st.tabu_phenotype;
          std::vector<Genome> one;
          if (!fresh_into(one, st, 100)) {
            to_compile.push_back(i);
            break;
          }
          kids[i] = one[0];
        }
      }
      // All of the round's candidates go to the compile threads at once (in order, no barrier
      // between groups); this thread hands each one to the lane runners as soon as it and those
      // before it are compiled, so the GPUs work while NVRTC compiles the rest and no compile thread
      // waits for a group.
      std::vector<Variant> batch;
      for (std::size_t i : to_compile) batch.push_back(vars[i]);
      std::vector<char> ready(to_compile.size(), 0);
      std::mutex mu;
      std::condition_variable cv;
      bool compile_over = false;
      auto compiling = std::async(std::launch::async, [&] {
        const auto t = Clock::now();
        try {
          ev_.compile_stream(batch, [&](std::size_t k, Compiled&& c) {
            {
              std::lock_guard<std::mutex> lk(mu);
              comp[to_compile[k]] = std::move(c);
              ready[k] = 1;
            }
            cv.notify_all();
          });
        } catch (...) {
          {
            std::lock_guard<std::mutex> lk(mu);
            compile_over = true;
          }
          cv.notify_all();
          throw;
        }
        {
          std::lock_guard<std::mutex> lk(mu);
          compile_over = true;
        }
        cv.notify_all();
        return since(t);
      });
      std::vector<std::size_t> again;
      for (std::size_t k = 0; k < to_compile.size(); ++k) {
        const auto tw = Clock::now();
        bool have = false;
        {
          std::unique_lock<std::mutex> lk(mu);
          cv.wait(lk, [&] { return ready[k] || compile_over; });
          have = ready[k];
        }
        st.compile_wait_s += since(tw);
        if (!have) break;  // the compile failed as a whole: compiling.get() below rethrows
        std::size_t i = to_compile[k];
        st.compile_cpu_s += comp[i].seconds;
        if (comp[i].ok) {  // tier 2: compiled code (+ config, which sets the launch)
          auto h = comp[i].code_hash ^ config_hash(vars[i].config);
          if (s_.tabu_code.count(h) && !last) {
            ++st.tabu_code;
            std::vector<Genome> one;
            if (fresh_into(one, st, 100)) {
              kids[i] = one[0];
              again.push_back(i);
              continue;
            }
          }
          s_.tabu_code.insert(h);
          dispatch(i);
        } else {
          pop[i].status = "compile_error";
          pop[i].summary = comp[i].log.substr(0, 2000);
        }
      }
      drain();
      st.compile_s += compiling.get();
      pending = again;
    }
    for (double r : rs.run_s) st.run_s += r;
    for (std::size_t i = 0; i < n; ++i) {
      pop[i].genome = kids[i];
      pop[i].text = format_genome(g_, kids[i]);
    }
    return pop;
  }

  // candidates.jsonl and failures.log without the entries of generations >= gen (those of a
  // generation that was cut by a kill before its checkpoint, or written twice).
  void drop_logs_from(int gen) {
    namespace fs = std::filesystem;
    const fs::path dir(o_.run_dir);
    auto filter = [&](const fs::path& p, const std::function<int(const std::string&)>& gen_of) {
      std::ifstream in(p);
      if (!in) return;
      std::string keep, line;
      int current = -1;
      while (std::getline(in, line)) {
        const int g = gen_of(line);
        if (g >= 0) current = g;
        if (current >= 0 && current < gen) keep += line + "\n";
      }
      write_text_atomic(p.string(), keep);
    };
    filter(dir / "candidates.jsonl", [](const std::string& l) {
      try {
        return nlohmann::json::parse(l).value("generation", -1);
      } catch (const std::exception&) {
        return 1 << 30;  // a line cut by a kill: dropped
      }
    });
    filter(dir / "failures.log", [](const std::string& l) {
      if (l.rfind("gen ", 0) != 0) return -1;  // the indented summary line of the entry above
      try {
        return std::stoi(l.substr(4));
      } catch (const std::exception&) {
        return 1 << 30;
      }
    });
  }

  void write_failures(const GenerationStats& st) {
    {  // every candidate: CUDA-event time next to its per-SM clock ticks
      std::ofstream c(std::filesystem::path(o_.run_dir) / "candidates.jsonl", std::ios::app);
      for (const auto& ind : s_.population)
        c << nlohmann::json{{"generation", st.generation}, {"genome", ind.text}, {"status", ind.status},
                            {"time_ms", ind.time_ms}, {"raw_ms", ind.raw_ms}, {"lane", ind.lane}, {"ticks", ind.ticks},
                            {"sms", ind.sms}, {"penalty", ind.penalty}, {"size_class", st.size_class}}
                 .dump()
          << "\n";
    }
    std::ofstream f(std::filesystem::path(o_.run_dir) / "failures.log", std::ios::app);
    for (const auto& ind : s_.population)
      if (ind.status != "ok")
        f << "gen " << st.generation << " " << ind.status << " [" << ind.text << "]\n  " << ind.summary << "\n";
  }

  const Grammar& g_;
  Evaluator& ev_;
  SearchOptions o_;
  SearchState s_;
  Rng rng_;
  std::vector<Genome> parents_;
  std::vector<Compiled> ref_compiled_;
  Config ref_cfg_;
};

}  // namespace

SearchState run_search(const Grammar& g, Evaluator& ev, const SearchOptions& opt, const GenerationCallback& cb) {
  Search s(g, ev, opt);
  return s.run(cb);
}

}  // namespace evk::gi
