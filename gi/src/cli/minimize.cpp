// `gi minimize GENOME`: the genes that do not make the kernel faster (or, with --objective, use less
// energy or EDP) removed.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "evk/gi/genome.hpp"
#include "shared.hpp"

using nlohmann::json;

namespace evk::gi::cli {

namespace {
void minimize_command(const Context& ctx, const GenomeArgs& o) {
  auto p = ctx.problem();
  Grammar g = make_grammar(*p);
  Genome x = parse_genome(g, read_genome_arg(o.genome), o.genome);
  const auto classes = classes_of(*p, o.cls);
  MinimizeOptions mo;
  mo.objective = objective_of(o);  // energy, edp: refused here without a counter, before any work or output
  mo.timing.energy_window_ms = o.energy_window;
  mo.cases = probes_of(*p, classes, mo.case_seed);
  mo.constraints = p->constraints(x.config);
  Evaluators es = make_evaluators(ctx, *p, "", o.device, "", {}, static_cast<int>(mo.cases.size()));
  auto& ev = *es.ev;
  bool tty = ::isatty(2);
  auto r = minimize(g, ev, x, mo, [&](int d, int t) { step_progress(tty, "gi minimize: gene", d, t); });
  std::string text = format_genome(g, r.output);
  write_result_genome(*p, ev.device(), "gi minimize " + o.genome, text, o.out, o.json, classes, mo.objective);
  if (o.json) {
    // the *_ms values are the objective's (time: ms, energy: J, edp: J*ms; "unit")
    json cases = json::array();
    for (std::size_t k = 0; k < mo.cases.size(); ++k)
      cases.push_back({{"class", mo.cases[k].size_class}, {"seed", mo.cases[k].seed}, {"base_ms", r.case_base_ms[k]},
                       {"noise_ms", r.case_noise_ms[k]}, {"output_ms", r.case_output_ms[k]}});
    std::cout << json{{"input", format_genome(g, r.input)}, {"output", text}, {"base_ms", r.base_ms},
                      {"noise_ms", r.noise_ms}, {"output_ms", r.output_ms}, {"classes", classes}, {"cases", cases},
                      {"log", r.log}, {"objective", objective_name(mo.objective)},
                      {"unit", objective_unit(mo.objective)}}
                     .dump(2)
              << "\n";
  } else {
    for (const auto& l : r.log) std::fprintf(stderr, "%s\n", l.c_str());
  }
}

}  // namespace

void add_minimize(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("minimize", "Remove genes that do not make the kernel faster (knock-out vs 3 sigma of noise)");
  auto o = std::make_shared<GenomeArgs>();
  c->add_option("GENOME", o->genome, "Genome file, or -")->required();
  c->add_option("-o,--output", o->out, "Minimized genome file (default: stdout)");
  c->add_option("--class", o->cls, "Measure on this size class only (default: a case of every class; a gene stays "
                                   "when it helps on any)");
  c->add_option("--device", o->device, "CUDA device index");
  add_objective_options(*c, *o, "What a gene must help");
  c->add_flag("--json", o->json, "Print the result as JSON");
  c->callback([=] { minimize_command(*ctx, *o); });
}

}  // namespace evk::gi::cli
