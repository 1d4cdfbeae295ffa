// `barracuda_exact index`: the backend and GPUs, progress on stderr, the summary or --json.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "core/index.hpp"
#include "evk/error.hpp"
#include "evk/progress.hpp"
#include "evk/strings.hpp"
#include "io/index_files.hpp"
#include "io/sequences.hpp"

namespace evk::barracuda_exact {
namespace {

struct IndexArgs {
  std::string ref, backend = "auto", devices, gpu_memory;
  int device = 0, threads = 0;
  bool verbose = false, json = false, check = false;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The GPUs the suffix sort runs on: none for the CPU backend.
std::vector<int> index_devices(const IndexArgs& a, std::string* why_cpu) {
  CommonOptions co;
  co.backend = a.backend;
  co.device = a.device;
  if (!a.devices.empty() && a.backend != "cpu") {
    const std::vector<int> d = parse_devices(a.devices);
    if (d.empty() && a.backend == "gpu") input_error("--devices", gpu_environment().status);
    if (d.empty()) *why_cpu = gpu_environment().status;
    return d;
  }
  const BackendChoice be = choose_backend(co);
  if (be.backend == Backend::gpu) return {be.device.index};
  *why_cpu = be.reason;
  return {};
}

std::uint64_t peak_host_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
}

void print_index(const IndexArgs& a, const BwtIndex& idx, const IndexReport& rep, double read_s, double write_s) {
  if (a.json) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : rep.gpus)
      gpus.push_back({{"device", g.device}, {"name", g.name}, {"peak_bytes", g.peak_bytes}, {"batches", g.batches},
                      {"suffixes", g.suffixes}, {"seconds", g.seconds}});
    nlohmann::json j = {{"reference", a.ref}, {"contigs", idx.contigs.size()}, {"bases", idx.l_pac},
                        {"ambiguous_runs", idx.holes.size()}, {"backend", rep.gpu ? "gpu" : "cpu"},
                        {"seconds", {{"read", read_s}, {"pack", rep.pack_s}, {"sort", rep.sort_s}, {"bwt", rep.bwt_s},
                                     {"write", write_s}}},
                        {"peak_host_bytes", peak_host_bytes()}, {"gpus", gpus}};
    if (rep.gpu) j["gpu_sort"] = {{"batches", rep.batches}, {"max_rounds", rep.max_rounds}, {"resorted", rep.resorted},
                                     {"doubled", rep.doubled}, {"doubling_steps", rep.doubling_steps}};
    if (rep.checked) j["check"] = {{"adjacent_pairs", idx.seq_len - 1}, {"disorders", rep.disorders}};
    if (rep.checked && rep.disorders > 0)
    throw std::runtime_error("index check: " + std::to_string(rep.disorders) + " adjacent suffix pairs out of order; no index written");
  if (!rep.fallback.empty()) j["fallback"] = rep.fallback;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf("indexed %s: %zu contigs, %lld bases, %zu ambiguous runs\n", a.ref.c_str(), idx.contigs.size(),
              static_cast<long long>(idx.l_pac), idx.holes.size());
}

void run_index(const IndexArgs& a) {
  std::string why_cpu;
  IndexOptions io;
  io.devices = index_devices(a, &why_cpu);
  io.threads = a.threads;
  io.check_order = a.check;
  if (!a.gpu_memory.empty()) io.gpu_memory = parse_size(a.gpu_memory, "--gpu-memory", 1024);
  std::unique_ptr<Progress> bar;
  io.progress = [&](const std::string& stage, double f) {
    if (stage != "sort") return;
    if (!bar) bar = std::make_unique<Progress>("sorting suffixes", 100.0, "%", a.verbose || ::isatty(2));
    bar->update(100.0 * f);
  };
  auto t = std::chrono::steady_clock::now();
  const auto seqs = read_reference(a.ref);
  const double read_s = seconds_since(t);
  IndexReport rep;
  const BwtIndex idx = build_index(seqs, io, &rep);
  if (bar) bar->finish();
  if (rep.checked && rep.disorders > 0)
    throw std::runtime_error("index check: " + std::to_string(rep.disorders) + " adjacent suffix pairs out of order; no index written");
  if (!rep.fallback.empty())
    std::fprintf(stderr, "barracuda_exact index: %s; sorting the suffixes on the CPU\n", rep.fallback.c_str());
  t = std::chrono::steady_clock::now();
  write_index(idx, a.ref);
  const double write_s = seconds_since(t);
  print_index(a, idx, rep, read_s, write_s);
  if (a.verbose) {
    std::string where = rep.gpu ? "GPU" : "CPU" + (why_cpu.empty() ? std::string() : " (" + why_cpu + ")");
    for (const auto& g : rep.gpus)
      where += " " + std::to_string(g.device) + ":" + g.name + " peak " + std::to_string(g.peak_bytes >> 20) + " MiB";
    std::fprintf(stderr, "suffix sort on %s\nread %.2f s, pack %.2f s, sort %.2f s, bwt %.2f s, write %.2f s; peak host %llu MiB\n",
                 where.c_str(), read_s, rep.pack_s, rep.sort_s, rep.bwt_s, write_s,
                 static_cast<unsigned long long>(peak_host_bytes() >> 20));
  }
}

}  // namespace

void add_index_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("index", "Build the bwa 0.7 index (REF.fa.{bwt,sa,pac,ann,amb}) of a FASTA reference, "
                                          "the suffixes sorted on the GPU when one is usable");
  auto a = std::make_shared<IndexArgs>();
  cmd->add_option("REF", a->ref, "FASTA reference, plain or gzip")->required();
  cmd->add_option("--backend", a->backend, "Where the suffixes are sorted: auto (a GPU if usable), cpu or gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}));
  cmd->add_option("--device", a->device, "GPU to use");
  cmd->add_option("--devices", a->devices, "GPUs sharing the sort: all or a list like 0,1 (default: --device)");
  cmd->add_option("--gpu-memory", a->gpu_memory, "Device memory the sort may use per GPU, like 8G (default: all free)");
  cmd->add_option("-t,--threads", a->threads, "Host threads (0 = all cores)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--check", a->check, "GPU sort: verify the suffix order, every adjacent pair of rows (exit 1, no index, on a fault)");
  cmd->add_flag("--verbose,-v", a->verbose, "Progress and per-stage times");
  cmd->add_flag("--json", a->json, "Machine-readable summary on stdout");
  cmd->callback([a] { run_index(*a); });
}

}  // namespace evk::barracuda_exact
