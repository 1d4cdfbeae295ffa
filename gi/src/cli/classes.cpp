// `gi classes`: the size classes of the tool's cases.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "shared.hpp"

using nlohmann::json;

namespace evk::gi::cli {

void add_classes(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("classes", "List the size classes of this tool's cases (for --class)");
  auto json_out = std::make_shared<bool>(false);
  c->add_flag("--json", *json_out, "As JSON, with each class's probe cases and the request properties");
  c->callback([=] {
    auto p = ctx->problem();
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

}  // namespace evk::gi::cli
