// GPU tests of energy: the NVML meter on a real GPU (opens for every device by PCI bus id, a busy
// burst has joules > 0 and plausible watts), the worker's energy burst on the toy kernel, a tiny
// `gi run --objective energy` through the command line that records joules and validates with them,
// and `gi minimize` / `gi tune` for energy and EDP.
#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "evk/device.hpp"
#include "evk/energy.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gi/search.hpp"
#include "evk_testing.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

// Plausible average power of a busy datacentre or desktop GPU.
constexpr double kMinWatts = 20, kMaxWatts = 2000;

std::unique_ptr<EnergyMeter> meter_or_skip(int device, bool& skip) {
  std::string why;
  auto m = open_energy_meter(device, why);
  skip = false;
  if (!m && gpu_environment().devices.at(static_cast<std::size_t>(device)).cc() < 70) skip = true;  // before Volta
  else if (!m) ADD_FAILURE() << "no energy meter on device " << device << ": " << why;
  return m;
}

TEST(GiEnergyGpu, MeterOpensForEveryGpuAndABusyBurstHasPlausibleWatts) {
  EVK_REQUIRE_GPU();
  bool skip = false;
  std::set<std::string> buses;
  for (const auto& d : gpu_environment().devices) {
    auto m = meter_or_skip(d.index, skip);
    if (skip) GTEST_SKIP() << "device " << d.index << " (" << d.name << ") is older than Volta: no energy counter";
    ASSERT_TRUE(m);
    buses.insert(m->bus_id());
  }
  EXPECT_EQ(buses.size(), gpu_environment().devices.size()) << "two CUDA devices mapped to one PCI bus id";

  auto m = meter_or_skip(0, skip);
  ASSERT_TRUE(m);
  unsigned long long a = 0, b = 0;
  std::string why;
  ASSERT_TRUE(m->read_mj(a, why)) << why;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(m->read_mj(b, why)) << why;
  EXPECT_GE(b, a);  // never backwards
  EXPECT_GT(b, a) << "the counter did not move in 300 ms (an idle GPU still draws power)";

  // a busy burst: 4 memsets of 512 MiB per step
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  void* buf = nullptr;
  const std::size_t bytes = 512ull << 20;
  ASSERT_EQ(cudaMalloc(&buf, bytes), cudaSuccess);
  int v = 0;
  const auto step = [&]() -> long long {
    for (int i = 0; i < 4; ++i) cudaMemsetAsync(buf, ++v & 0xff, bytes);
    cudaDeviceSynchronize();
    return 4;
  };
  const BurstEnergy e = measure_burst(*m, step);
  cudaFree(buf);
  ASSERT_TRUE(e.ok) << e.why;
  std::printf("burst: %.4f J per 512 MiB memset, %.1f W over %.3f s, %lld launches, %d counter changes\n",
              e.joules_per_launch, e.watts, e.seconds, e.launches, e.changes);
  EXPECT_GT(e.joules_per_launch, 0);
  EXPECT_GE(e.watts, kMinWatts);
  EXPECT_LE(e.watts, kMaxWatts);
  EXPECT_GE(e.seconds, 0.2);
  EXPECT_GE(e.changes, 2);
}

Worker::Options self_worker() {
  Worker::Options o;
  o.argv = {"/proc/self/exe", "gi", "worker", "--device", "0"};
  return o;
}

TEST(GiEnergyGpu, WorkerMeasuresJoulesPerLaunchOnlyWhenAsked) {
  EVK_REQUIRE_GPU();
  bool skip = false;
  if (!meter_or_skip(0, skip) && skip) GTEST_SKIP() << "no energy counter before Volta";
  auto p = testing::make_toy_problem();
  Worker w(self_worker());
  const DeviceSummary d = w.device();
  w.set_case(1, false, "large");
  const std::string src = p->kernel_source();
  const std::string wrong = src.substr(0, src.find("//@gi end")) + "if (i == 0) out[0] = 7.0f;\n" +
                            src.substr(src.find("//@gi end"));
  std::vector<CompileRequest> reqs;
  for (const auto& s : {src, wrong}) reqs.push_back({s, p->compile_options(p->default_config()), true, ""});
  auto comp = compile_parallel(reqs, d.cc, true, 2, "", false);
  for (auto& c : comp) ASSERT_TRUE(c.ok) << c.log;
  const Config cfg = p->default_config();
  TimingSpec t{1, 5, true};
  const RunResult plain = w.run(comp[0].cubin, "toy_filter", cfg, t, 30);
  ASSERT_TRUE(plain.ok()) << plain.message;
  EXPECT_EQ(plain.joules, 0);
  EXPECT_TRUE(plain.energy_note.empty()) << plain.energy_note;
  t.energy = true;
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = w.run(comp[0].cubin, "toy_filter", cfg, t, 30 + t.energy_limit_s());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.check.penalty, 0) << r.check.summary;
  ASSERT_GT(r.joules, 0) << r.energy_note;
  std::printf("toy kernel: %.4f ms, %.3g J per launch, %.1f W over %.3f s (%lld launches), %.2f s wall\n", r.median_ms,
              r.joules, r.watts, r.energy_s, r.energy_launches, wall);
  EXPECT_GE(r.watts, kMinWatts);
  EXPECT_LE(r.watts, kMaxWatts);
  EXPECT_GE(r.energy_s, 0.2);
  EXPECT_GT(r.energy_launches, 1);
  // a launch in the burst (warm L2, no flush) takes about as long as a timed one
  const double burst_ms = 1000 * r.energy_s / static_cast<double>(r.energy_launches);
  EXPECT_GT(burst_ms, 0.2 * r.median_ms);
  EXPECT_LT(burst_ms, 5 * r.median_ms + 0.05);
  EXPECT_LT(wall, t.energy_limit_s() + 5);
  // the checked runs are unchanged: a wrong kernel is still caught, and gets no burst
  const RunResult bad = w.run(comp[1].cubin, "toy_filter", cfg, t, 30 + t.energy_limit_s());
  ASSERT_TRUE(bad.ok()) << bad.message;
  EXPECT_GT(bad.check.penalty, 0);
  EXPECT_EQ(bad.joules, 0);
  EXPECT_EQ(bad.energy_note, "not measured: wrong answer");
}

// The tiny energy run the docs describe, through the toy tool: exit 0, joules recorded everywhere
// the objective needs them, validation with joules, and a resume for another objective refused.
TEST(GiEnergyCli, TinyEnergyRunRecordsJoules) {
  EVK_REQUIRE_GPU();
  bool skip = false;
  if (!meter_or_skip(0, skip) && skip) GTEST_SKIP() << "no energy counter before Volta";
  evk::testing::TempDir dir;
  const std::string self = "/proc/" + std::to_string(::getpid()) + "/exe";
  const std::string run = (dir / "run").string();
  auto r = evk::testing::run(self + " gi run --objective energy --pop 4 --generations 2 --seed 3 --class large --out " +
                             run + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["objective"], "energy");
  const auto cfg = nlohmann::json::parse(read_text(run + "/config.json"));
  EXPECT_EQ(cfg["objective"], "energy");
  const auto log = read_generation_log(run);
  ASSERT_EQ(log.size(), 2u);
  for (const auto& h : log) {
    EXPECT_EQ(h.objective, "energy");
    EXPECT_GT(h.ref_j, 0) << "generation " << h.generation;
  }
  int with_joules = 0;
  std::istringstream cand(read_text(run + "/candidates.jsonl"));
  for (std::string line; std::getline(cand, line);) {
    const auto c = nlohmann::json::parse(line);
    if (c["status"] == "ok" && c["penalty"] == 0 && c["joules"].get<double>() > 0) ++with_joules;
  }
  EXPECT_GT(with_joules, 0) << read_text(run + "/candidates.jsonl");
  const std::string report = read_text(run + "/report.md");
  EXPECT_NE(report.find("- objective: energy"), std::string::npos) << report;
  if (!j["best_genome"].get<std::string>().empty()) {
    EXPECT_GT(j["best_j"].get<double>(), 0) << r.out;
    EXPECT_NE(read_text(run + "/best.genome").find("# objective: energy"), std::string::npos);
    // validation reports joules per job (it may refuse an over-fitted genome: exit 0 or 1)
    r = evk::testing::run(self + " gi validate " + run + "/best.genome --class large --cases 2 --json");
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err << r.out;
    const auto v = nlohmann::json::parse(r.out);
    for (const auto& k : v["classes"]) {
      EXPECT_TRUE(k["energy"].get<bool>()) << k.dump();
      for (const auto& c : k["cases"]) EXPECT_GT(c["original_j"].get<double>(), 0) << c.dump();
    }
  }
  r = evk::testing::run(self + " gi run --resume " + run + " --objective time");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--objective"), std::string::npos) << r.err;
}

// gi minimize and gi tune for energy and EDP through the toy tool: the values are joules (J*ms), and
// the genome files say what they were measured for.
TEST(GiEnergyCli, MinimizeAndTuneForEnergyAndEdp) {
  EVK_REQUIRE_GPU();
  bool skip = false;
  if (!meter_or_skip(0, skip) && skip) GTEST_SKIP() << "no energy counter before Volta";
  evk::testing::TempDir dir;
  const std::string self = "/proc/" + std::to_string(::getpid()) + "/exe";
  const Grammar g = testing::toy_grammar();
  {
    std::ofstream f(dir / "in.genome");
    f << "BLOCK_W=256 <_K_" << testing::line_of(g, "scratch[i] = acc;") << ">\n";
  }
  auto r = evk::testing::run(self + " gi minimize " + (dir / "in.genome").string() +
                             " --objective energy --energy-window 50 --class large -o " + (dir / "min.genome").string() +
                             " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["objective"], "energy");
  EXPECT_EQ(j["unit"], "J");
  EXPECT_GT(j["base_ms"].get<double>(), 0) << r.out;
  EXPECT_LT(j["base_ms"].get<double>(), 10) << "joules per launch of a toy kernel";
  EXPECT_NE(read_text((dir / "min.genome").string()).find("# objective: energy"), std::string::npos);
  r = evk::testing::run(self + " gi tune " + (dir / "min.genome").string() +
                        " --objective edp --energy-window 50 --class large -o " + (dir / "tuned.genome").string() +
                        " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["objective"], "edp");
  EXPECT_EQ(j["unit"], "J*ms");
  EXPECT_EQ(j["table"].size(), j["planned"].get<std::size_t>());
  int ok = 0;
  for (const auto& e : j["table"]) ok += e["status"] == "ok" && e["ms"].get<double>() > 0;
  EXPECT_GT(ok, 0) << r.out;
  EXPECT_NE(read_text((dir / "tuned.genome").string()).find("# objective: edp"), std::string::npos);
  std::printf("tune for edp: %s -> %s, %g -> %g J*ms\n", j["input"].get<std::string>().c_str(),
              j["output"].get<std::string>().c_str(), j["input_ms"].get<double>(), j["output_ms"].get<double>());
}

}  // namespace
}  // namespace evk::gi
