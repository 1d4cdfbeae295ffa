// bench_barracuda_exact, the paired-end inexact part: art_illumina pairs of E. coli end to end
// through `map` (bwa aln + sampe, map/map_run.hpp) on the GPU and the CPU, and the peer `bwa aln` x2
// + `bwa sampe` on the same pairs.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include "bench_common.hpp"
#include "evk/device.hpp"
#include "map/map_run.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;

namespace bcb {
namespace {

// Paired end: 500 k art_illumina pairs of E. coli (100 bp, fragments 300 +- 30; half of
// BC_BENCH_INEXACT_READS), written once; end to end through `map` and `bwa aln` x2 + `bwa sampe`.
const fs::path& paired_set() {
  static fs::path dir;
  if (!dir.empty()) return dir;
  const fs::path set = inexact_set_dir("ecoli");
  if (set.empty() || !fs::exists(set / "art_ref.fa")) return dir;  // needs art_illumina
  const std::string cmd = "art_illumina -ss HS25 -i " + (set / "art_ref.fa").string() + " -l 100 -c " +
                          std::to_string(inexact_reads_wanted() / 2) + " -p -m 300 -s 30 -rs 12 -na -q -o " +
                          (set / "pair").string() + " > /dev/null 2>&1 && gzip -f " + (set / "pair1.fq").string() +
                          " " + (set / "pair2.fq").string();
  if (std::system(cmd.c_str()) == 0) dir = set;
  return dir;
}

void BM_InexactEndToEndPaired(benchmark::State& state, bool gpu) {
  if (gpu && !evk::gpu_environment().usable()) {
    state.SkipWithError("no usable GPU");
    return;
  }
  const fs::path& d = paired_set();
  if (d.empty()) {
    state.SkipWithError("genome data or art_illumina missing");
    return;
  }
  bc::MapOptions o;
  o.ref = (d / "ref.fa").string();
  o.reads = (d / "pair1.fq.gz").string();
  o.reads2 = (d / "pair2.fq.gz").string();
  o.out = (d / "pairs.bam").string();
  o.gpu = gpu;
  o.inexact = true;
  bc::MapStats st;
  for (auto _ : state) {
    st = bc::run_map(o);
    state.SetIterationTime(st.total_s);
  }
  state.counters["reads_per_s"] = static_cast<double>(st.reads) / st.total_s;
  state.counters["pairs"] = static_cast<double>(st.counts.pairs);
  state.counters["search_s"] = st.match_s;  // lane seconds (summed over lanes)
  state.counters["kernel_s"] = st.kernel_s;
  state.counters["sam_s"] = st.records_s;
  state.counters["total_s"] = st.total_s;
  state.counters["proper_pair_reads"] = static_cast<double>(st.counts.proper_pairs);
  state.counters["threads"] = std::thread::hardware_concurrency();
}

void BM_BwaSampePeer(benchmark::State& state) {
  std::string bwa = std::getenv("BC_BENCH_BWA") ? std::getenv("BC_BENCH_BWA") : "";
  if (bwa.empty() && std::system("command -v bwa > /dev/null 2>&1") == 0) bwa = "bwa";
  const fs::path& d = paired_set();
  if (bwa.empty() || d.empty()) {
    state.SkipWithError("bwa, genome data or art_illumina missing");
    return;
  }
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const std::string fa = (d / "ref.fa").string(), r1 = (d / "pair1.fq.gz").string(), r2 = (d / "pair2.fq.gz").string();
  auto timed = [](const std::string& cmd) {
    const auto t = std::chrono::steady_clock::now();
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("bench: failed: " + cmd);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  double aln_s = 0, sampe_s = 0;
  for (auto _ : state) {
    aln_s = timed(bwa + " aln -t " + std::to_string(threads) + " " + fa + " " + r1 + " > " + (d / "1.sai").string() + " 2> /dev/null") +
            timed(bwa + " aln -t " + std::to_string(threads) + " " + fa + " " + r2 + " > " + (d / "2.sai").string() + " 2> /dev/null");
    sampe_s = timed(bwa + " sampe " + fa + " " + (d / "1.sai").string() + " " + (d / "2.sai").string() + " " + r1 + " " + r2 +
                    " > " + (d / "bwa_pairs.sam").string() + " 2> /dev/null");
    state.SetIterationTime(aln_s + sampe_s);
  }
  const double n = static_cast<double>(inexact_reads_wanted() / 2 * 2);
  state.counters["aln_s"] = aln_s;
  state.counters["sampe_s"] = sampe_s;
  state.counters["aln_reads_per_s"] = n / aln_s;
  state.counters["reads_per_s"] = n / (aln_s + sampe_s);
  state.counters["threads"] = threads;
}

}  // namespace

void register_paired_benchmarks() {
  benchmark::RegisterBenchmark("BM_InexactEndToEndPaired/ecoli/gpu", BM_InexactEndToEndPaired, true)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_InexactEndToEndPaired/ecoli/cpu", BM_InexactEndToEndPaired, false)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_BwaSampePeer/ecoli/aln_x2_then_sampe", BM_BwaSampePeer)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
}

}  // namespace bcb
