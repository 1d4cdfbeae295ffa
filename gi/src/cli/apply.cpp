// `gi apply GENOME`: the kernel source of a genome.
#include <iostream>
#include <nlohmann/json.hpp>

#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "shared.hpp"

using nlohmann::json;

namespace evk::gi::cli {

void add_apply(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("apply", "Write the source a person reads: the original plus the genome's edits and the loop guards they need");
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
    auto p = ctx->problem();
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

}  // namespace evk::gi::cli
