// Catalogue cases (docs/ROBUSTNESS.md) for a damaged GI run directory under `TOOL gi run --resume DIR`
// and `TOOL gi report DIR`, shared by the three tools' catalogues:
//
//   EVK_GI_RUNDIR_CASES(StereoCatalogue, "stereo", evk::stereo::make_gi_problem)
//
// Each case writes a well-formed run directory of the tool's own grammar (config.json as `gi run`
// writes it, a checkpoint after two generations, their generation logs), damages one file and runs
// the real executable: exit 2, one stderr line naming the file and the problem, and the directory
// exactly as it was (no file added, none changed: the resume fails before any GPU work or write).
// These run on machines without a GPU: every check happens before the evaluators start.
#pragma once
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catalogue.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/grammar.hpp"
#include "evk/gi/search.hpp"

namespace evk::testing::catalogue {

// Every file below dir with its content.
inline std::map<std::string, std::string> contents_of(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& f : files_in(dir))
    if (fs::is_regular_file(dir / f)) m[f] = slurp(dir / f);
  return m;
}

// A run directory of problem p after two generations of a search with population 4.
inline void write_run_dir(const fs::path& run, const gi::Problem& p) {
  fs::create_directories(run);
  const gi::Grammar g = gi::make_grammar(p);
  gi::Rng rng(7);
  gi::SearchState s;
  s.next_generation = 2;
  for (int i = 0; i < 4; ++i) {
    gi::Individual ind;
    ind.genome = gi::mutate(g, gi::empty_genome(g), rng);
    ind.text = gi::format_genome(g, ind.genome);
    ind.status = "ok";
    ind.fitness = ind.time_ms = ind.raw_ms = 1.0 + i;
    s.population.push_back(ind);
    s.tabu_genotype.insert(gi::genome_hash(g, ind.genome));
  }
  s.tabu_phenotype = {0x1234u};
  s.tabu_code = {0xabcdu};
  s.best_genome = s.population[0].text;
  s.best_speedup = 1.25;
  s.best_ms = 0.8;
  s.best_ref_ms = 1.0;
  for (int gen = 0; gen < 2; ++gen) {
    gi::GenerationStats st;
    st.generation = gen;
    st.case_seed = 100 + gen;
    st.size_class = p.size_classes().front().name;
    st.ref_ms = 1.0;
    st.best_ms = 0.8;
    st.best_speedup = 1.25;
    st.median_ms = 1.1;
    st.evaluated = st.compiled = st.correct = 4;
    st.best_genome = st.best_so_far_genome = s.best_genome;
    st.best_so_far_speedup = 1.25;
    s.history.push_back(st);
  }
  std::ostringstream r;
  r << rng;
  s.rng = r.str();
  gi::save_checkpoint(run.string(), s);
  gi::write_generation_logs(run.string(), s.history);
  const nlohmann::json cfg{{"problem", p.name()},      {"entry", p.kernel_entry()}, {"population", 4},
                           {"generations", 3},         {"seed", 1},                 {"tolerance", 0.1},
                           {"repeats", 7},             {"warmup", 1},               {"device", "NVIDIA H100"},
                           {"cc", 90},                 {"device_index", 0},         {"devices", {0}},
                           {"classes", {p.size_classes().front().name}},           {"started", "2026-11-23T00:00:00Z"},
                           {"grammar_rules", g.rules.size()}};
  spit(run / "config.json", cfg.dump(2) + "\n");
}

// The edits a case applies to a file of the run directory.
inline std::string cut(const std::string& s, std::size_t keep) { return s.substr(0, std::min(keep, s.size())); }
inline std::string replace_value(std::string json_text, const std::string& key, const std::string& value) {
  nlohmann::json j = nlohmann::json::parse(json_text);
  j[key] = nlohmann::json::parse(value);
  return j.dump(1) + "\n";
}
inline std::string first_lines(const std::string& s, int n) {
  std::size_t at = 0;
  for (int i = 0; i < n; ++i) {
    const auto nl = s.find('\n', at);
    if (nl == std::string::npos) return s;
    at = nl + 1;
  }
  return s.substr(0, at);
}

// One case: write the run directory, set `file` to edit(its text), run `tool gi <command> DIR`
// and expect the rejection naming the file and `problem`, with the directory unchanged.
template <class Edit>
void gi_rundir_case(Recorder& rec, const fs::path& dir, const std::string& tool, const gi::Problem& p,
                    const std::string& command, const std::string& file, Edit edit, const std::string& problem) {
  const fs::path run = dir / "run";
  write_run_dir(run, p);
  spit(run / file, edit(slurp(run / file)));
  const auto before = contents_of(dir);
  const std::string args = command == "resume" ? "gi run --resume " + q(run) : "gi report " + q(run);
  const auto& r = rec.tool(args);
  expect_rejected(r, {(run / file).string(), problem}, dir, files_in(dir));
  EXPECT_EQ(contents_of(dir), before) << tool << " " << args << " changed the run directory";
}

}  // namespace evk::testing::catalogue

// The cases of one tool (suite: its catalogue's test suite; make_problem: its gi::Problem factory).
#define EVK_GI_RUNDIR_CASES(suite, tool_name, make_problem)                                                                 \
  namespace {                                                                                                          \
  using ::evk::testing::catalogue::cut;                                                                                \
  using ::evk::testing::catalogue::first_lines;                                                                        \
  using ::evk::testing::catalogue::gi_rundir_case;                                                                     \
  using ::evk::testing::catalogue::replace_value;                                                                      \
  void gi_case(::evk::testing::catalogue::Recorder& rec, const ::std::filesystem::path& dir, const char* command,      \
               const char* file, const ::std::function<std::string(const std::string&)>& edit, const char* problem) { \
    const auto p = make_problem();                                                                                     \
    gi_rundir_case(rec, dir, tool_name, *p, command, file, edit, problem);                                                  \
  }                                                                                                                    \
  }                                                                                                                    \
  /* a well-formed run directory: the fixture the damaged cases start from */                                          \
  EVK_CATALOGUE_CASE(suite, G00_GiRunDirectoryWellFormed, tool_name, "gi run directory",                                    \
                     "a well-formed run directory (checkpoint after 2 generations): loaded, reported", "accept: report") { \
    const auto p = make_problem();                                                                                     \
    const auto run = dir / "run";                                                                                      \
    ::evk::testing::catalogue::write_run_dir(run, *p);                                                                 \
    const auto g = ::evk::gi::make_grammar(*p);                                                                        \
    EXPECT_EQ(::evk::gi::load_run(run.string(), g).population.size(), 4u);                                            \
    EXPECT_EQ(::evk::gi::read_run_config(run.string(), *p, 7).population, 4);                                         \
    const auto& r = rec.tool("gi report " + ::evk::testing::catalogue::q(run));                                        \
    ASSERT_EQ(r.exit_code, 0) << r.err;                                                                                \
    EXPECT_NE(::evk::testing::catalogue::slurp(run / "report.md").find("| 1 |"), std::string::npos);                  \
    EXPECT_TRUE(std::filesystem::exists(run / "fitness.svg"));                                                         \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G01_ResumeConfigNotJson, tool_name, "gi run directory",                                        \
                     "gi run --resume: config.json is not JSON", "reject") {                                           \
    gi_case(rec, dir, "resume", "config.json", [](const std::string&) { return "population: 4\n"; }, "not JSON");     \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G02_ResumeConfigCut, tool_name, "gi run directory",                                            \
                     "gi run --resume: config.json cut in the middle", "reject") {                                     \
    gi_case(rec, dir, "resume", "config.json", [](const std::string& s) { return cut(s, s.size() / 2); }, "not JSON"); \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G03_ResumeConfigEmpty, tool_name, "gi run directory",                                          \
                     "gi run --resume: config.json empty", "reject") {                                                 \
    gi_case(rec, dir, "resume", "config.json", [](const std::string&) { return ""; }, "not JSON");                    \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G04_ResumeConfigWrongType, tool_name, "gi run directory",                                     \
                     "gi run --resume: config.json population is a string", "reject") {                               \
    gi_case(rec, dir, "resume", "config.json",                                                                         \
            [](const std::string& s) { return replace_value(s, "population", "\"4\""); }, "population is not a number"); \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G05_ResumeConfigNotAnObject, tool_name, "gi run directory",                                   \
                     "gi run --resume: config.json is a JSON array", "reject") {                                       \
    gi_case(rec, dir, "resume", "config.json", [](const std::string&) { return "[4, 3, 1]\n"; }, "not a JSON object"); \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G06_ResumeConfigHugeInteger, tool_name, "gi run directory",                                   \
                     "gi run --resume: config.json generations 1e36", "reject") {                                      \
    gi_case(rec, dir, "resume", "config.json",                                                                         \
            [](const std::string& s) { return replace_value(s, "generations", "1e36"); }, "generations is not an integer in range"); \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G07_ResumeConfigOutOfRange, tool_name, "gi run directory",                                    \
                     "gi run --resume: config.json population -5 (a run needs 2..100000)", "reject") {                 \
    gi_case(rec, dir, "resume", "config.json",                                                                         \
            [](const std::string& s) { return replace_value(s, "population", "-5"); }, "population -5 outside 2..100000"); \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G08_ResumeConfigMissingKey, tool_name, "gi run directory",                                    \
                     "gi run --resume: config.json without its population", "reject") {                                \
    gi_case(rec, dir, "resume", "config.json",                                                                         \
            [](const std::string& s) {                                                                                 \
              auto j = nlohmann::json::parse(s);                                                                       \
              j.erase("population");                                                                                   \
              return j.dump(1);                                                                                        \
            },                                                                                                         \
            "no population");                                                                                          \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G09_ResumeConfigOfAnotherTool, tool_name, "gi run directory",                                 \
                     "gi run --resume: config.json of another tool's run", "reject") {                                 \
    gi_case(rec, dir, "resume", "config.json",                                                                         \
            [](const std::string& s) { return replace_value(s, "problem", "\"another_tool\""); },                      \
            "a run of 'another_tool'");                                                                                \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G10_ResumeConfigUnknownClass, tool_name, "gi run directory",                                  \
                     "gi run --resume: config.json names a size class the tool does not have", "reject") {             \
    gi_case(rec, dir, "resume", "config.json",                                                                         \
            [](const std::string& s) { return replace_value(s, "classes", "[\"no-such-class\"]"); },                   \
            "'no-such-class' is not a size class");                                                                    \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G11_ResumeCheckpointCut, tool_name, "gi run directory",                                       \
                     "gi run --resume: checkpoint.json cut inside a population record", "reject") {                    \
    gi_case(rec, dir, "resume", "checkpoint.json",                                                                     \
            [](const std::string& s) { return cut(s, s.find("\"status\"")); }, "not a checkpoint");                    \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G12_ResumeCheckpointWrongType, tool_name, "gi run directory",                                 \
                     "gi run --resume: checkpoint.json population is a number", "reject") {                            \
    gi_case(rec, dir, "resume", "checkpoint.json",                                                                     \
            [](const std::string& s) { return replace_value(s, "population", "4"); }, "population is not an array");  \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G13_ResumeCheckpointHugeInteger, tool_name, "gi run directory",                               \
                     "gi run --resume: checkpoint.json next_generation 1e36", "reject") {                              \
    gi_case(rec, dir, "resume", "checkpoint.json",                                                                     \
            [](const std::string& s) { return replace_value(s, "next_generation", "1e36"); },                          \
            "next_generation is not an integer in range");                                                             \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G14_ResumeCheckpointHistoryCut, tool_name, "gi run directory",                                \
                     "gi run --resume: checkpoint.json with a generation of history removed", "reject") {              \
    gi_case(rec, dir, "resume", "checkpoint.json",                                                                     \
            [](const std::string& s) {                                                                                 \
              auto j = nlohmann::json::parse(s);                                                                       \
              j["history"].erase(1);                                                                                   \
              return j.dump(1);                                                                                        \
            },                                                                                                         \
            "next_generation 2 but 1 generations of history");                                                        \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G15_ResumeCheckpointForeignGenome, tool_name, "gi run directory",                             \
                     "gi run --resume: checkpoint.json genome naming a rule the grammar does not have", "reject") {    \
    gi_case(rec, dir, "resume", "checkpoint.json",                                                                     \
            [](const std::string& s) {                                                                                 \
              auto j = nlohmann::json::parse(s);                                                                       \
              j["population"][0]["genome"] = "<_K_99999>";                                                             \
              return j.dump(1);                                                                                        \
            },                                                                                                         \
            "_K_99999");                                                                                               \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G16_ResumeCheckpointBadRng, tool_name, "gi run directory",                                    \
                     "gi run --resume: checkpoint.json RNG state cut", "reject") {                                     \
    gi_case(rec, dir, "resume", "checkpoint.json",                                                                     \
            [](const std::string& s) {                                                                                 \
              auto j = nlohmann::json::parse(s);                                                                       \
              j["rng"] = j["rng"].get<std::string>().substr(0, 40);                                                    \
              return j.dump(1);                                                                                        \
            },                                                                                                         \
            "bad RNG state");                                                                                          \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G17_ResumeLogCutMidLine, tool_name, "gi run directory",                                       \
                     "gi run --resume: generations.jsonl cut inside its last line", "reject") {                        \
    gi_case(rec, dir, "resume", "generations.jsonl", [](const std::string& s) { return cut(s, s.size() - 20); },      \
            "bad line 2");                                                                                               \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G18_ResumeLogTruncated, tool_name, "gi run directory",                                        \
                     "gi run --resume: generations.jsonl empty (checkpoint has 2 generations)", "reject") {            \
    gi_case(rec, dir, "resume", "generations.jsonl", [](const std::string&) { return ""; },                           \
            "holds 0 generations, checkpoint.json 2 (truncated?)");                                                    \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G19_ReportLogCutMidLine, tool_name, "gi run directory",                                       \
                     "gi report: generations.jsonl cut inside its last line", "reject") {                              \
    gi_case(rec, dir, "report", "generations.jsonl", [](const std::string& s) { return cut(s, s.size() - 20); },      \
            "bad line 2");                                                                                               \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G20_ReportLogTruncated, tool_name, "gi run directory",                                        \
                     "gi report: generations.jsonl empty (checkpoint has 2 generations)", "reject") {             \
    gi_case(rec, dir, "report", "generations.jsonl", [](const std::string&) { return ""; },                           \
            "holds 0 generations");                                                                                    \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G21_ReportLogLineRepeated, tool_name, "gi run directory",                                     \
                     "gi report: generations.jsonl with its first line twice", "reject") {                             \
    gi_case(rec, dir, "report", "generations.jsonl", [](const std::string& s) { return first_lines(s, 1) + s; },      \
            "entry 2 is generation 0, expected 1");                                                                    \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G22_ReportLogWrongType, tool_name, "gi run directory",                                        \
                     "gi report: generations.jsonl with ref_ms a string", "reject") {                                  \
    gi_case(rec, dir, "report", "generations.jsonl",                                                                   \
            [](const std::string& s) { return first_lines(s, 1) + "{\"generation\": 1, \"ref_ms\": \"fast\"}\n"; },    \
            "bad line 2");                                                                                               \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G23_ReportLogHugeInteger, tool_name, "gi run directory",                                      \
                     "gi report: generations.jsonl with evaluated 1e36", "reject") {                                   \
    gi_case(rec, dir, "report", "generations.jsonl",                                                                   \
            [](const std::string& s) { return first_lines(s, 1) + "{\"generation\": 1, \"evaluated\": 1e36}\n"; },     \
            "evaluated is not an integer in range");                                                                   \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G24_ReportConfigNotJson, tool_name, "gi run directory",                                       \
                     "gi report: config.json is not JSON (nothing written, not even fitness.svg)", "reject") {         \
    gi_case(rec, dir, "report", "config.json", [](const std::string& s) { return cut(s, 10); }, "not JSON");          \
  }                                                                                                                    \
  EVK_CATALOGUE_CASE(suite, G25_ReportCheckpointCut, tool_name, "gi run directory",                                       \
                     "gi report: checkpoint.json cut in the middle", "reject") {                                       \
    gi_case(rec, dir, "report", "checkpoint.json", [](const std::string& s) { return cut(s, s.size() / 2); },         \
            "not a checkpoint");                                                                                       \
  }
