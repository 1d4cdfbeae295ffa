// `gi report RUN_DIR`: a run's report.md and fitness.svg.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "evk/error.hpp"
#include "evk/gi/search.hpp"
#include "shared.hpp"

namespace fs = std::filesystem;

namespace evk::gi::cli {

void add_report(CLI::App& gi, const Ctx&) {
  auto* c = gi.add_subcommand("report", "Write RUN_DIR/report.md and fitness.svg from a run's generation log");
  auto dir = std::make_shared<std::string>();
  auto json_out = std::make_shared<bool>(false);
  c->add_option("RUN_DIR", *dir, "Run directory")->required();
  c->add_flag("--json", *json_out, "Print the generation log as JSON");
  c->callback([=] {
    if (!fs::exists(fs::path(*dir) / "generations.jsonl")) input_error(*dir, "no generations.jsonl (not a gi run directory?)");
    write_report(*dir);
    if (!*json_out) {
      std::printf("%s\n", (fs::path(*dir) / "report.md").c_str());
      return;
    }
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
  });
}

}  // namespace evk::gi::cli
