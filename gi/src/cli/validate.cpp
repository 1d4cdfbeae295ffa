// `gi validate GENOME`: hold-out cases of every size class; refused (exit 1) when it fails anywhere.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <fstream>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "evk/atomic_file.hpp"
#include "evk/energy.hpp"
#include "evk/error.hpp"
#include "evk/gi/search.hpp"
#include "evk/gi/genome.hpp"
#include "shared.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace evk::gi::cli {

namespace {
struct ValidateOpts {
  std::string genome, cls;
  std::vector<std::string> pretuned;
  int cases = 5, device = 0;
  bool json = false, record = false;
};

// --record: a variant valid on this device's architecture gets it in its `# validated-cc:` header
// (atomically), so that `--kernel auto` may run it here (docs/FORMATS.md).
void record_validation(const std::string& path, int cc) {
  if (path == "-") input_error("--record", "needs a genome FILE, not standard input");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string updated = with_validated_cc(text.str(), cc, path);
  if (updated == text.str()) return;
  AtomicOutput out(path);
  std::ofstream(out.temp_path()) << updated;
  out.commit();
}

// --pretuned FILE | CLASS=FILE ...: "" = every class.
std::map<std::string, Genome> read_pretuned(const Problem& p, const Grammar& g, const std::vector<std::string>& specs) {
  std::map<std::string, Genome> pre;
  for (const auto& spec : specs) {
    std::string k, file = spec;
    const auto eq = spec.find('=');
    if (eq != std::string::npos && !fs::exists(spec)) {
      k = spec.substr(0, eq);
      file = spec.substr(eq + 1);
      p.check_class(k);
    }
    if (pre.count(k)) input_error("--pretuned", "given twice for " + (k.empty() ? "every class" : "class " + k));
    pre[k] = parse_genome(g, read_genome_arg(file), file);
  }
  return pre;
}

json result_json(const std::vector<ValidateResult>& rs, const Grammar& g, const Genome& x, const std::string& device,
                 const std::vector<std::string>& constraints, bool blessed, const std::string& reason) {
  json jc = json::array();
  double max_error = 0;
  for (const auto& r : rs) {
    max_error = std::max(max_error, r.max_error);
    json cs = json::array();
    for (const auto& k : r.cases)
      cs.push_back({{"seed", k.seed}, {"case", k.describe}, {"original_ms", k.original_ms},
                    {"pretuned_ms", k.pretuned_ms}, {"evolved_ms", k.evolved_ms}, {"original_j", k.original_j},
                    {"pretuned_j", k.pretuned_j}, {"evolved_j", k.evolved_j}, {"energy_note", k.energy_note},
                    {"max_error", k.evolved_max_error},
                    {"penalty", k.evolved_penalty}, {"status", k.evolved_status}, {"summary", k.summary},
                    {"skipped", k.skipped}});
    jc.push_back({{"class", r.size_class}, {"cases", cs}, {"run", r.run}, {"skipped", r.skipped},
                  {"max_error", r.max_error}, {"max_penalty", r.max_penalty},
                  {"speedup", {{"median", r.speedup_median}, {"min", r.speedup_min}, {"max", r.speedup_max}}},
                  {"speedup_vs_pretuned",
                   {{"median", r.speedup_pretuned_median}, {"min", r.speedup_pretuned_min}, {"max", r.speedup_pretuned_max}}},
                  {"has_pretuned", r.has_pretuned}, {"blessed", r.blessed}, {"applicable", r.applicable},
                  {"beats_pretuned", r.beats_pretuned}, {"reason", r.reason}, {"validated", validated_line(r)},
                  {"energy", r.energy}, {"energy_note", r.energy_note},
                  {"energy_ratio", {{"median", r.energy_ratio_median}, {"min", r.energy_ratio_min}, {"max", r.energy_ratio_max}}},
                  {"energy_ratio_vs_pretuned",
                   {{"median", r.energy_ratio_pretuned_median}, {"min", r.energy_ratio_pretuned_min},
                    {"max", r.energy_ratio_pretuned_max}}},
                  {"time_ratio_vs_pretuned", r.time_ratio_pretuned_median}});
  }
  return json{{"genome", format_genome(g, x)}, {"device", device}, {"requires", constraints},
              {"classes", jc}, {"max_error", max_error}, {"blessed", blessed}, {"reason", reason}};
}

std::string fmt_j(double j) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", j);
  return b;
}

void print_result(const std::vector<ValidateResult>& rs, bool blessed, const std::string& reason) {
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
      if (k.original_j > 0 || k.evolved_j > 0)  // joules per job (launch) beside the times
        std::printf("%-48s original %.4g J  %s evolved %.4g J%s%s\n", "", k.original_j,
                    r.has_pretuned ? ("pre-tuned " + fmt_j(k.pretuned_j) + " J ").c_str() : "", k.evolved_j,
                    k.energy_note.empty() ? "" : "  ", k.energy_note.c_str());
    }
    if (r.run == 0) continue;
    std::printf("%s: speed-up vs original: median %.3fx (min %.3f, max %.3f)\n", r.size_class.c_str(),
                r.speedup_median, r.speedup_min, r.speedup_max);
    if (r.has_pretuned)
      std::printf("%s: speed-up vs pre-tuned original: median %.3fx (min %.3f, max %.3f)\n", r.size_class.c_str(),
                  r.speedup_pretuned_median, r.speedup_pretuned_min, r.speedup_pretuned_max);
    if (r.energy) {
      std::printf("%s: energy vs original: median %.3fx (min %.3f, max %.3f)\n", r.size_class.c_str(),
                  r.energy_ratio_median, r.energy_ratio_min, r.energy_ratio_max);
      if (r.has_pretuned)
        std::printf("%s: energy vs pre-tuned original: median %.3fx (min %.3f, max %.3f), time %.3fx\n",
                    r.size_class.c_str(), r.energy_ratio_pretuned_median, r.energy_ratio_pretuned_min,
                    r.energy_ratio_pretuned_max, r.time_ratio_pretuned_median);
    } else {
      std::printf("%s: energy not measured: %s\n", r.size_class.c_str(), r.energy_note.c_str());
    }
    std::printf("%s: max error %g, max penalty %g: %s\n", r.size_class.c_str(), r.max_error, r.max_penalty,
                r.blessed ? "valid" : ("REFUSED: " + r.reason).c_str());
  }
  std::printf("%s\n", blessed ? "valid in every class it can run" : ("REFUSED: " + reason).c_str());
}

void validate_command(const Context& ctx, const ValidateOpts& o) {
  auto p = ctx.problem();
  Grammar g = make_grammar(*p);
  Genome x = parse_genome(g, read_genome_arg(o.genome), o.genome);
  const auto classes = classes_of(*p, o.cls);
  const std::map<std::string, Genome> pre = read_pretuned(*p, g, o.pretuned);
  const auto constraints = p->constraints(x.config);
  std::string no_meter;  // joules per job beside the times wherever the GPU has an energy counter
  const bool energy = open_energy_meter(o.device, no_meter) != nullptr;
  Evaluators es = make_evaluators(ctx, *p, "", o.device, "", {});
  auto& ev = *es.ev;
  bool tty = ::isatty(2);
  std::vector<ValidateResult> rs;
  for (const auto& k : classes) {
    ValidateOptions vo;
    vo.cases = o.cases;
    vo.size_class = k;
    vo.constraints = constraints;
    vo.timing.energy = energy;
    const Genome* pg = pre.count(k) ? &pre.at(k) : pre.count("") ? &pre.at("") : nullptr;
    const std::string what = "gi validate (" + k + "): hold-out case";
    rs.push_back(validate(g, ev, x, pg, vo, [&](int d, int t) { step_progress(tty, what.c_str(), d, t); }));
  }
  // refused when any class has a penalty or a failure, or no class could run the variant
  std::string reason;
  bool any_run = false;
  for (auto& r : rs) {
    if (!energy) r.energy_note = no_meter;
    any_run = any_run || r.run > 0;
    if (r.applicable && !r.blessed && reason.empty()) reason = r.size_class + ": " + r.reason;
  }
  if (reason.empty() && !any_run) reason = "no hold-out case of any class is within the variant's constraints";
  const bool blessed = reason.empty();
  if (o.json) std::cout << result_json(rs, g, x, ev.device().name, constraints, blessed, reason).dump(2) << "\n";
  else print_result(rs, blessed, reason);
  if (!blessed) throw evk::Refused("validate: refused: " + reason);
  if (o.record) {
    const int cc = ev.device().cc;
    record_validation(o.genome, cc);
    if (!o.json) std::printf("recorded in %s: validated on compute capability %d.%d\n", o.genome.c_str(), cc / 10, cc % 10);
  }
}
}  // namespace

void add_validate(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("validate", "Check a genome on unseen hold-out cases of every size class; speed-ups vs "
                                          "the original (and pre-tuned original)");
  auto o = std::make_shared<ValidateOpts>();
  c->add_option("GENOME", o->genome, "Genome file, or -")->required();
  c->add_option("--pretuned", o->pretuned,
                "Genome of the pre-tuned original (from `gi tune`): FILE for every class, or CLASS=FILE (repeatable)");
  c->add_option("--cases", o->cases, "Hold-out cases per size class")->capture_default_str()->check(CLI::Range(1, 10000));
  c->add_option("--class", o->cls, "Only this size class (default: every class)");
  c->add_option("--device", o->device, "CUDA device index");
  c->add_flag("--json", o->json, "Print the result as JSON (one entry per class)");
  c->add_flag("--record", o->record,
              "When valid, add this GPU's compute capability to the file's `# validated-cc:` header (auto then runs it here)");
  c->callback([=] { validate_command(*ctx, *o); });
}

}  // namespace evk::gi::cli
