// The `gi` subcommand shared by the three tools. Parsing and printing only; the work is in the library.
#include "evk/gi/cli.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "evk/atomic_file.hpp"
#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/grammar.hpp"
#include "evk/gi/post.hpp"
#include "evk/gi/search.hpp"
#include "evk/progress.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace evk::gi {

namespace {

using MakeProblem = std::function<std::unique_ptr<Problem>()>;

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

std::string now_text() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  return buf;
}

std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

// The genome file of a `gi minimize` / `gi tune` result (docs/FORMATS.md header with provenance),
// written to `out`, or to stdout unless the result goes there as JSON.
void write_result_genome(const Problem& p, const DeviceSummary& d, const std::string& source, const std::string& genome,
                         const std::string& out, bool json_out) {
  if (!out.empty() || !json_out)
    write_output(out, genome_file({{"kernel", p.name()}, {"cc", cc_text(d.cc)}, {"device", d.name}, {"source", source},
                                   {"date", now_text()}},
                                  genome));
}

// `command`: the tool's GI subcommand ("gi", or another one for a second kernel of the tool).
Worker::Options worker_options(const std::string& command, int device, const std::string& log) {
  Worker::Options o;
  o.argv = {"/proc/self/exe", command, "worker", "--device", std::to_string(device)};
  o.stderr_path = log;
  return o;
}

// Per-generation progress: a redrawn line on a TTY, one line per generation otherwise.
class GenProgress {
 public:
  explicit GenProgress(int total) : total_(total), tty_(::isatty(2) != 0), t0_(std::chrono::steady_clock::now()) {}
  void update(const GenerationStats& s, int first) {
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    int done = s.generation + 1 - first;
    double eta = done > 0 ? el / done * (total_ - s.generation - 1) : 0;
    char buf[256];
    std::snprintf(buf, sizeof buf, "gi run: generation %d/%d  best speed-up %.3fx  correct %d/%d  compile %.1fs run %.1fs  ETA %s",
                  s.generation + 1, total_, s.best_so_far_speedup, s.correct, s.evaluated, s.compile_s, s.run_s,
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

void add_gi_command(CLI::App& app, MakeProblem make_problem, const std::string& command, const std::string& description) {
  auto* gi = app.add_subcommand(command, description.empty() ? "Genetic improvement: re-evolve this tool's kernel for your GPU" : description);
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

  // ---- apply
  {
    auto* c = gi->add_subcommand("apply", "Write the kernel source patched by a genome (empty genome: the original)");
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
      std::string out, resume;
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
    c->add_option("--device", o->device, "CUDA device index")->capture_default_str();
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
      std::string dir;
      bool created = false;
      if (!o->resume.empty()) {
        dir = o->resume;
        if (!o->out.empty()) input_error("--out", "cannot be combined with --resume");
        if (!fs::exists(fs::path(dir) / "checkpoint.json")) input_error(dir, "no checkpoint.json to resume from");
        json cfg = json::parse(read_text((fs::path(dir) / "config.json").string()));
        so.population = cfg.value("population", 0);
        so.generations = o->gens > 0 ? o->gens : cfg.value("generations", 0);
        so.seed = cfg.value("seed", std::uint64_t{1});
        so.tolerance = cfg.value("tolerance", 0.1);
        so.timing.repeats = cfg.value("repeats", o->repeats);
        so.resume = true;
      } else {
        so.population = o->pop > 0 ? o->pop : p->default_population();
        so.generations = o->gens > 0 ? o->gens : p->default_generations();
        so.seed = o->seed;
        so.tolerance = o->tolerance;
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
      Worker w(worker_options(command, o->device, (fs::path(dir) / "worker.log").string()));
      GpuEvaluatorOptions eo;
      eo.compile_threads = o->threads;
      eo.ticks = o->ticks;
      eo.deadline = o->deadline;
      auto ev = make_gpu_evaluator(*p, w, eo);
      DeviceSummary d = ev->device();
      json cfg{{"problem", p->name()}, {"entry", p->kernel_entry()}, {"population", so.population},
               {"generations", so.generations}, {"seed", so.seed}, {"tolerance", so.tolerance},
               {"repeats", so.timing.repeats}, {"warmup", so.timing.warmup}, {"device", d.name}, {"cc", d.cc},
               {"device_index", o->device}, {"nvrtc", nvrtc_version()}, {"started", now_text()},
               {"grammar_rules", g.rules.size()}};
      write_text_atomic((fs::path(dir) / "config.json").string(), cfg.dump(2) + "\n");
      int first = 0;
      if (so.resume) first = load_checkpoint(dir, g).next_generation;
      GenProgress prog(so.generations);
      SearchState st = run_search(g, *ev, so, [&](const GenerationStats& s, const SearchState&) { prog.update(s, first); });
      std::string best = st.best_genome;
      char sp[32];
      std::snprintf(sp, sizeof sp, "%.4f", st.best_speedup);
      write_text_atomic((fs::path(dir) / "best.genome").string(),
                        genome_file({{"kernel", p->name()}, {"cc", cc_text(d.cc)}, {"device", d.name},
                                     {"id", "gi-seed" + std::to_string(so.seed)}, {"seed", std::to_string(so.seed)},
                                     {"population", std::to_string(so.population)},
                                     {"generations", std::to_string(so.generations)},
                                     {"speedup_training", sp}, {"nvrtc", nvrtc_version()}, {"date", now_text()},
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
        std::cout << json{{"run_dir", dir}, {"device", d.name}, {"best_genome", best}, {"best_speedup", st.best_speedup},
                          {"generations", st.history.size()}, {"evaluated", evaluated}, {"compiled", compiled},
                          {"compile_s", comp}, {"run_s", run}, {"wall_s", wall},
                          {"candidates_per_s", wall > 0 ? evaluated / wall : 0}}
                         .dump(2)
                  << "\n";
      } else {
        std::printf("run directory: %s\nbest speed-up (training): %.3fx\nbest genome: %s\nevaluated %d (%d compiled) in %.1f s: compile %.1f s, run %.1f s\n",
                    dir.c_str(), st.best_speedup, best.c_str(), evaluated, compiled, wall, comp, run);
      }
    });
  }

  // ---- minimize / tune / validate share: GENOME, --device, --json
  {
    auto* c = gi->add_subcommand("minimize", "Remove genes that do not make the kernel faster (knock-out vs 3 sigma of noise)");
    auto genome = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto device = std::make_shared<int>(0);
    auto json_out = std::make_shared<bool>(false);
    c->add_option("GENOME", *genome, "Genome file, or -")->required();
    c->add_option("-o,--output", *out, "Minimized genome file (default: stdout)");
    c->add_option("--device", *device, "CUDA device index");
    c->add_flag("--json", *json_out, "Print the result as JSON");
    c->callback([=] {
      auto p = make_problem();
      Grammar g = make_grammar(*p);
      Genome x = parse_genome(g, read_genome_arg(*genome), *genome);
      Worker w(worker_options(command, *device, ""));
      auto ev = make_gpu_evaluator(*p, w);
      bool tty = ::isatty(2);
      auto r = minimize(g, *ev, x, {}, [&](int d, int t) { step_progress(tty, "gi minimize: gene", d, t); });
      std::string text = format_genome(g, r.output);
      write_result_genome(*p, ev->device(), "gi minimize " + *genome, text, *out, *json_out);
      if (*json_out)
        std::cout << json{{"input", format_genome(g, r.input)}, {"output", text}, {"base_ms", r.base_ms},
                          {"noise_ms", r.noise_ms}, {"output_ms", r.output_ms}, {"log", r.log}}
                         .dump(2)
                  << "\n";
      else
        for (const auto& l : r.log) std::fprintf(stderr, "%s\n", l.c_str());
    });
  }
  {
    auto* c = gi->add_subcommand("tune", "Exhaustively tune launch parameters of a genome (none: the original = pre-tuned baseline)");
    auto genome = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto device = std::make_shared<int>(0);
    auto json_out = std::make_shared<bool>(false);
    c->add_option("GENOME", *genome, "Genome file, or - (default: the original kernel)");
    c->add_option("-o,--output", *out, "Tuned genome file (default: stdout)");
    c->add_option("--device", *device, "CUDA device index");
    c->add_flag("--json", *json_out, "Print the result and the table as JSON");
    c->callback([=] {
      auto p = make_problem();
      Grammar g = make_grammar(*p);
      Genome x = genome->empty() ? empty_genome(g) : parse_genome(g, read_genome_arg(*genome), *genome);
      Worker w(worker_options(command, *device, ""));
      auto ev = make_gpu_evaluator(*p, w);
      bool tty = ::isatty(2);
      auto r = tune(g, *ev, x, {}, [&](int d, int t) { step_progress(tty, "gi tune: configuration", d, t); });
      std::string text = format_genome(g, r.output);
      write_result_genome(*p, ev->device(), "gi tune " + (genome->empty() ? std::string("original") : *genome), text,
                          *out, *json_out);
      if (*json_out) {
        json t = json::array();
        for (const auto& e : r.table) t.push_back({{"config", e.config}, {"status", e.status}, {"ms", e.ms}});
        std::cout << json{{"input", format_genome(g, r.input)}, {"output", text}, {"input_ms", r.input_ms},
                          {"output_ms", r.output_ms}, {"tuned", r.tuned}, {"table", t}}
                         .dump(2)
                  << "\n";
      } else {
        std::fprintf(stderr, "tuned %zu parameters over %zu configurations: %.4f ms -> %.4f ms\n", r.tuned.size(),
                     r.table.size(), r.input_ms, r.output_ms);
      }
    });
  }
  {
    auto* c = gi->add_subcommand("validate", "Check a genome on unseen hold-out cases; speed-ups vs the original (and pre-tuned original)");
    auto genome = std::make_shared<std::string>();
    auto pretuned = std::make_shared<std::string>();
    auto cases = std::make_shared<int>(5);
    auto device = std::make_shared<int>(0);
    auto json_out = std::make_shared<bool>(false);
    c->add_option("GENOME", *genome, "Genome file, or -")->required();
    c->add_option("--pretuned", *pretuned, "Genome of the pre-tuned original (from `gi tune`)");
    c->add_option("--cases", *cases, "Number of hold-out cases")->capture_default_str()->check(CLI::Range(1, 10000));
    c->add_option("--device", *device, "CUDA device index");
    c->add_flag("--json", *json_out, "Print the result as JSON");
    c->callback([=] {
      auto p = make_problem();
      Grammar g = make_grammar(*p);
      Genome x = parse_genome(g, read_genome_arg(*genome), *genome);
      Genome pre;
      if (!pretuned->empty()) pre = parse_genome(g, read_genome_arg(*pretuned), *pretuned);
      Worker w(worker_options(command, *device, ""));
      auto ev = make_gpu_evaluator(*p, w);
      ValidateOptions vo;
      vo.cases = *cases;
      bool tty = ::isatty(2);
      auto r = validate(g, *ev, x, pretuned->empty() ? nullptr : &pre, vo,
                        [&](int d, int t) { step_progress(tty, "gi validate: hold-out case", d, t); });
      if (*json_out) {
        json cs = json::array();
        for (const auto& k : r.cases)
          cs.push_back({{"seed", k.seed}, {"case", k.describe}, {"original_ms", k.original_ms},
                        {"pretuned_ms", k.pretuned_ms}, {"evolved_ms", k.evolved_ms}, {"max_error", k.evolved_max_error},
                        {"penalty", k.evolved_penalty}, {"status", k.evolved_status}, {"summary", k.summary}});
        std::cout << json{{"genome", format_genome(g, x)}, {"device", ev->device().name}, {"cases", cs},
                          {"max_error", r.max_error},
                          {"speedup", {{"median", r.speedup_median}, {"min", r.speedup_min}, {"max", r.speedup_max}}},
                          {"speedup_vs_pretuned",
                           {{"median", r.speedup_pretuned_median}, {"min", r.speedup_pretuned_min}, {"max", r.speedup_pretuned_max}}},
                          {"blessed", r.blessed}, {"reason", r.reason}}
                         .dump(2)
                  << "\n";
      } else {
        for (const auto& k : r.cases)
          std::printf("%-40s original %.4f ms  %s evolved %.4f ms  max err %g  %s\n", k.describe.c_str(), k.original_ms,
                      r.has_pretuned ? ("pre-tuned " + std::to_string(k.pretuned_ms) + " ms ").c_str() : "",
                      k.evolved_ms, k.evolved_max_error, k.evolved_status.c_str());
        std::printf("speed-up vs original: median %.3fx (min %.3f, max %.3f)\n", r.speedup_median, r.speedup_min, r.speedup_max);
        if (r.has_pretuned)
          std::printf("speed-up vs pre-tuned original: median %.3fx (min %.3f, max %.3f)\n", r.speedup_pretuned_median,
                      r.speedup_pretuned_min, r.speedup_pretuned_max);
        std::printf("max error %g: %s\n", r.max_error, r.blessed ? "valid" : ("REFUSED: " + r.reason).c_str());
      }
      if (!r.blessed) throw evk::Refused("validate: refused: " + r.reason);
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
