// `gi evolve`: search, minimize, tune and validate every size class, then install the winners.
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "evk/energy.hpp"
#include "evk/error.hpp"
#include "evk/gi/evolve.hpp"
#include "evk/gi/search.hpp"
#include "evk/progress.hpp"
#include "shared.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace evk::gi::cli {

namespace {
struct EvolveOpts {
  double budget = 60;
  std::string devices, cls, out, overlay, id;
  int pop = 0, gens = 0, cases = 10, threads = 0, device = 0;
  std::uint64_t seed = 1;
  double min_gain = 0.01;
  bool json = false;
  std::string objective = "time";
  double energy_window = 200;
};

// One line per stage (every 10 s at most off a TTY), redrawn on a TTY.
std::function<void(const EvolveProgress&)> evolve_progress(bool tty) {
  auto last_print = std::make_shared<double>(-1e9);
  return [tty, last_print](const EvolveProgress& e) {
    if (!tty && e.elapsed_s - *last_print < 10 && e.stage != "done" && e.done != e.total) return;
    *last_print = e.elapsed_s;
    const double left = e.budget_s - e.elapsed_s;
    char buf[320];
    std::snprintf(buf, sizeof buf, "gi evolve: %-28s %d/%d  best speed-up %.3fx  %s %s", e.stage.c_str(), e.done,
                  e.total, e.best_speedup, left >= 0 ? "time left" : "over budget by",
                  Progress::format_duration(std::fabs(left)).c_str());
    if (tty) std::fprintf(stderr, "\r\033[K%s", buf);
    else std::fprintf(stderr, "%s\n", buf);
    std::fflush(stderr);
  };
}

// --id, else evolved-<device>-<UTC date digits>.
std::string base_id_of(const std::string& id, const DeviceSummary& dev) {
  if (!id.empty()) return id;
  std::string slug;
  for (char ch : dev.name) slug += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  std::string compact;
  for (char ch : utc_now())
    if (std::isdigit(static_cast<unsigned char>(ch))) compact += ch;
  return "evolved-" + slug + "-" + compact;
}

// Every variant that won somewhere: into the work directory and the overlay directory.
std::vector<std::string> install_variants(const Problem& p, const DeviceSummary& dev, const EvolveResult& r,
                                          const EvolveOpts& o, const std::string& dir, const fs::path& overlay) {
  std::vector<std::string> installed;
  const std::string base_id = base_id_of(o.id, dev);
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    const auto& v = r.variants[i];
    const std::string id = r.variants.size() == 1 ? base_id : base_id + "-" + join(v.classes, "-");
    const std::string file = variant_file(p, dev, r, v, id, o.seed);
    write_text_atomic((fs::path(dir) / (id + ".genome")).string(), file);
    const fs::path dest = overlay / p.name() / (id + ".genome");
    std::error_code ec;
    fs::create_directories(dest.parent_path(), ec);
    if (ec) input_error(dest.parent_path().string(), "cannot create the overlay directory: " + ec.message());
    write_text_atomic(dest.string(), file);
    installed.push_back(dest.string());
  }
  return installed;
}

// What a stage's done/total count.
const char* stage_unit(const std::string& name) {
  if (name == "search") return "generations";
  if (name == "minimize") return "genes";
  if (name.rfind("tune", 0) == 0) return "configurations";
  return "hold-out cases";
}

json stages_json(const EvolveResult& r) {
  json js = json::array();
  for (const auto& s : r.stages)
    js.push_back({{"stage", s.name}, {"budget_s", s.budget_s}, {"used_s", s.used_s}, {"done", s.done},
                  {"total", s.total}, {"unit", stage_unit(s.name)}, {"budget_stopped", s.budget_stopped},
                  {"note", s.note}});
  return js;
}

json summary_json(const Grammar& g, const EvolveResult& r, const std::string& dir, const DeviceSummary& dev, int lanes,
                  const std::vector<std::string>& installed, double budget_s) {
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
                  {"validated", validated_line(k.validation)},
                  {"energy", k.validation.energy
                                 ? json{{"ratio", {{"median", k.validation.energy_ratio_median},
                                                   {"min", k.validation.energy_ratio_min},
                                                   {"max", k.validation.energy_ratio_max}}},
                                        {"ratio_vs_pretuned", {{"median", k.validation.energy_ratio_pretuned_median},
                                                               {"min", k.validation.energy_ratio_pretuned_min},
                                                               {"max", k.validation.energy_ratio_pretuned_max}}},
                                        {"time_ratio_vs_pretuned", k.validation.time_ratio_pretuned_median}}
                                 : json{{"note", k.validation.energy_note}}},
                  {"why", k.why}});
  return json{{"work_dir", dir}, {"device", dev.name}, {"lanes", lanes}, {"population", r.population},
              {"generations", r.generations}, {"search_wall_s", r.search_wall_s},
              {"best_genome", format_genome(g, r.best)}, {"minimized", format_genome(g, r.minimized)},
              {"classes", jc}, {"installed", installed}, {"refusal", r.refusal}, {"elapsed_s", r.elapsed_s},
              {"objective", objective_name(r.objective)}, {"budget_s", budget_s},
              {"validation_reserve_s", r.validation_reserve_s}, {"stages", stages_json(r)}};
}

// The stages against the budget: time used and given, work done of planned, and what the budget did.
void print_stages(const EvolveResult& r, double budget_s) {
  std::printf("budget %.1f s, used %.1f s (%.1f s reserved for validation after the search)\n", budget_s, r.elapsed_s,
              r.validation_reserve_s);
  for (const auto& s : r.stages)
    std::printf("  %-26s %8.1f s of %8.1f s  %d of %d %s%s%s\n", s.name.c_str(), s.used_s, s.budget_s, s.done, s.total,
                stage_unit(s.name), s.note.empty() ? "" : ": ", s.note.c_str());
}

void print_summary(const EvolveResult& r, const DeviceSummary& dev, int lanes, const std::vector<std::string>& installed,
                   double budget_s) {
  std::printf("search: pop %d x %d generations in %.1f s on %d GPU(s) (%s)\n", r.population, r.generations,
              r.search_wall_s, lanes, dev.name.c_str());
  print_stages(r, budget_s);
  for (const auto& k : r.classes)
    std::printf("%-12s %s vs original %.3fx, vs pre-tuned %.3fx (%.3f..%.3f), max error %g%s\n",
                k.size_class.c_str(), k.wins ? "WINS " : "     ", k.validation.speedup_median,
                k.validation.speedup_pretuned_median, k.validation.speedup_pretuned_min,
                k.validation.speedup_pretuned_max, k.validation.max_error,
                k.validation.blessed ? "" : ("  (" + k.validation.reason + ")").c_str());
  for (const auto& k : r.classes) {  // joules per launch, where the GPU's counter measured them
    if (k.validation.energy)
      std::printf("%-12s energy vs original %.3fx, vs pre-tuned %.3fx (%.3f..%.3f), time vs pre-tuned %.3fx%s%s\n",
                  k.size_class.c_str(), k.validation.energy_ratio_median, k.validation.energy_ratio_pretuned_median,
                  k.validation.energy_ratio_pretuned_min, k.validation.energy_ratio_pretuned_max,
                  k.validation.time_ratio_pretuned_median, k.why.empty() ? "" : ": ", k.why.c_str());
    else if (r.objective != Objective::time || !k.validation.energy_note.empty())
      std::printf("%-12s energy not measured: %s\n", k.size_class.c_str(),
                  k.validation.energy_note.empty() ? "no energy counter" : k.validation.energy_note.c_str());
  }
  if (r.objective != Objective::time && installed.empty()) std::printf("%s\n", r.refusal.c_str());
  for (const auto& f : installed) std::printf("installed %s\n", f.c_str());
}

void evolve_command(const Context& ctx, const EvolveOpts& o, bool device_given) {
  auto p = ctx.problem();
  Grammar g = make_grammar(*p);
  if (!o.devices.empty() && device_given) input_error("--devices", "cannot be combined with --device");
  EvolveOptions eo;
  eo.budget_s = o.budget * 60;
  eo.classes = classes_of(*p, o.cls);
  eo.population = o.pop;
  eo.generations = o.gens;
  eo.seed = o.seed;
  eo.cases = o.cases;
  eo.min_gain = o.min_gain;
  eo.objective = parse_objective(o.objective);
  eo.search.timing.energy_window_ms = o.energy_window;
  eo.validate.timing.energy_window_ms = o.energy_window;
  eo.minimize.timing.energy_window_ms = o.energy_window;
  eo.tune.timing.energy_window_ms = o.energy_window;
  const std::string dir = o.out.empty() ? default_dir("gi-evolve", *p) : o.out;
  eo.work_dir = dir;
  const fs::path overlay = overlay_of(o.overlay);
  require_energy_counter(eo.objective, o.devices, o.device);  // before the work directory exists
  {  // joules in validation whenever the GPU has a counter (reported; the time objective ignores them)
    std::string why;
    eo.measure_energy = open_energy_meter(o.device, why) != nullptr;
  }
  GpuEvaluatorOptions go;
  go.compile_threads = o.threads;
  DeviceSummary dev;
  int lanes = 1;
  EvaluatorFactory factory = [&](bool search, int keep) {
    fs::create_directories(dir);
    Evaluators es = search ? make_evaluators(ctx, *p, o.devices, o.device, (fs::path(dir) / "worker.log").string(), go, keep)
                           : make_evaluators(ctx, *p, "", o.device, (fs::path(dir) / "worker-post.log").string(), go, keep);
    dev = es.ev->device();
    if (search) lanes = static_cast<int>(es.devices.size());
    return std::move(es.ev);
  };
  const bool tty = ::isatty(2) != 0;
  EvolveResult r = evolve(*p, g, factory, eo, evolve_progress(tty));
  if (tty) std::fprintf(stderr, "\n");
  const std::vector<std::string> installed = install_variants(*p, dev, r, o, dir, overlay);
  const json summary = summary_json(g, r, dir, dev, lanes, installed, eo.budget_s);
  write_text_atomic((fs::path(dir) / "evolve.json").string(), summary.dump(2) + "\n");
  if (o.json) std::cout << summary.dump(2) << "\n";
  else print_summary(r, dev, lanes, installed, eo.budget_s);
  if (installed.empty()) throw evk::Refused("evolve: refused: " + r.refusal);
}
}  // namespace

void add_evolve(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("evolve", "Re-tune this GPU in one command: search, minimize, tune, validate every size "
                                        "class, install into the overlay directory");
  auto o = std::make_shared<EvolveOpts>();
  c->add_option("--budget", o->budget,
                "Minutes for the whole pipeline: the search gets half at most; minimize and tune share what is left "
                "after the time reserved for validation, which always runs")
      ->capture_default_str()
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
  c->add_option("--objective", o->objective,
                "What to evolve for: time, energy (joules per launch) or edp (joules x ms); an energy or edp "
                "variant is installed only where it saves >= 10% energy for <= 5% more time than the pre-tuned "
                "original on the hold-out cases (needs the GPU's energy counter)")
      ->capture_default_str();
  c->add_option("--energy-window", o->energy_window,
                "energy, edp: milliseconds of back-to-back launches per measurement for the energy counter")
      ->capture_default_str()->check(CLI::Range(1.0, 60000.0));
  c->add_flag("--json", o->json, "Print the result as JSON");
  c->callback([=] { evolve_command(*ctx, *o, c->count("--device") > 0); });
}

}  // namespace evk::gi::cli
