// `gi run`: the search, into a run directory (--resume continues one).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/evolve.hpp"
#include "evk/gi/search.hpp"
#include "evk/progress.hpp"
#include "shared.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace evk::gi::cli {

namespace {

struct RunOpts {
  int pop = 0, gens = 0, device = 0, threads = 0;
  bool ticks = false, deadline = false;
  std::uint64_t seed = 1;
  double tolerance = 0.10;
  std::string out, resume, cls, devices;
  bool json = false;
  int repeats = 7;
  std::string objective = "time";
  bool objective_given = false, window_given = false;
  double energy_window = 200;
};

// Per-generation progress: a redrawn line on a TTY, one line per generation otherwise.
class GenProgress {
 public:
  explicit GenProgress(int total) : total_(total), tty_(::isatty(2) != 0), t0_(std::chrono::steady_clock::now()) {}
  void update(const GenerationStats& s, int first) {
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    int done = s.generation + 1 - first;
    double eta = done > 0 ? el / done * (total_ - s.generation - 1) : 0;
    char buf[320];
    char best[96];  // time: the speed-up; energy, edp: the gain in the objective
    if (s.objective == "time") std::snprintf(best, sizeof best, "best speed-up %.3fx", s.best_so_far_speedup);
    else std::snprintf(best, sizeof best, "best %s gain %.3fx", s.objective.c_str(), s.best_so_far_gain);
    std::snprintf(buf, sizeof buf, "gi run: generation %d/%d%s%s  %s  correct %d/%d  compile %.1fs run %.1fs  ETA %s",
                  s.generation + 1, total_, s.size_class.empty() ? "" : " class ", s.size_class.c_str(), best,
                  s.correct, s.evaluated, s.compile_s, s.run_s, Progress::format_duration(eta).c_str());
    if (tty_) std::fprintf(stderr, "\r\033[K%s", buf);
    else std::fprintf(stderr, "%s\n", buf);
    std::fflush(stderr);
  }
  ~GenProgress() {
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  int total_;
  bool tty_;
  std::chrono::steady_clock::time_point t0_;
};

// The search options of a new run or of the run being resumed (every file of its directory checked
// before anything is started or written). Sets `dir`, `first` (the next generation) and `created`
// (a new directory, removed again when the run fails before its first checkpoint).
SearchOptions plan_run(const RunOpts& o, const Problem& p, const Grammar& g, std::string& dir, int& first, bool& created) {
  SearchOptions so;
  so.problem = p.name();
  so.timing.repeats = o.repeats;
  if (!o.resume.empty()) {
    dir = o.resume;
    if (!o.out.empty()) input_error("--out", "cannot be combined with --resume");
    if (!o.cls.empty()) input_error("--class", "cannot be changed on --resume (the run's classes are kept)");
    if (!fs::exists(fs::path(dir) / "checkpoint.json")) input_error(dir, "no checkpoint.json to resume from");
    const RunConfig cfg = read_run_config(dir, p, o.repeats);
    // a resumed run keeps what it was searched for: fitnesses of two objectives do not compare
    if (o.objective_given && parse_objective(o.objective) != cfg.objective)
      input_error("--objective", std::string("the run in ") + dir + " was searched for " + objective_name(cfg.objective) +
                                     "; --resume keeps a run's objective (got " + o.objective + ")");
    if (o.window_given && o.energy_window != cfg.energy_window_ms)
      input_error("--energy-window", "cannot be changed on --resume (the run's is kept)");
    so.objective = cfg.objective;
    so.timing.energy_window_ms = cfg.energy_window_ms;
    so.population = cfg.population;
    so.generations = o.gens > 0 ? o.gens : cfg.generations;
    so.seed = cfg.seed;
    so.tolerance = cfg.tolerance;
    so.timing.repeats = cfg.repeats;
    so.classes = cfg.classes;
    first = load_run(dir, g).next_generation;
    so.resume = true;
  } else {
    so.population = o.pop > 0 ? o.pop : p.default_population();
    so.generations = o.gens > 0 ? o.gens : p.default_generations();
    so.seed = o.seed;
    so.tolerance = o.tolerance;
    so.classes = classes_of(p, o.cls);
    so.objective = parse_objective(o.objective);
    so.timing.energy_window_ms = o.energy_window;
    dir = o.out.empty() ? default_dir("gi-run", p) : o.out;
    if (fs::exists(fs::path(dir) / "checkpoint.json")) input_error(dir, "already holds a run; use --resume " + dir);
    std::error_code ec;
    created = !fs::exists(dir);
    fs::create_directories(dir, ec);
    if (ec) input_error(dir, "cannot create the run directory: " + ec.message());
  }
  so.run_dir = dir;
  return so;
}

void write_best(const std::string& dir, const Problem& p, const DeviceSummary& d, const SearchOptions& so,
                const SearchState& st) {
  char sp[32];
  std::snprintf(sp, sizeof sp, "%.4f", st.best_speedup);
  std::vector<std::pair<std::string, std::string>> h = {
      {"kernel", p.name()}, {"cc", format_cc(d.cc)}, {"device", d.name}, {"id", "gi-seed" + std::to_string(so.seed)},
      {"seed", std::to_string(so.seed)}, {"population", std::to_string(so.population)},
      {"generations", std::to_string(so.generations)}, {"trained_on", join(so.classes)}, {"speedup_training", sp}};
  if (so.objective != Objective::time) {  // what it was searched for, and its gain in that
    char gain[32];
    std::snprintf(gain, sizeof gain, "%.4f", st.best_gain);
    h.emplace_back("objective", objective_name(so.objective));
    h.emplace_back(std::string(objective_name(so.objective)) + "_gain_training", gain);
  }
  h.insert(h.end(), {{"driver", d.driver}, {"cuda", d.cuda}, {"nvrtc", nvrtc_version()}, {"date", utc_now()},
                     {"source", "gi run " + dir}});
  write_text_atomic((fs::path(dir) / "best.genome").string(), genome_file(h, st.best_genome));
}

void print_summary(bool as_json, const std::string& dir, const DeviceSummary& d, const std::vector<int>& devices,
                   const SearchOptions& so, const SearchState& st) {
  double comp = 0, run = 0, wall = 0;
  int evaluated = 0, compiled = 0;
  for (const auto& h : st.history) {
    comp += h.compile_s;
    run += h.run_s;
    wall += h.wall_s;
    evaluated += h.evaluated;
    compiled += h.compiled;
  }
  if (as_json) {
    json j{{"run_dir", dir}, {"device", d.name}, {"devices", devices}, {"classes", so.classes},
           {"best_genome", st.best_genome}, {"best_speedup", st.best_speedup},
           {"generations", st.history.size()}, {"evaluated", evaluated}, {"compiled", compiled},
           {"compile_s", comp}, {"run_s", run}, {"wall_s", wall},
           {"candidates_per_s", wall > 0 ? evaluated / wall : 0}, {"objective", objective_name(so.objective)}};
    if (so.objective != Objective::time) {
      j["best_gain"] = st.best_gain;
      j["best_j"] = st.best_j;
      j["best_ref_j"] = st.best_ref_j;
    }
    std::cout << j.dump(2) << "\n";
  } else {
    if (so.objective != Objective::time)
      std::printf("objective: %s; best %s gain (training): %.3fx (%.4g J per launch, the original %.4g J)\n",
                  objective_name(so.objective), objective_name(so.objective), st.best_gain, st.best_j, st.best_ref_j);
    std::printf("run directory: %s\nbest speed-up (training): %.3fx\nbest genome: %s\nevaluated %d (%d compiled) in %.1f s "
                "on %zu GPU(s): compile %.1f s, run %.1f s\n",
                dir.c_str(), st.best_speedup, st.best_genome.c_str(), evaluated, compiled, wall, devices.size(), comp, run);
  }
}

void run_command(const Context& ctx, const RunOpts& o, bool device_given) {
  auto p = ctx.problem();
  Grammar g = make_grammar(*p);
  if (!o.devices.empty() && device_given) input_error("--devices", "cannot be combined with --device");
  std::string dir;
  int first = 0;
  bool created = false;
  const SearchOptions so = plan_run(o, *p, g, dir, first, created);
  // a run that fails before its first checkpoint leaves no directory behind
  struct Cleanup {
    std::string dir;
    bool armed;
    ~Cleanup() {
      std::error_code ec;
      if (armed && !fs::exists(fs::path(dir) / "checkpoint.json")) fs::remove_all(dir, ec);
    }
  } cleanup{dir, created};
  require_energy_counter(so.objective, o.devices, o.device);
  GpuEvaluatorOptions eo;
  eo.compile_threads = o.threads;
  eo.ticks = o.ticks;
  eo.deadline = o.deadline;
  Evaluators es = make_evaluators(ctx, *p, o.devices, o.device, (fs::path(dir) / "worker.log").string(), eo);
  Evaluator& ev = *es.ev;
  DeviceSummary d = ev.device();
  json cfg{{"problem", p->name()}, {"entry", p->kernel_entry()}, {"population", so.population},
           {"generations", so.generations}, {"seed", so.seed}, {"tolerance", so.tolerance},
           {"repeats", so.timing.repeats}, {"warmup", so.timing.warmup}, {"device", d.name}, {"cc", d.cc},
           {"driver", d.driver}, {"cuda", d.cuda}, {"device_index", es.devices.front()}, {"devices", es.devices},
           {"classes", so.classes}, {"nvrtc", nvrtc_version()}, {"started", utc_now()},
           {"grammar_rules", g.rules.size()}, {"objective", objective_name(so.objective)}};
  if (so.timing.energy_window_ms != 200 || so.objective != Objective::time) cfg["energy_window_ms"] = so.timing.energy_window_ms;
  write_text_atomic((fs::path(dir) / "config.json").string(), cfg.dump(2) + "\n");
  GenProgress prog(so.generations);
  SearchState st = run_search(g, ev, so, [&](const GenerationStats& s, const SearchState&) { prog.update(s, first); });
  write_best(dir, *p, d, so, st);
  write_report(dir);
  print_summary(o.json, dir, d, es.devices, so, st);
}

}  // namespace

void add_run(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("run", "Evolve the kernel on this GPU (writes a run directory; --resume continues one)");
  auto o = std::make_shared<RunOpts>();
  c->add_option("--pop", o->pop, "Population size (default: the app's paper)")->check(CLI::Range(2, 100000));
  c->add_option("--generations", o->gens, "Generations (default: the app's paper)")->check(CLI::Range(1, 100000));
  c->add_option("--seed", o->seed, "Random seed (also picks the training cases)");
  c->add_option("--tolerance", o->tolerance, "A parent may be this much slower than the original")->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  c->add_option("--out", o->out, "Run directory (default: gi-run-<app>-<date>)");
  c->add_option("--resume", o->resume, "Continue the run in this directory after its last checkpoint");
  c->add_option("--class", o->cls, "Train on this size class only (default: generations cycle through every class)");
  c->add_option("--device", o->device, "CUDA device index")->capture_default_str();
  c->add_option("--devices", o->devices,
                "Evaluate on several GPUs of one kind: 'all' or indices like 0,1 (one worker per GPU; each "
                "candidate's time is scaled by the original re-timed on its GPU)");
  c->add_option("--threads", o->threads, "NVRTC compile threads (default: all cores)");
  c->add_flag("--deadline", o->deadline,
              "Loop guards also stop at a time deadline (cheaper hangs, but the check can keep short loops from "
              "being unrolled, which distorts fitness: see docs/GI.md)");
  c->add_flag("--ticks", o->ticks,
              "Also record per-SM clock ticks (the papers' timing; instruments every candidate, which slows short kernels)");
  c->add_option("--repeats", o->repeats, "Timed repeats per candidate (median)")->capture_default_str()->check(CLI::Range(1, 1000));
  c->add_option("--objective", o->objective,
                "What the search minimises: time (median ms), energy (joules per launch, from the GPU's energy "
                "counter) or edp (joules x ms); energy and edp need the counter (NVML, Volta or newer)")
      ->capture_default_str();
  c->add_option("--energy-window", o->energy_window,
                "energy, edp: milliseconds of back-to-back launches per candidate for the energy counter (at least "
                "2 counter changes too)")
      ->capture_default_str()->check(CLI::Range(1.0, 60000.0));
  c->add_flag("--json", o->json, "Print the summary as JSON");
  c->callback([=] {
    o->objective_given = c->count("--objective") > 0;
    o->window_given = c->count("--energy-window") > 0;
    run_command(*ctx, *o, c->count("--device") > 0);
  });
}

}  // namespace evk::gi::cli
