// `gi run/evolve/minimize/tune --objective` through the command line, in process (the toy tool), on
// the CPU: a bad objective, energy or edp on a host without an energy counter, and a resumed run
// asked for another objective are each one stderr line and exit 2, before any worker starts or
// anything is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "evk/cli.hpp"
#include "evk/energy.hpp"
#include "evk/gi/cli.hpp"
#include "evk/gi/search.hpp"
#include "evk_testing.hpp"
#include "fake_evaluator.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

namespace fs = std::filesystem;

struct CliResult {
  int code = -1;
  std::string err;
};

// `toy gi ARGS...` in this process, stderr captured.
CliResult toy_gi(std::vector<std::string> args) {
  args.insert(args.begin(), {"toy", "gi"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  auto app = evk::make_app("toy", "the GI engine on the toy problem");
  add_gi_command(*app, [] { return testing::make_toy_problem(); });
  ::testing::internal::CaptureStderr();
  CliResult r;
  r.code = evk::run_cli(*app, static_cast<int>(argv.size()), argv.data());
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

// One line: "toy: " + a message containing every part.
void expect_one_line(const CliResult& r, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.code, 2) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_EQ(r.err.rfind("toy: ", 0), 0u) << r.err;
  for (const auto& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << "'" << p << "' not in: " << r.err;
}

bool host_has_energy_counter() {
  std::string why;
  return open_energy_meter(0, why) != nullptr;
}

std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) m[e.path().string()] = read_text(e.path().string());
  return m;
}

TEST(GiObjectiveCli, BadObjectiveIsRefusedNamingTheFlag) {
  evk::testing::TempDir dir;
  const auto r = toy_gi({"run", "--objective", "power", "--out", (dir / "r").string()});
  expect_one_line(r, {"--objective: must be time, energy or edp (got 'power')"});
  EXPECT_FALSE(fs::exists(dir / "r"));
  expect_one_line(toy_gi({"evolve", "--objective", "watts", "--out", (dir / "e").string(), "--overlay",
                          (dir / "o").string()}),
                  {"--objective", "'watts'"});
  EXPECT_FALSE(fs::exists(dir / "e"));
}

TEST(GiObjectiveCli, EnergyWithoutACounterIsOneLineAndExit2) {
  if (host_has_energy_counter()) GTEST_SKIP() << "this host's GPU has an energy counter";
  evk::testing::TempDir dir;
  for (const std::string o : {"energy", "edp"}) {
    const auto r = toy_gi({"run", "--objective", o, "--pop", "4", "--generations", "1", "--out", (dir / o).string()});
    expect_one_line(r, {"--objective: " + o + " needs the GPU's energy counter, and device 0 has none: "});
    EXPECT_FALSE(fs::exists(dir / o)) << "the refused run left its directory";
  }
  // --device N names that device
  expect_one_line(toy_gi({"run", "--objective", "energy", "--device", "3", "--out", (dir / "d").string()}),
                  {"device 3 has none"});
  // gi evolve refuses the same way, before its work directory exists
  const auto r = toy_gi({"evolve", "--objective", "energy", "--out", (dir / "e").string(), "--overlay",
                         (dir / "o").string()});
  expect_one_line(r, {"--objective: energy needs the GPU's energy counter"});
  EXPECT_FALSE(fs::exists(dir / "e"));
  // time needs no counter: the refusal above is not of every run (this one fails later, starting its
  // worker, which is not an --objective error)
}

// gi minimize and gi tune take --objective and --energy-window as gi run does, and refuse the same
// way: a bad objective, or energy / edp without a counter (on --device), one line and exit 2 before
// a worker starts or the output (-o, in a folder not made yet) is written.
TEST(GiObjectiveCli, MinimizeAndTuneRefuseLikeRun) {
  evk::testing::TempDir dir;
  const std::string genome = (dir / "in.genome").string();
  write_text_atomic(genome, "BLOCK_W=256\n");
  const fs::path out = dir / "new" / "out.genome";
  const std::vector<std::vector<std::string>> commands = {{"minimize", genome}, {"tune", genome}, {"tune"}};
  for (auto cmd : commands) {
    auto args = cmd;
    args.insert(args.end(), {"--objective", "power", "-o", out.string()});
    expect_one_line(toy_gi(args), {"--objective: must be time, energy or edp (got 'power')"});
    args = cmd;
    args.insert(args.end(), {"--energy-window", "0", "-o", out.string()});
    expect_one_line(toy_gi(args), {"--energy-window"});
    EXPECT_FALSE(fs::exists(dir / "new")) << cmd[0];
  }
  if (host_has_energy_counter()) GTEST_SKIP() << "this host's GPU has an energy counter";
  for (auto cmd : commands)
    for (const std::string o : {"energy", "edp"}) {
      auto args = cmd;
      args.insert(args.end(), {"--objective", o, "--energy-window", "300", "-o", out.string()});
      expect_one_line(toy_gi(args), {"--objective: " + o + " needs the GPU's energy counter, and device 0 has none: "});
      args.insert(args.end(), {"--device", "2"});
      expect_one_line(toy_gi(args), {"device 2 has none"});
      EXPECT_FALSE(fs::exists(dir / "new")) << cmd[0] << " " << o;
    }
}

// A run directory of `objective` after two generations (config.json as `gi run` writes it).
void write_run(const fs::path& run, const std::string& objective) {
  auto p = testing::make_toy_problem();
  const Grammar g = make_grammar(*p);
  testing::FakeEvaluator ev(*p);
  SearchOptions so;
  so.population = 6;
  so.generations = 2;
  so.run_dir = run.string();
  run_search(g, ev, so);
  std::string cfg = R"({"problem": "toy", "population": 6, "generations": 2, "seed": 1)";
  if (!objective.empty()) cfg += R"(, "objective": ")" + objective + "\"";
  write_text_atomic((run / "config.json").string(), cfg + "}\n");
}

TEST(GiObjectiveCli, ResumeRefusesAnotherObjective) {
  evk::testing::TempDir dir;
  const fs::path run = dir / "run";
  write_run(run, "time");
  auto before = contents(run);
  expect_one_line(toy_gi({"run", "--resume", run.string(), "--objective", "energy"}),
                  {"--objective: the run in " + run.string() + " was searched for time; --resume keeps a run's objective (got energy)"});
  EXPECT_EQ(contents(run), before);
  // a run from before objectives is a time run
  write_run(run, "");
  before = contents(run);
  expect_one_line(toy_gi({"run", "--resume", run.string(), "--objective", "edp"}), {"was searched for time", "(got edp)"});
  EXPECT_EQ(contents(run), before);
  // an energy run asked for edp
  write_run(run, "energy");
  before = contents(run);
  expect_one_line(toy_gi({"run", "--resume", run.string(), "--objective", "edp", "--generations", "3"}),
                  {"was searched for energy", "(got edp)"});
  EXPECT_EQ(contents(run), before);
  expect_one_line(toy_gi({"run", "--resume", run.string(), "--energy-window", "300"}), {"--energy-window"});
  EXPECT_EQ(contents(run), before);
  // and resumed without --objective it keeps energy, which needs the counter
  if (!host_has_energy_counter()) {
    expect_one_line(toy_gi({"run", "--resume", run.string(), "--generations", "3"}),
                    {"--objective: energy needs the GPU's energy counter"});
    EXPECT_EQ(contents(run), before);
  }
}

}  // namespace
}  // namespace evk::gi
