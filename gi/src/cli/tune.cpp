// `gi tune [GENOME]`: a genome's launch parameters (and NVRTC option genes) tuned exhaustively, for
// time or (--objective) energy or EDP.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "evk/gi/genome.hpp"
#include "shared.hpp"

using nlohmann::json;

namespace evk::gi::cli {

namespace {
void tune_command(const Context& ctx, const GenomeArgs& o) {
  auto p = ctx.problem();
  Grammar g = make_grammar(*p);
  Genome x = o.genome.empty() ? empty_genome(g) : parse_genome(g, read_genome_arg(o.genome), o.genome);
  const auto classes = classes_of(*p, o.cls);
  TuneOptions to;
  to.objective = objective_of(o);  // energy, edp: refused here without a counter, before any work or output
  to.timing.energy_window_ms = o.energy_window;
  to.cases = probes_of(*p, classes, to.case_seed);
  Evaluators es = make_evaluators(ctx, *p, "", o.device, "", {}, static_cast<int>(to.cases.size()));
  auto& ev = *es.ev;
  bool tty = ::isatty(2);
  auto r = tune(g, ev, x, to, [&](int d, int t) { step_progress(tty, "gi tune: configuration", d, t); });
  std::string text = format_genome(g, r.output);
  write_result_genome(*p, ev.device(), "gi tune " + (o.genome.empty() ? std::string("original") : o.genome), text,
                      o.out, o.json, classes, to.objective);
  const char* unit = objective_unit(to.objective);
  if (o.json) {
    // ms / input_ms / output_ms are the objective's values (time: ms, energy: J, edp: J*ms; "unit")
    json t = json::array();
    for (const auto& e : r.table)
      t.push_back({{"config", e.config}, {"status", e.status}, {"ms", e.ms}, {"score", e.score}});
    std::cout << json{{"input", format_genome(g, r.input)}, {"output", text}, {"input_ms", r.input_ms},
                      {"output_ms", r.output_ms}, {"output_score", r.output_score}, {"classes", classes},
                      {"tuned", r.tuned}, {"table", t}, {"objective", objective_name(to.objective)},
                      {"unit", unit}, {"planned", r.planned}}
                     .dump(2)
              << "\n";
  } else {
    std::fprintf(stderr, "tuned %zu parameters over %zu configurations on %zu case(s)%s%s: %.4g %s -> %.4g %s (score %.4f)\n",
                 r.tuned.size(), r.table.size(), to.cases.size(), to.objective == Objective::time ? "" : " for ",
                 to.objective == Objective::time ? "" : objective_name(to.objective), r.input_ms, unit, r.output_ms,
                 unit, r.output_score);
  }
}
}  // namespace

void add_tune(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("tune", "Exhaustively tune launch parameters of a genome (none: the original = pre-tuned baseline)");
  auto o = std::make_shared<GenomeArgs>();
  c->add_option("GENOME", o->genome, "Genome file, or - (default: the original kernel)");
  c->add_option("-o,--output", o->out, "Tuned genome file (default: stdout)");
  c->add_option("--class", o->cls, "Tune for this size class (default: every class, scored by the geometric mean "
                                   "of the speed-ups)");
  c->add_option("--device", o->device, "CUDA device index");
  add_objective_options(*c, *o, "What to tune for");
  c->add_flag("--json", o->json, "Print the result and the table as JSON");
  c->callback([=] { tune_command(*ctx, *o); });
}

}  // namespace evk::gi::cli
