// The search's per-candidate logs in the run directory: candidates.jsonl and failures.log.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "search_engine.hpp"

namespace evk::gi::detail {

// candidates.jsonl and failures.log without the entries of generations >= gen (those of a
// generation that was cut by a kill before its checkpoint, or written twice).
void Search::drop_logs_from(int gen) {
  namespace fs = std::filesystem;
  const fs::path dir(o_.run_dir);
  auto filter = [&](const fs::path& p, const std::function<int(const std::string&)>& gen_of) {
    std::ifstream in(p);
    if (!in) return;
    std::string keep, line;
    int current = -1;
    while (std::getline(in, line)) {
      const int g = gen_of(line);
      if (g >= 0) current = g;
      if (current >= 0 && current < gen) keep += line + "\n";
    }
    write_text_atomic(p.string(), keep);
  };
  filter(dir / "candidates.jsonl", [](const std::string& l) {
    try {
      return nlohmann::json::parse(l).value("generation", -1);
    } catch (const std::exception&) {
      return 1 << 30;  // a line cut by a kill: dropped
    }
  });
  filter(dir / "failures.log", [](const std::string& l) {
    if (l.rfind("gen ", 0) != 0) return -1;  // the indented summary line of the entry above
    try {
      return std::stoi(l.substr(4));
    } catch (const std::exception&) {
      return 1 << 30;
    }
  });
}

void Search::write_failures(const GenerationStats& st) {
  {  // every candidate: CUDA-event time next to its per-SM clock ticks
    std::ofstream c(std::filesystem::path(o_.run_dir) / "candidates.jsonl", std::ios::app);
    for (const auto& ind : s_.population) {
      nlohmann::json j{{"generation", st.generation}, {"genome", ind.text}, {"status", ind.status},
                       {"time_ms", ind.time_ms}, {"raw_ms", ind.raw_ms}, {"lane", ind.lane}, {"ticks", ind.ticks},
                       {"sms", ind.sms}, {"penalty", ind.penalty}, {"size_class", st.size_class}};
      if (o_.objective != Objective::time) {  // joules per launch (lane 0's scale and as measured), watts
        j["joules"] = ind.joules;
        j["raw_j"] = ind.raw_j;
        j["watts"] = ind.watts;
      }
      c << j.dump() << "\n";
    }
  }
  std::ofstream f(std::filesystem::path(o_.run_dir) / "failures.log", std::ios::app);
  for (const auto& ind : s_.population)
    if (ind.status != "ok")
      f << "gen " << st.generation << " " << ind.status << " [" << ind.text << "]\n  " << ind.summary << "\n";
}

}  // namespace evk::gi::detail
