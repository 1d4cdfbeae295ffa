// Run directory files: checkpoint (population, tabu hashes, RNG state, history), generation logs.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/search.hpp"
#include "evk/strings.hpp"
#include "json_int.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace evk::gi {

void write_text_atomic(const std::string& path, const std::string& text) {
  fs::path p(path);
  fs::path tmp = p;
  tmp += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream o(tmp, std::ios::binary);
    if (!o) input_error(path, "cannot write");
    o << text;
    o.flush();
    if (!o) input_error(path, "write failed");
  }
  fs::rename(tmp, p);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error(path, "cannot read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string genome_file(const std::vector<std::pair<std::string, std::string>>& header, const std::string& genome) {
  std::string s = "# evokernels genome v1\n";
  for (const auto& [k, v] : header) s += "# " + k + ": " + v + "\n";
  // the number of genes, so that a file cut between two genes is not read as a shorter genome
  std::istringstream in(genome);
  std::size_t genes = 0;
  for (std::string t; in >> t;) ++genes;
  s += "# genes: " + std::to_string(genes) + "\n";
  return s + genome + "\n";
}

std::string with_validated_cc(const std::string& text, int cc, const std::string& where) {
  const std::string want = std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  if (lines.empty() || lines[0] != "# evokernels genome v1")
    input_error(where, "not a genome file with headers (`# evokernels genome v1`): nothing to record the validation in");
  std::size_t after_cc = 1, vline = 0;
  for (std::size_t i = 1; i < lines.size() && lines[i].rfind("# ", 0) == 0; ++i) {
    const std::size_t colon = lines[i].find(": ");
    if (colon == std::string::npos) continue;
    const std::string key = lines[i].substr(2, colon - 2), val = lines[i].substr(colon + 2);
    if (key == "cc") {
      if (val == want) return text;  // its own architecture
      after_cc = i + 1;
    } else if (key == "validated-cc") {
      vline = i;
      std::istringstream vs(val);
      for (std::string c; std::getline(vs, c, ',');)
        if (trim(c) == want) return text;
    }
  }
  if (vline) lines[vline] += ", " + want;
  else lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(after_cc), "# validated-cc: " + want);
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

namespace {
json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
double num_of(const json& j, const char* k) {
  if (!j.contains(k) || j[k].is_null()) return std::numeric_limits<double>::infinity();
  return j[k].get<double>();
}

json stats_json(const GenerationStats& s) {
  return {{"generation", s.generation}, {"case_seed", s.case_seed}, {"case", s.case_describe},
          {"size_class", s.size_class}, {"lane_ref_ms", s.lane_ref_ms}, {"ref_ms", s.ref_ms},
          {"best_ms", s.best_ms}, {"best_speedup", s.best_speedup}, {"median_ms", s.median_ms},
          {"evaluated", s.evaluated}, {"compiled", s.compiled}, {"correct", s.correct}, {"faster", s.faster},
          {"parents", s.parents}, {"tabu_genotype", s.tabu_genotype}, {"tabu_phenotype", s.tabu_phenotype},
          {"tabu_code", s.tabu_code}, {"crashes", s.crashes}, {"hangs", s.hangs}, {"restarts", s.restarts},
          {"compile_s", s.compile_s}, {"compile_cpu_s", s.compile_cpu_s}, {"run_s", s.run_s}, {"wall_s", s.wall_s},
          {"compile_wait_s", s.compile_wait_s}, {"breed_s", s.breed_s}, {"reference_s", s.reference_s}, {"ref_ticks", s.ref_ticks},
          {"best_ticks", s.best_ticks}, {"ref_sms", s.ref_sms},
          {"best_genome", s.best_genome}, {"best_so_far_speedup", s.best_so_far_speedup},
          {"best_so_far_genome", s.best_so_far_genome}, {"objective", s.objective}, {"lane_ref_j", s.lane_ref_j},
          {"ref_j", s.ref_j}, {"best_j", s.best_j}, {"best_gain", s.best_gain}, {"best_so_far_gain", s.best_so_far_gain}};
}
GenerationStats stats_of(const json& j) {
  GenerationStats s;
  s.generation = json_int<int>(j, "generation", 0);
  s.case_seed = json_int<std::uint64_t>(j, "case_seed", 0);
  s.case_describe = j.value("case", "");
  s.size_class = j.value("size_class", "");
  s.lane_ref_ms = j.value("lane_ref_ms", std::vector<double>{});
  s.ref_ms = j.value("ref_ms", 0.0);
  s.best_ms = j.value("best_ms", 0.0);
  s.best_speedup = j.value("best_speedup", 0.0);
  s.median_ms = j.value("median_ms", 0.0);
  s.evaluated = json_int<int>(j, "evaluated", 0);
  s.compiled = json_int<int>(j, "compiled", 0);
  s.correct = json_int<int>(j, "correct", 0);
  s.faster = json_int<int>(j, "faster", 0);
  s.parents = json_int<int>(j, "parents", 0);
  s.tabu_genotype = json_int<int>(j, "tabu_genotype", 0);
  s.tabu_phenotype = json_int<int>(j, "tabu_phenotype", 0);
  s.tabu_code = json_int<int>(j, "tabu_code", 0);
  s.crashes = json_int<int>(j, "crashes", 0);
  s.hangs = json_int<int>(j, "hangs", 0);
  s.restarts = json_int<int>(j, "restarts", 0);
  s.compile_s = j.value("compile_s", 0.0);
  s.compile_cpu_s = j.value("compile_cpu_s", 0.0);
  s.run_s = j.value("run_s", 0.0);
  s.wall_s = j.value("wall_s", 0.0);
  s.compile_wait_s = j.value("compile_wait_s", 0.0);
  s.breed_s = j.value("breed_s", 0.0);
  s.reference_s = j.value("reference_s", 0.0);
  s.ref_ticks = j.value("ref_ticks", 0.0);
  s.best_ticks = j.value("best_ticks", 0.0);
  s.ref_sms = json_int<int>(j, "ref_sms", 0);
  s.best_genome = j.value("best_genome", "");
  s.best_so_far_speedup = j.value("best_so_far_speedup", 0.0);
  s.best_so_far_genome = j.value("best_so_far_genome", "");
  // objectives and energy (absent in logs from before them: a time run)
  s.objective = j.value("objective", "time");
  s.lane_ref_j = j.value("lane_ref_j", std::vector<double>{});
  s.ref_j = j.value("ref_j", 0.0);
  s.best_j = j.value("best_j", 0.0);
  s.best_gain = j.value("best_gain", s.best_speedup);
  s.best_so_far_gain = j.value("best_so_far_gain", s.best_so_far_speedup);
  return s;
}
json hashes(const std::set<std::uint64_t>& s) {
  json a = json::array();
  for (auto h : s) a.push_back(hex64(h));
  return a;
}
std::set<std::uint64_t> hashes_of(const json& a) {
  std::set<std::uint64_t> s;
  for (const auto& h : a) {
    const std::string t = h.get<std::string>();
    std::size_t used = 0;
    const std::uint64_t v = std::stoull(t, &used, 16);
    if (used != t.size()) throw std::invalid_argument("bad tabu hash '" + t + "'");
    s.insert(v);
  }
  return s;
}
}  // namespace

void save_checkpoint(const std::string& dir, const SearchState& s) {
  json j;
  j["version"] = 1;
  j["next_generation"] = s.next_generation;
  j["rng"] = s.rng;
  j["population"] = json::array();
  for (const auto& ind : s.population)
    j["population"].push_back({{"genome", ind.text}, {"status", ind.status}, {"fitness", num(ind.fitness)},
                               {"time_ms", ind.time_ms}, {"raw_ms", ind.raw_ms}, {"lane", ind.lane},
                               {"ticks", ind.ticks}, {"sms", ind.sms}, {"joules", ind.joules},
                               {"raw_j", ind.raw_j}, {"watts", ind.watts},
                               {"penalty", ind.penalty}, {"summary", ind.summary}});
  j["tabu"] = {{"genotype", hashes(s.tabu_genotype)}, {"phenotype", hashes(s.tabu_phenotype)}, {"code", hashes(s.tabu_code)}};
  j["best"] = {{"genome", s.best_genome}, {"speedup", s.best_speedup}, {"ms", s.best_ms}, {"ref_ms", s.best_ref_ms},
               {"gain", s.best_gain}, {"j", s.best_j}, {"ref_j", s.best_ref_j}};
  j["history"] = json::array();
  for (const auto& h : s.history) j["history"].push_back(stats_json(h));
  write_text_atomic((fs::path(dir) / "checkpoint.json").string(), j.dump(1) + "\n");
}

SearchState checkpoint_of(json& j, const Grammar& g, const std::string& path);

SearchState load_checkpoint(const std::string& dir, const Grammar& g) {
  std::string path = (fs::path(dir) / "checkpoint.json").string();
  json j;
  try {
    j = json::parse(read_text(path));
  } catch (const json::exception& e) {
    input_error(path, std::string("not a checkpoint: ") + e.what());
  }
  try {
    return checkpoint_of(j, g, path);
  } catch (const json::exception& e) {  // a value of the wrong type, a missing object
    input_error(path, std::string("damaged checkpoint: ") + e.what());
  } catch (const std::logic_error& e) {  // std::stoull of a tabu hash
    input_error(path, std::string("damaged checkpoint: ") + e.what());
  }
}

SearchState checkpoint_of(json& j, const Grammar& g, const std::string& path) {
  if (!j.is_object()) input_error(path, "damaged checkpoint: not a JSON object");
  // what save_checkpoint writes must all be there: a missing part is a damaged file, not an empty one
  const auto need = [&](const char* k, bool (json::*is)() const noexcept, const char* what) -> json& {
    if (!j.contains(k)) input_error(path, std::string("damaged checkpoint: no ") + k);
    if (!(j[k].*is)()) input_error(path, std::string("damaged checkpoint: ") + k + " is not " + what);
    return j[k];
  };
  need("next_generation", &json::is_number, "a number");
  need("rng", &json::is_string, "a string");
  need("population", &json::is_array, "an array");
  need("tabu", &json::is_object, "an object");
  need("best", &json::is_object, "an object");
  need("history", &json::is_array, "an array");
  SearchState s;
  s.next_generation = json_int<int>(j, "next_generation", 0);
  if (s.next_generation < 0) input_error(path, "damaged checkpoint: negative next_generation");
  s.rng = j.value("rng", "");
  for (const auto& p : j["population"]) {
    Individual ind;
    ind.text = p.value("genome", "");
    ind.genome = parse_genome(g, ind.text, path);
    ind.status = p.value("status", "");
    ind.fitness = num_of(p, "fitness");
    ind.time_ms = p.value("time_ms", 0.0);
    ind.raw_ms = p.value("raw_ms", ind.time_ms);
    ind.lane = json_int<int>(p, "lane", 0);
    ind.ticks = p.value("ticks", 0.0);
    ind.sms = json_int<int>(p, "sms", 0);
    ind.joules = p.value("joules", 0.0);
    ind.raw_j = p.value("raw_j", ind.joules);
    ind.watts = p.value("watts", 0.0);
    ind.penalty = p.value("penalty", 0.0);
    ind.summary = p.value("summary", "");
    s.population.push_back(ind);
  }
  for (const char* k : {"genotype", "phenotype", "code"})
    if (!j["tabu"].contains(k) || !j["tabu"][k].is_array()) input_error(path, std::string("damaged checkpoint: no tabu ") + k + " array");
  s.tabu_genotype = hashes_of(j["tabu"]["genotype"]);
  s.tabu_phenotype = hashes_of(j["tabu"]["phenotype"]);
  s.tabu_code = hashes_of(j["tabu"]["code"]);
  s.best_genome = j["best"].value("genome", "");
  s.best_speedup = j["best"].value("speedup", 0.0);
  s.best_ms = j["best"].value("ms", 0.0);
  s.best_ref_ms = j["best"].value("ref_ms", 0.0);
  s.best_gain = j["best"].value("gain", s.best_speedup);  // a checkpoint from before objectives: time
  s.best_j = j["best"].value("j", 0.0);
  s.best_ref_j = j["best"].value("ref_j", 0.0);
  for (const auto& h : j["history"]) s.history.push_back(stats_of(h));
  {  // checked last, so that the parts above are read (and fuzzed) even with a bad RNG state
    Rng r;
    std::istringstream in(s.rng);
    in >> r;
    if (!in) input_error(path, "damaged checkpoint: bad RNG state");
  }
  if (s.history.size() != static_cast<std::size_t>(s.next_generation))
    input_error(path, "damaged checkpoint: next_generation " + std::to_string(s.next_generation) + " but " +
                          std::to_string(s.history.size()) + " generations of history");
  return s;
}

void write_generation_logs(const std::string& dir, const std::vector<GenerationStats>& h) {
  std::string jl, csv =
      "generation,case_seed,ref_ms,best_ms,best_speedup,median_ms,evaluated,compiled,correct,faster,parents,"
      "tabu_genotype,tabu_phenotype,tabu_code,crashes,hangs,restarts,compile_s,run_s,wall_s,breed_s,reference_s,"
      "ref_ticks,best_ticks,size_class,objective,ref_j,best_j,best_gain\n";
  for (const auto& s : h) {
    jl += stats_json(s).dump() + "\n";
    std::ostringstream o;
    o << s.generation << "," << s.case_seed << "," << s.ref_ms << "," << s.best_ms << "," << s.best_speedup << ","
      << s.median_ms << "," << s.evaluated << "," << s.compiled << "," << s.correct << "," << s.faster << ","
      << s.parents << "," << s.tabu_genotype << "," << s.tabu_phenotype << "," << s.tabu_code << "," << s.crashes
      << "," << s.hangs << "," << s.restarts << "," << s.compile_s << "," << s.run_s << "," << s.wall_s << ","
      << s.breed_s << "," << s.reference_s << "," << s.ref_ticks << "," << s.best_ticks << "," << s.size_class << ","
      << s.objective << "," << s.ref_j << "," << s.best_j << "," << s.best_gain << "\n";
    csv += o.str();
  }
  write_text_atomic((fs::path(dir) / "generations.jsonl").string(), jl);
  write_text_atomic((fs::path(dir) / "generations.csv").string(), csv);
}

std::vector<GenerationStats> read_generation_log(const std::string& dir) {
  std::string path = (fs::path(dir) / "generations.jsonl").string();
  std::istringstream in(read_text(path));
  std::vector<GenerationStats> h;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    try {
      h.push_back(stats_of(json::parse(line)));
    } catch (const json::exception& e) {
      input_error(path, "bad line " + std::to_string(n) + ": " + e.what());
    } catch (const std::logic_error& e) {  // an integer field out of range (json_int)
      input_error(path, "bad line " + std::to_string(n) + ": " + e.what());
    }
  }
  return h;
}

namespace {
// The number of generations checkpoint.json says the run has completed; -1 without a checkpoint.
int checkpoint_generations(const std::string& dir) {
  const std::string path = (fs::path(dir) / "checkpoint.json").string();
  if (!fs::exists(path)) return -1;
  json j;
  try {
    j = json::parse(read_text(path));
  } catch (const json::exception& e) {
    input_error(path, std::string("not a checkpoint: ") + e.what());
  }
  if (!j.is_object() || !j.contains("next_generation")) input_error(path, "damaged checkpoint: no next_generation");
  try {
    const int n = json_int<int>(j, "next_generation", 0);
    if (n < 0) input_error(path, "damaged checkpoint: negative next_generation");
    return n;
  } catch (const std::logic_error& e) {
    input_error(path, std::string("damaged checkpoint: ") + e.what());
  }
}

void check_log(const std::string& dir, const std::vector<GenerationStats>& h, int generations) {
  const std::string path = (fs::path(dir) / "generations.jsonl").string();
  for (std::size_t i = 0; i < h.size(); ++i)
    if (h[i].generation != static_cast<int>(i))
      input_error(path, "entry " + std::to_string(i + 1) + " is generation " + std::to_string(h[i].generation) +
                            ", expected " + std::to_string(i) + " (lines missing or repeated)");
  const int n = static_cast<int>(h.size());
  if (generations >= 0 && n != generations && n != generations - 1)
    input_error(path, "holds " + std::to_string(n) + " generations, checkpoint.json " + std::to_string(generations) +
                          (n < generations ? " (truncated?)" : ""));
}
}  // namespace

std::vector<GenerationStats> read_run_log(const std::string& dir) {
  const int generations = checkpoint_generations(dir);
  auto h = read_generation_log(dir);
  check_log(dir, h, generations);
  return h;
}

RunConfig read_run_config(const std::string& dir, const Problem& p, int repeats) {
  const std::string path = (fs::path(dir) / "config.json").string();
  json cfg;
  try {
    cfg = json::parse(read_text(path));
  } catch (const json::exception& e) {
    input_error(path, std::string("not JSON: ") + e.what());
  }
  if (!cfg.is_object()) input_error(path, "damaged run configuration: not a JSON object");
  const auto bad = [&](const std::string& what) { input_error(path, "damaged run configuration: " + what); };
  RunConfig c;
  if (!cfg.contains("problem") || !cfg["problem"].is_string()) bad("no problem name");
  c.problem = cfg["problem"].get<std::string>();
  if (c.problem != p.name()) bad("a run of '" + c.problem + "', not '" + p.name() + "'");
  const auto integer = [&](const char* k, long long lo, long long hi, bool required, long long def) {
    if (!cfg.contains(k) || cfg[k].is_null()) {
      if (required) bad(std::string("no ") + k);
      return def;
    }
    long long v = 0;
    try {
      v = json_int<long long>(cfg, k, def);
    } catch (const std::logic_error& e) {
      bad(e.what());
    }
    if (v < lo || v > hi) bad(std::string(k) + " " + std::to_string(v) + " outside " + std::to_string(lo) + ".." + std::to_string(hi));
    return v;
  };
  c.population = static_cast<int>(integer("population", 2, 100000, true, 0));
  c.generations = static_cast<int>(integer("generations", 1, 100000, true, 0));
  c.repeats = static_cast<int>(integer("repeats", 1, 1000, false, repeats));
  if (!cfg.contains("seed")) bad("no seed");
  try {
    c.seed = json_int<std::uint64_t>(cfg, "seed", 1);
  } catch (const std::logic_error& e) {
    bad(e.what());
  }
  if (cfg.contains("tolerance")) {
    if (!cfg["tolerance"].is_number()) bad("tolerance is not a number");
    c.tolerance = cfg["tolerance"].get<double>();
    if (!(c.tolerance >= 0 && c.tolerance <= 10)) bad("tolerance " + cfg["tolerance"].dump() + " outside 0..10");
  }
  if (cfg.contains("classes")) {
    if (!cfg["classes"].is_array()) bad("classes is not an array");
    for (const auto& k : cfg["classes"]) {
      if (!k.is_string()) bad("a size class that is not a string: " + k.dump());
      try {
        p.check_class(k.get<std::string>());
      } catch (const InputError&) {
        bad("'" + k.get<std::string>() + "' is not a size class of " + p.name());
      }
      c.classes.push_back(k.get<std::string>());
    }
  }
  if (cfg.contains("objective")) {
    if (!cfg["objective"].is_string()) bad("objective is not a string");
    try {
      c.objective = parse_objective(cfg["objective"].get<std::string>(), "objective");
    } catch (const InputError&) {
      bad("objective '" + cfg["objective"].get<std::string>() + "' is not time, energy or edp");
    }
  }
  if (cfg.contains("energy_window_ms")) {
    if (!cfg["energy_window_ms"].is_number()) bad("energy_window_ms is not a number");
    c.energy_window_ms = cfg["energy_window_ms"].get<double>();
    if (!(c.energy_window_ms >= 1 && c.energy_window_ms <= 60000))
      bad("energy_window_ms " + cfg["energy_window_ms"].dump() + " outside 1..60000");
  }
  return c;
}

SearchState load_run(const std::string& dir, const Grammar& g) {
  SearchState s = load_checkpoint(dir, g);
  if (fs::exists(fs::path(dir) / "generations.jsonl"))
    check_log(dir, read_generation_log(dir), s.next_generation);
  return s;
}

}  // namespace evk::gi
