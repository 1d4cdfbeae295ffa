// `gi grammar`: the kernel's grammar in the papers' BNF notation (or JSON).
#include <iostream>
#include <nlohmann/json.hpp>

#include "evk/gi/grammar.hpp"
#include "shared.hpp"

using nlohmann::json;

namespace evk::gi::cli {

namespace {
void print_grammar(const Problem& p, bool json_out, bool scopes) {
  Grammar g = make_grammar(p);
  if (json_out) {
    json j;
    j["kernel"] = p.name();
    j["entry"] = g.entry;
    j["counts"] = rule_counts(g);
    j["rules"] = json::array();
    for (const auto& r : g.rules) {
      json rj{{"name", r.name}, {"type", rule_type_name(r.type)}, {"line", r.line}, {"text", r.text}};
      if (scopes) {
        rj["targets"] = json::array();
        for (int t : r.targets) rj["targets"].push_back(g.rules[t].name);
      }
      j["rules"].push_back(rj);
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << print_bnf(g, p.name() + ".cu");
  if (!scopes) return;
  std::cout << "# scopes: rule -> rules it may be copied to\n";
  for (const auto& r : g.rules) {
    if (r.targets.empty()) continue;
    std::cout << "# <" << r.name << "> ->";
    for (int t : r.targets) std::cout << " <" << g.rules[t].name << ">";
    std::cout << "\n";
  }
}
}  // namespace

void add_grammar(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("grammar", "Print the kernel's BNF grammar (the papers' notation) with counts per rule type");
  auto json_out = std::make_shared<bool>(false);
  auto scopes = std::make_shared<bool>(false);
  c->add_flag("--json", *json_out, "Counts and rules as JSON");
  c->add_flag("--scopes", *scopes, "Also list, for every variable rule, the rules it may be copied to");
  c->callback([=] { print_grammar(*ctx->problem(), *json_out, *scopes); });
}

}  // namespace evk::gi::cli
