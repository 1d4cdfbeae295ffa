// `gi list`: the evolved variants of the tool (overlay and built-in).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "evk/error.hpp"
#include "evk/gi/evolve.hpp"
#include "evk/gi/search.hpp"
#include "shared.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace evk::gi::cli {

namespace {
// Every variant of the problem's kernel but the original, with its genome file's header keys.
json variants_json(const evk::Registry& reg, const std::string& kernel) {
  json all = json::array();
  for (const auto& v : reg.variants()) {
    if (v.kernel != kernel || v.is_original()) continue;
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
  return all;
}

void print_variants(const std::string& kernel, const fs::path& dir, const json& all) {
  std::printf("%s variants (overlay: %s)\n", kernel.c_str(), dir.c_str());
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
}

}  // namespace

void add_list(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("list", "Evolved variants of this tool: the overlay directory's and the built-in ones");
  auto overlay = std::make_shared<std::string>();
  auto json_out = std::make_shared<bool>(false);
  c->add_option("--overlay", *overlay, "Overlay directory (default: the tools' overlay directory)");
  c->add_flag("--json", *json_out, "As JSON, with every header key");
  c->callback([=] {
    auto p = ctx->problem();
    evk::Registry reg = ctx->make_registry ? ctx->make_registry() : evk::Registry{};
    reg.add_kernel(p->name());
    const fs::path dir = overlay_of(*overlay);
    for (const auto& msg : reg.load_overlay(dir)) std::fprintf(stderr, "warning: %s\n", msg.c_str());
    const json all = variants_json(reg, p->name());
    if (*json_out) std::cout << json{{"kernel", p->name()}, {"overlay", dir.string()}, {"variants", all}}.dump(2) << "\n";
    else print_variants(p->name(), dir, all);
  });
}

}  // namespace evk::gi::cli
