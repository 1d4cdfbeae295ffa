// The `gi` subcommand shared by the three tools. Parsing and printing only; the work is in the library.
#include "evk/gi/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "evk/atomic_file.hpp"
#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/dispatch.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gi/evolve.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/grammar.hpp"
#include "evk/gi/post.hpp"
#include "json_int.hpp"
#include "evk/gi/search.hpp"
#include "evk/progress.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace evk::gi {

namespace {

using MakeProblem = std::function<std::unique_ptr<Problem>()>;

std::string text_trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::string read_genome_arg(const std::string& path) {
  if (path == "-") {
    std::ostringstream s;
    s << std::cin.rdbuf();
    return s.str();
  }
  if (!fs::exists(path)) input_error(path, "no such genome file");
  return read_text(path);
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  AtomicOutput out(path);
  {
    std::ofstream f(out.temp_path(), std::ios::binary);
    f << text;
    if (!f) input_error(path, "write failed");
  }
  out.commit();
}

std::string now_text() { return utc_now(); }

std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

// The genome file of a `gi minimize` / `gi tune` result (docs/FORMATS.md header with provenance),
// written to `out`, or to stdout unless the result goes there as JSON.
void write_result_genome(const Problem& p, const DeviceSummary& d, const std::string& source, const std::string& genome,
                         const std::string& out, bool json_out, const std::vector<std::string>& classes = {}) {
  std::vector<std::pair<std::string, std::string>> h = {{"kernel", p.name()}, {"cc", cc_text(d.cc)}, {"device", d.name},
                                                        {"driver", d.driver}, {"cuda", d.cuda}, {"nvrtc", nvrtc_version()},
                                                        {"source", source}, {"date", now_text()}};
  if (!classes.empty()) {
    std::string t;
    for (const auto& c : classes) t += (t.empty() ? "" : ", ") + c;
    h.emplace_back("measured_on", t);  // the size classes minimize/tune measured on
  }
  if (!out.empty() || !json_out) write_output(out, genome_file(h, genome));
}

// `command`: the tool's GI subcommand ("gi", or another one for a second kernel of the tool).
Worker::Options worker_options(const std::string& command, int device, const std::string& log, int keep_cases = 1) {
  Worker::Options o;
  o.argv = {"/proc/self/exe", command, "worker", "--device", std::to_string(device)};
  o.stderr_path = log;
  o.keep_cases = std::max(1, keep_cases);
  return o;
}

// --devices: "all" or a comma-separated list of CUDA device indices.
std::vector<int> parse_devices(const std::string& spec) {
  std::vector<int> d;
  if (spec == "all") return d;  // filled in from the first worker's device count
  std::string tok;
  std::istringstream in(spec);
  while (std::getline(in, tok, ',')) {
    tok = text_trim(tok);
    if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos)
      input_error("--devices", "'" + spec + "' is not 'all' or a list of device indices like 0,1");
    const int v = std::stoi(tok);
    if (std::find(d.begin(), d.end(), v) != d.end()) input_error("--devices", "device " + tok + " given twice");
    d.push_back(v);
  }
  if (d.empty()) input_error("--devices", "no device given");
  return d;
}

// The evaluator for `devices` (one lane per GPU, same kind only) or, when empty, the single `device`.
// Worker logs go to log (lane 0) and log.<index> (other lanes); "" discards them.
struct Evaluators {
  std::unique_ptr<Evaluator> ev;
  std::vector<int> devices;
};
Evaluators make_evaluators(const std::string& command, const Problem& p, const std::string& devices_spec, int device, const std::string& log,
                           const GpuEvaluatorOptions& eo, int keep_cases = 1) {
  Evaluators r;
  if (devices_spec.empty()) {
    r.devices = {device};
    r.ev = make_gpu_evaluator(p, std::make_unique<Worker>(worker_options(command, device, log, keep_cases)), eo);
    return r;
  }
  r.devices = parse_devices(devices_spec);
  std::vector<std::unique_ptr<Evaluator>> lanes;
  if (r.devices.empty()) {  // all: ask the first worker how many devices it sees
    auto w0 = std::make_unique<Worker>(worker_options(command, 0, log, keep_cases));
    const int n = w0->device().count;
    lanes.push_back(make_gpu_evaluator(p, std::move(w0), eo));
    for (int i = 0; i < std::max(1, n); ++i) r.devices.push_back(i);
  }
  for (std::size_t k = lanes.size(); k < r.devices.size(); ++k) {
    const int d = r.devices[k];
    const std::string l = log.empty() || k == 0 ? log : log + "." + std::to_string(d);
    lanes.push_back(make_gpu_evaluator(p, std::make_unique<Worker>(worker_options(command, d, l, keep_cases)), eo));
  }
  if (lanes.size() == 1) {
    r.ev = std::move(lanes[0]);
  } else {
    r.ev = make_lane_evaluator(std::move(lanes));
    r.ev->device();  // refuses mixed kinds of GPU before any work
  }
  return r;
}

// --class NAME (checked) or every size class.
std::vector<std::string> classes_of(const Problem& p, const std::string& cls) {
  if (cls.empty()) return p.class_names();
  p.check_class(cls);
  return {cls};
}

// The probe cases (minimize/tune) of `classes`, from `seed`.
std::vector<CaseRef> probes_of(const Problem& p, const std::vector<std::string>& classes, std::uint64_t seed) {
  std::vector<int> n;
  for (const auto& c : classes) n.push_back(p.probe_cases(c));
  return probe_cases(classes, n, seed);
}

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string t;
  for (const auto& x : v) t += (t.empty() ? "" : sep) + x;
  return t;
}

// Per-generation progress: a redrawn line on a TTY, one line per generation otherwise.
class GenProgress {
 public:
  explicit GenProgress(int total) : total_(total), tty_(::isatty(2) != 0), t0_(std::chrono::steady_clock::now()) {}
  void update(const GenerationStats& s, int first) {
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    int done = s.generation + 1 - first;
    double eta = done > 0 ? el / done * (total_ - s.generation - 1) : 0;
    char buf[320];
    std::snprintf(buf, sizeof buf, "gi run: generation %d/%d%s%s  best speed-up %.3fx  correct %d/%d  compile %.1fs run %.1fs  ETA %s",
                  s.generation + 1, total_, s.size_class.empty() ? "" : " class ", s.size_class.c_str(),
                  s.best_so_far_speedup, s.correct, s.evaluated, s.compile_s, s.run_s,
                  Progress::format_duration(eta).c_str());
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

void step_progress(bool tty, const char* what, int done, int total) {
  if (tty) std::fprintf(stderr, "\r\033[K%s %d/%d", what, done, total);
  if (tty && done == total) std::fprintf(stderr, "\n");
}

}  // namespace

void add_gi_command(CLI::App& app, MakeProblem make_problem, std::function<evk::Registry()> make_registry,
                    const std::string& command, const std::string& description) {
  auto* gi = app.add_subcommand(command, description.empty() ? "Genetic improvement: re-evolve this tool's kernel for your GPU"
                                                             : description);
  gi->require_subcommand(1);

  // ---- grammar
  {
    auto* c = gi->add_subcommand("grammar", "Print the kernel's BNF grammar (the papers' notation) with counts per rule type");
    auto json_out = std::make_shared<bool>(false);
    auto scopes = std::make_shared<bool>(false);
    c->add_flag("--json", *json_out, "Counts and rules as JSON");
    c->add_flag("--scopes", *scopes, "Also list, for every variable rule, the rules it may be copied to");
    c->callback([=] {
      auto p = make_problem();
      Grammar g = make_grammar(*p);
      if (*json_out) {
        json j;
        j["kernel"] = p->name();
        j["entry"] = g.entry;
        j["counts"] = rule_counts(g);
        j["rules"] = json::array();
        for (const auto& r : g.rules) {
          json rj{{"name", r.name}, {"type", rule_type_name(r.type)}, {"line", r.line}, {"text", r.text}};
          if (*scopes) {
            rj["targets"] = json::array();
            for (int t : r.targets) rj["targets"].push_back(g.rules[t].name);
          }
          j["rules"].push_back(rj);
        }
        std::cout << j.dump(2) << "\n";
        return;
      }
      std::cout << print_bnf(g, p->name() + ".cu");
      if (*scopes) {
        std::cout << "# scopes: rule -> rules it may be copied to\n";
        for (const auto& r : g.rules) {
          if (r.targets.empty()) continue;
          std::cout << "# <" << r.name << "> ->";
          for (int t : r.targets) std::cout << " <" << g.rules[t].name << ">";
          std::cout << "\n";
        }
      }
    });
  }

  // ---- classes
  {
    auto* c = gi->add_subcommand("classes", "List the size classes of this tool's cases (for --class)");
    auto json_out = std::make_shared<bool>(false);
    c->add_flag("--json", *json_out, "As JSON, with each class's probe cases and the request properties");
    c->callback([=] {
      auto p = make_problem();
      if (*json_out) {
        json a = json::array();
        for (const auto& k : p->size_classes())
          a.push_back({{"name", k.name}, {"describe", k.describe}, {"probe_cases", p->probe_cases(k.name)}});
        std::cout << json{{"kernel", p->name()}, {"classes", a}, {"properties", p->property_names()}}.dump(2) << "\n";
        return;
      }
      for (const auto& k : p->size_classes()) std::printf("%-12s %s\n", k.name.c_str(), k.describe.c_str());
    });
  }

  // ---- apply
  {
    auto* c = gi->add_subcommand("apply", "Write the source a person reads: the original plus the genome's edits and the loop guards they need");
    auto genome = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto json_out = std::make_shared<bool>(false);
    auto searched = std::make_shared<bool>(false);
    c->add_option("GENOME", *genome, "Genome file (docs/FORMATS.md), or - for stdin")->required();
    c->add_flag("--as-searched", *searched,
                "Write the source as the search compiles it (engine prelude and loop guards), also for the empty genome");
    c->add_option("-o,--output", *out, "Output kernel .cu (default: stdout)");
    c->add_flag("--json", *json_out, "Print the config and compile options as JSON (needs -o)");
    c->callback([=] {
      auto p = make_problem();
      std::string text = read_genome_arg(*genome);
      Variant v;
      try {
        if (*searched) {
          Grammar g = make_grammar(*p);
          v = apply(g, parse_genome(g, text));
        } else {
          v = apply_genome(*p, text);
        }
      } catch (const InputError& e) {
        throw InputError(*genome + ": " + e.what());
      }
      if (*json_out && out->empty()) input_error("--json", "needs -o (the source goes to stdout otherwise)");
      write_output(*out, v.source);
      if (*json_out) std::cout << json{{"output", *out}, {"config", v.config}, {"options", [&] {
                                  auto o = p->compile_options(v.config);
                                  o.insert(o.end(), v.options.begin(), v.options.end());
                                  return o;
                                }()}}.dump(2) << "\n";
    });
  }

  // ---- run
  {
    auto* c = gi->add_subcommand("run", "Evolve the kernel on this GPU (writes a run directory; --resume continues one)");
    struct Opts {
      int pop = 0, gens = 0, device = 0, threads = 0;
      bool ticks = false, deadline = false;
      std::uint64_t seed = 1;
      double tolerance = 0.10;
      std::string out, resume, cls, devices;
      bool json = false;
      int repeats = 7;
    };
    auto o = std::make_shared<Opts>();
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
    c->add_flag("--json", o->json, "Print the summary as JSON");
    c->callback([=] {
      auto p = make_problem();
      Grammar g = make_grammar(*p);
      SearchOptions so;
      so.problem = p->name();
      so.timing.repeats = o->repeats;
      std::string dir, devices = o->devices;
      if (!devices.empty() && c->count("--device")) input_error("--devices", "cannot be combined with --device");
      bool created = false;
      int first = 0;
      if (!o->resume.empty()) {
        dir = o->resume;
        if (!o->out.empty()) input_error("--out", "cannot be combined with --resume");
        if (!o->cls.empty()) input_error("--class", "cannot be changed on --resume (the run's classes are kept)");
        if (!fs::exists(fs::path(dir) / "checkpoint.json")) input_error(dir, "no checkpoint.json to resume from");
        // every file of the run directory is checked before anything is started or written
        const RunConfig cfg = read_run_config(dir, *p, o->repeats);
        so.population = cfg.population;
        so.generations = o->gens > 0 ? o->gens : cfg.generations;
        so.seed = cfg.seed;
        so.tolerance = cfg.tolerance;
        so.timing.repeats = cfg.repeats;
        so.classes = cfg.classes;
        first = load_run(dir, g).next_generation;
        so.resume = true;
      } else {
        so.population = o->pop > 0 ? o->pop : p->default_population();
        so.generations = o->gens > 0 ? o->gens : p->default_generations();
        so.seed = o->seed;
        so.tolerance = o->tolerance;
        so.classes = classes_of(*p, o->cls);
        if (o->out.empty()) {
          std::string t = now_text();
          for (auto& ch : t)
            if (ch == ':') ch = '-';
          dir = "gi-run-" + p->name() + "-" + t;
        } else {
          dir = o->out;
        }
        if (fs::exists(fs::path(dir) / "checkpoint.json")) input_error(dir, "already holds a run; use --resume " + dir);
        std::error_code ec;
        created = !fs::exists(dir);
        fs::create_directories(dir, ec);
        if (ec) input_error(dir, "cannot create the run directory: " + ec.message());
      }
      so.run_dir = dir;
      // a run that fails before its first checkpoint leaves no directory behind
      struct Cleanup {
        std::string dir;
        bool armed;
        ~Cleanup() {
          std::error_code ec;
          if (armed && !fs::exists(fs::path(dir) / "checkpoint.json")) fs::remove_all(dir, ec);
        }
      } cleanup{dir, created};
      GpuEvaluatorOptions eo;
      eo.compile_threads = o->threads;
      eo.ticks = o->ticks;
      eo.deadline = o->deadline;
      Evaluators es = make_evaluators(command, *p, devices, o->device, (fs::path(dir) / "worker.log").string(), eo);
      Evaluator& ev = *es.ev;
      DeviceSummary d = ev.device();
      json cfg{{"problem", p->name()}, {"entry", p->kernel_entry()}, {"population", so.population},
               {"generations", so.generations}, {"seed", so.seed}, {"tolerance", so.tolerance},
               {"repeats", so.timing.repeats}, {"warmup", so.timing.warmup}, {"device", d.name}, {"cc", d.cc},
               {"driver", d.driver}, {"cuda", d.cuda}, {"device_index", es.devices.front()}, {"devices", es.devices},
               {"classes", so.classes}, {"nvrtc", nvrtc_version()}, {"started", now_text()},
               {"grammar_rules", g.rules.size()}};
      write_text_atomic((fs::path(dir) / "config.json").string(), cfg.dump(2) + "\n");
      GenProgress prog(so.generations);
      SearchState st = run_search(g, ev, so, [&](const GenerationStats& s, const SearchState&) { prog.update(s, first); });
      std::string best = st.best_genome;
      char sp[32];
      std::snprintf(sp, sizeof sp, "%.4f", st.best_speedup);
      write_text_atomic((fs::path(dir) / "best.genome").string(),
                        genome_file({{"kernel", p->name()}, {"cc", cc_text(d.cc)}, {"device", d.name},
                                     {"id", "gi-seed" + std::to_string(so.seed)}, {"seed", std::to_string(so.seed)},
                                     {"population", std::to_string(so.population)},
                                     {"generations", std::to_string(so.generations)},
                                     {"trained_on", join(so.classes)}, {"speedup_training", sp}, {"driver", d.driver},
                                     {"cuda", d.cuda}, {"nvrtc", nvrtc_version()}, {"date", now_text()},
                                     {"source", "gi run " + dir}},
                                    best));
      write_report(dir);
      double comp = 0, run = 0, wall = 0;
      int evaluated = 0, compiled = 0;
      for (const auto& h : st.history) {
        comp += h.compile_s;
        run += h.run_s;
        wall += h.wall_s;
        evaluated += h.evaluated;
        compiled += h.compiled;
      }
      if (o->json) {
        std::cout << json{{"run_dir", dir}, {"device", d.name}, {"devices", es.devices}, {"classes", so.classes},
                          {"best_genome", best}, {"best_speedup", st.best_speedup},
                          {"generations", st.history.size()}, {"evaluated", evaluated}, {"compiled", compiled},
                          {"compile_s", comp}, {"run_s", run}, {"wall_s", wall},
                          {"candidates_per_s", wall > 0 ? evaluated / wall : 0}}
                         .dump(2)
                  << "\n";
      } else {
        std::printf("run directory: %s\nbest speed-up (training): %.3fx\nbest genome: %s\nevaluated %d (%d compiled) in %.1f s "
                    "on %zu GPU(s): compile %.1f s, run %.1f s\n",
                    dir.c_str(), st.best_speedup, best.c_str(), evaluated, compiled, wall, es.devices.size(), comp, run);
      }
    });
  }

  // ---- minimize / tune / validate share: GENOME, --device, --class, --json
  {
    auto* c = gi->add_subcommand("minimize", "Remove genes that do not make the kernel faster (knock-out vs 3 sigma of noise)");
    auto genome = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto cls = std::make_shared<std::string>();
    auto device = std::make_shared<int>(0);
    auto json_out = std::make_shared<bool>(false);
    c->add_option("GENOME", *genome, "Genome file, or -")->required();
    c->add_option("-o,--output", *out, "Minimized genome file (default: stdout)");
    c->add_option("--class", *cls, "Measure on this size class only (default: a case of every class; a gene stays "
                                   "when it helps on any)");
    c->add_option("--device", *device, "CUDA device index");
    c->add_flag("--json", *json_out, "Print the result as JSON");
    c->callback([=] {
      auto p = make_problem();
      Grammar g = make_grammar(*p);
      Genome x = parse_genome(g, read_genome_arg(*genome), *genome);
      const auto classes = classes_of(*p, *cls);
      MinimizeOptions mo;
      mo.cases = probes_of(*p, classes, mo.case_seed);
      mo.constraints = p->constraints(x.config);
      Evaluators es = make_evaluators(command, *p, "", *device, "", {}, static_cast<int>(mo.cases.size()));
      auto& ev = *es.ev;
      bool tty = ::isatty(2);
      auto r = minimize(g, ev, x, mo, [&](int d, int t) { step_progress(tty, "gi minimize: gene", d, t); });
      std::string text = format_genome(g, r.output);
      write_result_genome(*p, ev.device(), "gi minimize " + *genome, text, *out, *json_out, classes);
      if (*json_out) {
        json cases = json::array();
        for (std::size_t k = 0; k < mo.cases.size(); ++k)
          cases.push_back({{"class", mo.cases[k].size_class}, {"seed", mo.cases[k].seed}, {"base_ms", r.case_base_ms[k]},
                           {"noise_ms", r.case_noise_ms[k]}, {"output_ms", r.case_output_ms[k]}});
        std::cout << json{{"input", format_genome(g, r.input)}, {"output", text}, {"base_ms", r.base_ms},
                          {"noise_ms", r.noise_ms}, {"output_ms", r.output_ms}, {"classes", classes}, {"cases", cases},
                          {"log", r.log}}
                         .dump(2)
                  << "\n";
      } else {
        for (const auto& l : r.log) std::fprintf(stderr, "%s\n", l.c_str());
      }
    });
  }
  {
    auto* c = gi->add_subcommand("tune", "Exhaustively tune launch parameters of a genome (none: the original = pre-tuned baseline)");
    auto genome = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto cls = std::make_shared<std::string>();
    auto device = std::make_shared<int>(0);
    auto json_out = std::make_shared<bool>(false);
    c->add_option("GENOME", *genome, "Genome file, or - (default: the original kernel)");
    c->add_option("-o,--output", *out, "Tuned genome file (default: stdout)");
    c->add_option("--class", *cls, "Tune for this size class (default: every class, scored by the geometric mean "
                                   "of the speed-ups)");
    c->add_option("--device", *device, "CUDA device index");
    c->add_flag("--json", *json_out, "Print the result and the table as JSON");
    c->callback([=] {
      auto p = make_problem();
      Grammar g = make_grammar(*p);
      Genome x = genome->empty() ? empty_genome(g) : parse_genome(g, read_genome_arg(*genome), *genome);
      const auto classes = classes_of(*p, *cls);
      TuneOptions to;
      to.cases = probes_of(*p, classes, to.case_seed);
      Evaluators es = make_evaluators(command, *p, "", *device, "", {}, static_cast<int>(to.cases.size()));
      auto& ev = *es.ev;
      bool tty = ::isatty(2);
      auto r = tune(g, ev, x, to, [&](int d, int t) { step_progress(tty, "gi tune: configuration", d, t); });
      std::string text = format_genome(g, r.output);
      write_result_genome(*p, ev.device(), "gi tune " + (genome->empty() ? std::string("original") : *genome), text,
                          *out, *json_out, classes);
      if (*json_out) {
        json t = json::array();
        for (const auto& e : r.table)
          t.push_back({{"config", e.config}, {"status", e.status}, {"ms", e.ms}, {"score", e.score}});
        std::cout << json{{"input", format_genome(g, r.input)}, {"output", text}, {"input_ms", r.input_ms},
                          {"output_ms", r.output_ms}, {"output_score", r.output_score}, {"classes", classes},
                          {"tuned", r.tuned}, {"table", t}}
                         .dump(2)
                  << "\n";
      } else {
        std::fprintf(stderr, "tuned %zu parameters over %zu configurations on %zu case(s): %.4f ms -> %.4f ms (score %.4f)\n",
                     r.tuned.size(), r.table.size(), to.cases.size(), r.input_ms, r.output_ms, r.output_score);
      }
    });
  }
  {
    auto* c = gi->add_subcommand("validate", "Check a genome on unseen hold-out cases of every size class; speed-ups vs "
                                              "the original (and pre-tuned original)");
    auto genome = std::make_shared<std::string>();
    auto pretuned = std::make_shared<std::vector<std::string>>();
    auto cases = std::make_shared<int>(5);
    auto cls = std::make_shared<std::string>();
    auto device = std::make_shared<int>(0);
    auto json_out = std::make_shared<bool>(false);
    c->add_option("GENOME", *genome, "Genome file, or -")->required();
    c->add_option("--pretuned", *pretuned,
                  "Genome of the pre-tuned original (from `gi tune`): FILE for every class, or CLASS=FILE (repeatable)");
    c->add_option("--cases", *cases, "Hold-out cases per size class")->capture_default_str()->check(CLI::Range(1, 10000));
    c->add_option("--class", *cls, "Only this size class (default: every class)");
    c->add_option("--device", *device, "CUDA device index");
    c->add_flag("--json", *json_out, "Print the result as JSON (one entry per class)");
    c->callback([=] {
      auto p = make_problem();
      Grammar g = make_grammar(*p);
      Genome x = parse_genome(g, read_genome_arg(*genome), *genome);
      const auto classes = classes_of(*p, *cls);
      std::map<std::string, Genome> pre;  // "" = every class
      for (const auto& spec : *pretuned) {
        std::string k, file = spec;
        const auto eq = spec.find('=');
        if (eq != std::string::npos && !fs::exists(spec)) {
          k = spec.substr(0, eq);
          file = spec.substr(eq + 1);
          p->check_class(k);
        }
        if (pre.count(k)) input_error("--pretuned", "given twice for " + (k.empty() ? "every class" : "class " + k));
        pre[k] = parse_genome(g, read_genome_arg(file), file);
      }
      const auto constraints = p->constraints(x.config);
      Evaluators es = make_evaluators(command, *p, "", *device, "", {});
      auto& ev = *es.ev;
      bool tty = ::isatty(2);
      std::vector<ValidateResult> rs;
      for (const auto& k : classes) {
        ValidateOptions vo;
        vo.cases = *cases;
        vo.size_class = k;
        vo.constraints = constraints;
        const Genome* pg = pre.count(k) ? &pre.at(k) : pre.count("") ? &pre.at("") : nullptr;
        const std::string what = "gi validate (" + k + "): hold-out case";
        rs.push_back(validate(g, ev, x, pg, vo, [&](int d, int t) { step_progress(tty, what.c_str(), d, t); }));
      }
      // refused when any class has a penalty or a failure, or no class could run the variant
      std::string reason;
      bool any_run = false;
      for (const auto& r : rs) {
        any_run = any_run || r.run > 0;
        if (r.applicable && !r.blessed && reason.empty()) reason = r.size_class + ": " + r.reason;
      }
      if (reason.empty() && !any_run) reason = "no hold-out case of any class is within the variant's constraints";
      const bool blessed = reason.empty();
      if (*json_out) {
        json jc = json::array();
        double max_error = 0;
        for (const auto& r : rs) {
          max_error = std::max(max_error, r.max_error);
          json cs = json::array();
          for (const auto& k : r.cases)
            cs.push_back({{"seed", k.seed}, {"case", k.describe}, {"original_ms", k.original_ms},
                          {"pretuned_ms", k.pretuned_ms}, {"evolved_ms", k.evolved_ms}, {"max_error", k.evolved_max_error},
                          {"penalty", k.evolved_penalty}, {"status", k.evolved_status}, {"summary", k.summary},
                          {"skipped", k.skipped}});
          jc.push_back({{"class", r.size_class}, {"cases", cs}, {"run", r.run}, {"skipped", r.skipped},
                        {"max_error", r.max_error}, {"max_penalty", r.max_penalty},
                        {"speedup", {{"median", r.speedup_median}, {"min", r.speedup_min}, {"max", r.speedup_max}}},
                        {"speedup_vs_pretuned",
                         {{"median", r.speedup_pretuned_median}, {"min", r.speedup_pretuned_min}, {"max", r.speedup_pretuned_max}}},
                        {"has_pretuned", r.has_pretuned}, {"blessed", r.blessed}, {"applicable", r.applicable},
                        {"beats_pretuned", r.beats_pretuned}, {"reason", r.reason}, {"validated", validated_line(r)}});
        }
        std::cout << json{{"genome", format_genome(g, x)}, {"device", ev.device().name}, {"requires", constraints},
                          {"classes", jc}, {"max_error", max_error}, {"blessed", blessed}, {"reason", reason}}
                         .dump(2)
                  << "\n";
      } else {
        for (const auto& r : rs) {
          std::printf("== class %s: %d hold-out case(s) run, %d outside the variant's constraints\n", r.size_class.c_str(),
                      r.run, r.skipped);
          for (const auto& k : r.cases) {
            if (!k.skipped.empty()) {
              std::printf("%-48s skipped (needs %s)\n", k.describe.c_str(), k.skipped.c_str());
              continue;
            }
            std::printf("%-48s original %.4f ms  %s evolved %.4f ms  max err %g  %s\n", k.describe.c_str(), k.original_ms,
                        r.has_pretuned ? ("pre-tuned " + std::to_string(k.pretuned_ms) + " ms ").c_str() : "",
                        k.evolved_ms, k.evolved_max_error, k.evolved_status.c_str());
          }
          if (r.run == 0) continue;
          std::printf("%s: speed-up vs original: median %.3fx (min %.3f, max %.3f)\n", r.size_class.c_str(),
                      r.speedup_median, r.speedup_min, r.speedup_max);
          if (r.has_pretuned)
            std::printf("%s: speed-up vs pre-tuned original: median %.3fx (min %.3f, max %.3f)\n", r.size_class.c_str(),
                        r.speedup_pretuned_median, r.speedup_pretuned_min, r.speedup_pretuned_max);
          std::printf("%s: max error %g, max penalty %g: %s\n", r.size_class.c_str(), r.max_error, r.max_penalty,
                      r.blessed ? "valid" : ("REFUSED: " + r.reason).c_str());
        }
        std::printf("%s\n", blessed ? "valid in every class it can run" : ("REFUSED: " + reason).c_str());
      }
      if (!blessed) throw evk::Refused("validate: refused: " + reason);
    });
  }

  // ---- evolve: the whole pipeline, then install
  {
    auto* c = gi->add_subcommand("evolve", "Re-tune this GPU in one command: search, minimize, tune, validate every size "
                                            "class, install into the overlay directory");
    struct Opts {
      double budget = 60;
      std::string devices, cls, out, overlay, id;
      int pop = 0, gens = 0, cases = 10, threads = 0, device = 0;
      std::uint64_t seed = 1;
      double min_gain = 0.01;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    c->add_option("--budget", o->budget, "Minutes for the whole pipeline (the search gets half)")->capture_default_str()
        ->check(CLI::Range(0.5, 100000.0));
    c->add_option("--devices", o->devices, "GPUs for the search: 'all' or indices like 0,1 (default: --device)");
    c->add_option("--device", o->device, "CUDA device index (the search without --devices, and every later stage)");
    c->add_option("--class", o->cls, "Evolve for this size class only (default: every class)");
    c->add_option("--pop", o->pop, "Population (default: the paper's, smaller when the budget is short)")
        ->check(CLI::Range(2, 100000));
    c->add_option("--generations", o->gens, "Generations at most (default: the paper's; the budget may stop earlier)")
        ->check(CLI::Range(1, 100000));
    c->add_option("--seed", o->seed, "Random seed")->capture_default_str();
    c->add_option("--cases", o->cases, "Hold-out cases per size class")->capture_default_str()->check(CLI::Range(1, 10000));
    c->add_option("--min-gain", o->min_gain, "A class counts as won above 1 + this median speed-up over the pre-tuned original")
        ->capture_default_str()->check(CLI::Range(0.0, 10.0));
    c->add_option("--out", o->out, "Working directory (run, genomes, report; default: gi-evolve-<app>-<date>)");
    c->add_option("--overlay", o->overlay, "Overlay directory to install into (default: the tools' overlay directory)");
    c->add_option("--id", o->id, "Variant id (default: evolved-<device>-<date>)");
    c->add_option("--threads", o->threads, "NVRTC compile threads (default: all cores)");
    c->add_flag("--json", o->json, "Print the result as JSON");
    c->callback([=] {
      auto p = make_problem();
      Grammar g = make_grammar(*p);
      if (!o->devices.empty() && c->count("--device")) input_error("--devices", "cannot be combined with --device");
      EvolveOptions eo;
      eo.budget_s = o->budget * 60;
      eo.classes = classes_of(*p, o->cls);
      eo.population = o->pop;
      eo.generations = o->gens;
      eo.seed = o->seed;
      eo.cases = o->cases;
      eo.min_gain = o->min_gain;
      std::string dir = o->out;
      if (dir.empty()) {
        std::string t = now_text();
        for (auto& ch : t)
          if (ch == ':') ch = '-';
        dir = "gi-evolve-" + p->name() + "-" + t;
      }
      eo.work_dir = dir;
      const fs::path overlay = o->overlay.empty() ? evk::default_overlay_dir() : fs::path(o->overlay);
      if (overlay.empty()) input_error("--overlay", "no overlay directory (set EVK_OVERLAY_DIR or HOME, or give --overlay)");
      GpuEvaluatorOptions go;
      go.compile_threads = o->threads;
      DeviceSummary dev;
      int lanes = 1;
      EvaluatorFactory factory = [&](bool search, int keep) {
        fs::create_directories(dir);
        Evaluators es = search ? make_evaluators(command, *p, o->devices, o->device, (fs::path(dir) / "worker.log").string(), go, keep)
                               : make_evaluators(command, *p, "", o->device, (fs::path(dir) / "worker-post.log").string(), go, keep);
        dev = es.ev->device();
        if (search) lanes = static_cast<int>(es.devices.size());
        return std::move(es.ev);
      };
      const bool tty = ::isatty(2) != 0;
      double last_print = -1e9;
      auto progress = [&](const EvolveProgress& e) {
        if (!tty && e.elapsed_s - last_print < 10 && e.stage != "done" && e.done != e.total) return;
        last_print = e.elapsed_s;
        const double left = e.budget_s - e.elapsed_s;
        char buf[320];
        std::snprintf(buf, sizeof buf, "gi evolve: %-28s %d/%d  best speed-up %.3fx  %s %s", e.stage.c_str(), e.done,
                      e.total, e.best_speedup, left >= 0 ? "time left" : "over budget by",
                      Progress::format_duration(std::fabs(left)).c_str());
        if (tty) std::fprintf(stderr, "\r\033[K%s", buf);
        else std::fprintf(stderr, "%s\n", buf);
        std::fflush(stderr);
      };
      EvolveResult r = evolve(*p, g, factory, eo, progress);
      if (tty) std::fprintf(stderr, "\n");
      // install every variant that won somewhere
      std::vector<std::string> installed;
      std::string base_id = o->id;
      if (base_id.empty()) {
        std::string slug;
        for (char ch : dev.name) slug += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
        std::string t = now_text();
        std::string compact;
        for (char ch : t)
          if (std::isdigit(static_cast<unsigned char>(ch))) compact += ch;
        base_id = "evolved-" + slug + "-" + compact;
      }
      for (std::size_t i = 0; i < r.variants.size(); ++i) {
        const auto& v = r.variants[i];
        const std::string id = r.variants.size() == 1 ? base_id : base_id + "-" + join(v.classes, "-");
        const std::string file = variant_file(*p, dev, r, v, id, o->seed);
        write_text_atomic((fs::path(dir) / (id + ".genome")).string(), file);
        const fs::path dest = overlay / p->name() / (id + ".genome");
        std::error_code ec;
        fs::create_directories(dest.parent_path(), ec);
        if (ec) input_error(dest.parent_path().string(), "cannot create the overlay directory: " + ec.message());
        write_text_atomic(dest.string(), file);
        installed.push_back(dest.string());
      }
      json jc = json::array();
      for (const auto& k : r.classes)
        jc.push_back({{"class", k.size_class}, {"pretuned", format_genome(g, k.pretuned)},
                      {"evolved", format_genome(g, k.evolved)}, {"blessed", k.validation.blessed},
                      {"wins", k.wins}, {"reason", k.validation.reason}, {"run", k.validation.run},
                      {"skipped", k.validation.skipped}, {"max_error", k.validation.max_error},
                      {"speedup", {{"median", k.validation.speedup_median}, {"min", k.validation.speedup_min},
                                   {"max", k.validation.speedup_max}}},
                      {"speedup_vs_pretuned", {{"median", k.validation.speedup_pretuned_median},
                                               {"min", k.validation.speedup_pretuned_min},
                                               {"max", k.validation.speedup_pretuned_max}}},
                      {"validated", validated_line(k.validation)}});
      const json summary{{"work_dir", dir}, {"device", dev.name}, {"lanes", lanes}, {"population", r.population},
                         {"generations", r.generations}, {"search_wall_s", r.search_wall_s},
                         {"best_genome", format_genome(g, r.best)}, {"minimized", format_genome(g, r.minimized)},
                         {"classes", jc}, {"installed", installed}, {"refusal", r.refusal}, {"elapsed_s", r.elapsed_s}};
      write_text_atomic((fs::path(dir) / "evolve.json").string(), summary.dump(2) + "\n");
      if (o->json) {
        std::cout << summary.dump(2) << "\n";
      } else {
        std::printf("search: pop %d x %d generations in %.1f s on %d GPU(s) (%s)\n", r.population, r.generations,
                    r.search_wall_s, lanes, dev.name.c_str());
        for (const auto& k : r.classes)
          std::printf("%-12s %s vs original %.3fx, vs pre-tuned %.3fx (%.3f..%.3f), max error %g%s\n",
                      k.size_class.c_str(), k.wins ? "WINS " : "     ", k.validation.speedup_median,
                      k.validation.speedup_pretuned_median, k.validation.speedup_pretuned_min,
                      k.validation.speedup_pretuned_max, k.validation.max_error,
                      k.validation.blessed ? "" : ("  (" + k.validation.reason + ")").c_str());
        for (const auto& f : installed) std::printf("installed %s\n", f.c_str());
      }
      if (installed.empty()) throw evk::Refused("evolve: refused: " + r.refusal);
    });
  }

  // ---- install / list / remove: the overlay directory
  auto overlay_of = [](const std::string& opt) {
    const fs::path d = opt.empty() ? evk::default_overlay_dir() : fs::path(opt);
    if (d.empty()) input_error("--overlay", "no overlay directory (set EVK_OVERLAY_DIR or HOME, or give --overlay)");
    return d;
  };
  {
    auto* c = gi->add_subcommand("install", "Check a genome file (header, applies, compiles) and copy it into the overlay directory");
    auto genome = std::make_shared<std::string>();
    auto overlay = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    auto force = std::make_shared<bool>(false);
    c->add_option("GENOME", *genome, "Genome file (docs/FORMATS.md)")->required();
    c->add_option("--overlay", *overlay, "Overlay directory (default: the tools' overlay directory)");
    c->add_option("--id", *id, "Variant id (default: the header's id, else the file's stem)");
    c->add_flag("--force", *force, "Replace an installed variant with the same id");
    c->callback([=] {
      auto p = make_problem();
      const std::string text = read_genome_arg(*genome);
      const evk::Variant v = evk::read_genome_file(*genome);  // kernel, cc, device, id (InputError naming the file)
      if (v.kernel != p->name()) input_error(*genome, "genome is for kernel '" + v.kernel + "', not '" + p->name() + "'");
      if (v.cc == 0) input_error(*genome, "no '# cc:' header line (the compute capability it was evolved on)");
      const auto names = p->property_names();
      for (const auto& [k, val] : genome_header(text)) {
        if (k == "classes" && val != "all") {
          std::istringstream in(val);
          std::string cl;
          while (std::getline(in, cl, ',')) {
            cl = text_trim(cl);
            if (cl.empty()) input_error(*genome, "empty class in 'classes: " + val + "'");
            try {
              p->check_class(cl);
            } catch (const InputError& e) {
              throw InputError(*genome + ": classes: " + std::string(e.what()).substr(std::string("--class: ").size()));
            }
          }
        } else if (k == "requires") {
          const Constraint cn = parse_constraint(val, *genome + ": requires");
          if (!names.empty() && std::find(names.begin(), names.end(), cn.name) == names.end())
            input_error(*genome, "requires: '" + cn.name + "' is not a request property of " + p->name() + " (" +
                                     join(names) + ")");
        } else if (k == "validated") {
          const std::string cl = text_trim(val.substr(0, val.find(' ')));
          try {
            p->check_class(cl);
          } catch (const InputError&) {
            input_error(*genome, "validated: '" + cl + "' is not a size class of " + p->name());
          }
        }
      }
      Grammar g = make_grammar(*p);
      Genome x = parse_genome(g, text, *genome);
      ApplyOptions ao;
      ao.engine = false;
      const Variant var = apply(g, x, ao);
      CompileRequest req;
      req.source = var.source;
      try {
        req.options = p->compile_options(var.config);
      } catch (const InputError& e) {
        input_error(*genome, e.what());
      }
      req.options.insert(req.options.end(), var.options.begin(), var.options.end());
      if (nvrtc_version().empty()) input_error(*genome, "cannot check that it compiles: this build has no NVRTC");
      const auto res = compile_parallel({req}, v.cc, /*want_cubin=*/true, 1, "", /*use_cache=*/true);
      if (!res[0].ok) input_error(*genome, "does not compile for sm_" + std::to_string(v.cc) + ": " + res[0].log.substr(0, 600));
      const std::string vid = !id->empty() ? *id : v.id;
      if (vid.empty() || vid.find('/') != std::string::npos || vid == "original")
        input_error("--id", "'" + vid + "' is not a usable variant id");
      const fs::path dest = overlay_of(*overlay) / p->name() / (vid + ".genome");
      if (fs::exists(dest) && !*force) input_error(dest.string(), "already installed (use --force to replace it)");
      std::error_code ec;
      fs::create_directories(dest.parent_path(), ec);
      if (ec) input_error(dest.parent_path().string(), "cannot create the overlay directory: " + ec.message());
      write_text_atomic(dest.string(), text);
      std::printf("installed %s (%s, sm_%d, compiled with NVRTC %s)\n", dest.c_str(), vid.c_str(), v.cc,
                  nvrtc_version().c_str());
    });
  }
  {
    auto* c = gi->add_subcommand("list", "Evolved variants of this tool: the overlay directory's and the built-in ones");
    auto overlay = std::make_shared<std::string>();
    auto json_out = std::make_shared<bool>(false);
    c->add_option("--overlay", *overlay, "Overlay directory (default: the tools' overlay directory)");
    c->add_flag("--json", *json_out, "As JSON, with every header key");
    c->callback([=] {
      auto p = make_problem();
      evk::Registry reg = make_registry ? make_registry() : evk::Registry{};
      reg.add_kernel(p->name());
      const fs::path dir = overlay_of(*overlay);
      for (const auto& msg : reg.load_overlay(dir)) std::fprintf(stderr, "warning: %s\n", msg.c_str());
      json all = json::array();
      for (const auto& v : reg.variants()) {
        if (v.kernel != p->name() || v.is_original()) continue;
        std::vector<std::pair<std::string, std::string>> header;
        if (!v.path.empty()) {
          try {
            header = genome_header(read_text(v.path));
          } catch (const InputError&) {
          }
        }
        json keys = json::object();
        for (const auto& [k, val] : header) {
          if (k == "requires" || k == "validated") keys[k].push_back(val);
          else keys[k] = val;
        }
        all.push_back({{"id", v.id}, {"source", to_string(v.source)}, {"path", v.path}, {"kernel", v.kernel},
                       {"device", v.device_name}, {"cc", v.cc ? format_cc(v.cc) : ""}, {"genome", v.genome},
                       {"keys", keys}});
      }
      if (*json_out) {
        std::cout << json{{"kernel", p->name()}, {"overlay", dir.string()}, {"variants", all}}.dump(2) << "\n";
        return;
      }
      std::printf("%s variants (overlay: %s)\n", p->name().c_str(), dir.c_str());
      if (all.empty()) std::printf("  none: the tool runs the original kernel\n");
      for (const auto& v : all) {
        const json& k = v["keys"];
        std::printf("  %-40s %-8s %-18s cc %-4s classes: %s\n", v["id"].get<std::string>().c_str(),
                    v["source"].get<std::string>().c_str(), v["device"].get<std::string>().c_str(),
                    v["cc"].get<std::string>().c_str(), k.value("classes", std::string("all")).c_str());
        if (k.contains("requires"))
          for (const auto& r : k["requires"]) std::printf("      requires %s\n", r.get<std::string>().c_str());
        if (k.contains("validated"))
          for (const auto& r : k["validated"]) std::printf("      validated %s\n", r.get<std::string>().c_str());
        std::printf("      genome: %s\n", v["genome"].get<std::string>().c_str());
      }
    });
  }
  {
    auto* c = gi->add_subcommand("remove", "Remove an evolved variant from the overlay directory");
    auto id = std::make_shared<std::string>();
    auto overlay = std::make_shared<std::string>();
    c->add_option("ID", *id, "Variant id (as `gi list` shows it)")->required();
    c->add_option("--overlay", *overlay, "Overlay directory (default: the tools' overlay directory)");
    c->callback([=] {
      auto p = make_problem();
      const fs::path dir = overlay_of(*overlay);
      evk::Registry reg;
      reg.add_kernel(p->name());
      reg.load_overlay(dir);
      std::vector<std::string> gone;
      for (const auto& v : reg.variants())
        if (v.kernel == p->name() && v.id == *id && v.source == evk::VariantSource::overlay && !v.path.empty()) {
          std::error_code ec;
          if (!fs::remove(v.path, ec) || ec) input_error(v.path, "cannot remove: " + ec.message());
          gone.push_back(v.path);
        }
      if (gone.empty()) {
        const evk::Registry builtin = make_registry ? make_registry() : evk::Registry{};
        for (const auto& v : builtin.variants())
          if (v.kernel == p->name() && v.id == *id && !v.is_original())
            input_error(*id, "is a built-in variant: it cannot be removed (run with --kernel original to bypass it)");
        input_error(*id, "no overlay variant of " + p->name() + " with this id in " + dir.string());
      }
      for (const auto& f : gone) std::printf("removed %s\n", f.c_str());
    });
  }

  // ---- report
  {
    auto* c = gi->add_subcommand("report", "Write RUN_DIR/report.md and fitness.svg from a run's generation log");
    auto dir = std::make_shared<std::string>();
    auto json_out = std::make_shared<bool>(false);
    c->add_option("RUN_DIR", *dir, "Run directory")->required();
    c->add_flag("--json", *json_out, "Print the generation log as JSON");
    c->callback([=] {
      if (!fs::exists(fs::path(*dir) / "generations.jsonl")) input_error(*dir, "no generations.jsonl (not a gi run directory?)");
      write_report(*dir);
      if (*json_out) {
        std::cout << "[";
        std::string t = read_text((fs::path(*dir) / "generations.jsonl").string());
        bool first = true;
        std::istringstream in(t);
        std::string l;
        while (std::getline(in, l))
          if (!l.empty()) {
            std::cout << (first ? "" : ",\n") << l;
            first = false;
          }
        std::cout << "]\n";
      } else {
        std::printf("%s\n", (fs::path(*dir) / "report.md").c_str());
      }
    });
  }

  // ---- the worker process (internal)
  {
    auto* c = gi->add_subcommand("worker", "internal: the evaluation worker process");
    c->group("");
    auto device = std::make_shared<int>(0);
    c->add_option("--device", *device, "CUDA device index");
    c->callback([=] {
      auto p = make_problem();
      int rc = worker_main(*p, *device);
      std::fflush(nullptr);
      ::_exit(rc);
    });
  }
}

}  // namespace evk::gi
