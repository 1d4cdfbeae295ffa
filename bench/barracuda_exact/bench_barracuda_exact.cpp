// bench_barracuda_exact: the exact-match kernel's reads/s (100 bp) on the E. coli index (fits in
// L2) and on a large random-genome index built in-process by our indexer (BC_BENCH_GENOME_MBP,
// default 0 = skipped; >= 500 for the documented table), for the option sets that matter. GPU
// timing: CUDA events, warm-up, L2 flushed before every repeat, median (evk::time_gpu). The map
// pipeline end to end, its stages and the bwa peer: bench_pipeline.cpp; the inexact search and its
// bwa peers: bench_inexact.cpp.
#include <stdexcept>
#include <benchmark/benchmark.h>
#include <htslib/bgzf.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <unistd.h>

#include "core/gpu_exact.hpp"
#include "core/kernel_config.hpp"
#include "gi/kernel_variant.hpp"
#include "core/match.hpp"
#include "evk/cuda_check.hpp"
#include "evk/device.hpp"
#include "evk/gpu_timer.hpp"
#include "bench_common.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;

namespace {

using bcb::Genome;
using bcb::get_genome;

// 100 bp reads: 85% exact (either strand), 15% with one substitution (as the paper's 1000 Genomes mix).
bc::ReadCodes sample_reads(const Genome& g, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  bc::ReadCodes rc;
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    s = g.fwd.substr(rng() % (g.fwd.size() - 100), 100);
    if (rng() % 100 < 15) s[rng() % 100] = "ACGT"[rng() & 3];
    if (rng() & 1) {
      std::string r(s.rbegin(), s.rend());
      for (auto& c : r) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
      s = r;
    }
    rc.add(s.data(), s.size());
  }
  return rc;
}

// The option sets that matter: the human defaults, the paper's evolved winners (K20: scache,
// cache_threads=2, BLOCK_W=128; K40: cache_threads=4, BLOCK_W=128, direct_global_bwt, texture
// queries), no BWT cache, k/l in parallel, parallel occurrence counting, 8-byte cache loads,
// larger blocks, a local query buffer; entries with <rule> genes are genomes (applied through the GI
// engine like `map --kernel FILE`).
const std::vector<std::pair<std::string, std::string>>& option_sets() {
  static const std::vector<std::pair<std::string, std::string>> s = {
      {"default", ""},
      {"paper_K20", "scache_global_bwt=true cache_threads=2 BLOCK_W=128"},
      {"paper_K40", "cache_threads=4 BLOCK_W=128 direct_global_bwt=true sequence_global=false"},
      {"no_cache", "cache_global_bwt=false"},
      {"kl_par", "kl_par=true"},
      {"occ_par_ct4", "cache_threads=4 occ_par=true"},
      {"mycache2", "mycache4=false mycache2=true"},
      {"scache", "scache_global_bwt=true"},
      {"block256", "BLOCK_W=256"},
      {"local_query", "direct_sequence=false"},
      // gi (docs "Genetic improvement"): the pre-tuned original (gi tune on the H200), the evolved
      // genome's config part alone, and the minimized evolved genome (config + 3 code edits)
      {"gi_pretuned", "BLOCK_W=32 cache_threads=1"},
      {"gi_config_only", "kl_par=true direct_global_bwt=true cache_global_bwt=false"},
      {"gi_evolved_h200", "kl_par=true direct_global_bwt=true cache_global_bwt=false <_K_287> <pragma_K_278><pragma_K9> <IF_K_196>"},
  };
  return s;
}

constexpr std::size_t kKernelReads = 1u << 21;  // 2 Mi reads of 100 bp per launch

void BM_Kernel(benchmark::State& state, const std::string& genome, const std::string& cfg_text) {
  if (!evk::gpu_environment().usable()) {
    state.SkipWithError(("no usable GPU: " + evk::gpu_environment().status).c_str());
    return;
  }
  Genome* g = get_genome(genome);
  if (!g) {
    state.SkipWithError("genome data missing");
    return;
  }
  const auto& dev = evk::gpu_environment().devices[0];
  bc::KernelVariant kv;  // config only: the original source; with genes: the patched one (loop guards included)
  if (cfg_text.find('<') == std::string::npos) {
    kv.config = bc::validate_kernel_config(bc::parse_config_text(cfg_text));
  } else {
    evk::Variant var;
    var.kernel = "barracuda_exact";
    var.id = "bench";
    var.genome = cfg_text;
    kv = bc::resolve_kernel_variant(var);
  }
  const evk::gi::Config& cfg = kv.config;
  static std::map<std::string, std::pair<bc::ReadCodes, std::vector<bc::KL>>> sets;
  auto& set = sets[genome];
  if (set.first.size() == 0) {
    set.first = sample_reads(*g, kKernelReads, 42);
    set.second = bc::match_cpu(g->idx, set.first);
  }
  bc::PackedReads p;
  bc::pack_reads(set.first, p);
  bc::DeviceBwt bwt(g->idx);
  bc::DeviceReads dr;
  dr.upload(p, nullptr);
  evk::CudaLibrary lib = bc::load_exact_kernel(cfg, dev.cc(), kv.source);
  cudaKernel_t k = lib.kernel(bc::kKernelEntry);
  bc::ExactArgs a;
  a.bwt = bwt.data();
  a.consts = bwt.consts();
  dr.fill_args(a);
  // correctness first: every read's (k, l) must equal the CPU backend's
  EVK_CUDA(cudaMemset(a.kl, 0xA5, p.size() * 16));
  bc::launch_exact(k, cfg, a, nullptr);
  std::vector<bc::KL> got(p.size());
  EVK_CUDA(cudaMemcpy(got.data(), a.kl, p.size() * 16, cudaMemcpyDeviceToHost));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) wrong += !(got[i] == set.second[i]);
  if (wrong) {
    state.SkipWithError((std::to_string(wrong) + " reads differ from the CPU backend").c_str());
    return;
  }
  evk::TimingStats t;
  for (auto _ : state) {
    t = evk::time_gpu([&](cudaStream_t s) { bc::launch_exact(k, cfg, a, s); });
    state.SetIterationTime(t.median_ms / 1e3);
  }
  state.counters["reads_per_s"] = static_cast<double>(p.size()) / (t.median_ms / 1e3);
  state.counters["median_ms"] = t.median_ms;
  state.counters["spread"] = t.spread();
  state.counters["reads"] = static_cast<double>(p.size());
  state.counters["genome_mbp"] = static_cast<double>(g->idx.l_pac) / 1e6;
  state.counters["bwt_MiB"] = static_cast<double>(bwt.bytes()) / (1 << 20);
  state.counters["index_build_s"] = g->build_s;
  state.counters["index_build_rss_GiB"] = g->rss_gib;
  state.SetLabel(dev.name);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> gs = {"ecoli"};
  if (const char* m = std::getenv("BC_BENCH_GENOME_MBP"); m && std::atol(m) > 0) gs.push_back("random" + std::string(m));
  for (const auto& g : gs)
    for (const auto& [name, text] : option_sets())
      benchmark::RegisterBenchmark(("BM_Kernel/" + g + "/" + name).c_str(), BM_Kernel, g, text)
          ->UseManualTime()
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
  bcb::register_pipeline_benchmarks();
  bcb::register_inexact_benchmarks(gs);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  bcb::print_pipeline_summary();
  bcb::remove_pipeline_data();
  bcb::remove_inexact_data();
  benchmark::Shutdown();
  return 0;
}
