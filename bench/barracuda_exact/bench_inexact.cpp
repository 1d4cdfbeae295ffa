// bench_barracuda_exact, the inexact part (bwa aln's search, default options): 1 M ART reads of
// E. coli (art_illumina HS25 100 bp, BC_BENCH_INEXACT_READS to change; reads with errors from an
// in-process model on the random genome), the kernel alone, the mapping stage (kernel + transfers +
// the CPU for handed-back reads) on the GPU and on all CPU cores, end to end FASTQ.gz -> BAM (single
// and paired end), and the peers `bwa aln -t N` + samse / sampe on the same reads in the same run
// (their files are removed at the end unless BC_BENCH_KEEP is set).
#include <benchmark/benchmark.h>
#include <htslib/sam.h>
#include <sys/resource.h>
#include <htslib/bgzf.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "bench_common.hpp"
#include "core/aln_gpu.hpp"
#include "core/aln_kernel.hpp"
#include "core/aln_positions.hpp"
#include "core/aln_search.hpp"
#include "core/samse.hpp"
#include "evk/cuda_check.hpp"
#include "evk/device.hpp"
#include "evk/gpu_timer.hpp"
#include "evk/task_pool.hpp"
#include "io/aln_sam.hpp"
#include "io/index_files.hpp"
#include "io/sequences.hpp"
#include "map/map_run.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;

namespace bcb {

std::size_t inexact_reads_wanted() {
  const char* e = std::getenv("BC_BENCH_INEXACT_READS");
  return e && std::atol(e) > 0 ? static_cast<std::size_t>(std::atol(e)) : 1000000;
}

namespace {

// ---- the inexact search -------------------------------------------------------------------------

// Reads with sequencing errors from an in-process model (when art_illumina is absent, and for the
// random genome): 100 bp, both strands, 0..5 substitutions (half without), 1/16 with a 1-3 bp indel,
// 1/33 with an N.
bc::ReadCodes error_reads(const Genome& g, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  static const char kB[] = "ACGT";
  static const unsigned kSubs[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 5};
  bc::ReadCodes rc;
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    s = g.fwd.substr(rng() % (g.fwd.size() - 110), 108);
    const unsigned k = static_cast<unsigned>(rng() % 16);
    if (k == 0) s.insert(6 + rng() % 88, std::string(1 + rng() % 3, kB[rng() & 3]));
    else if (k == 1) s.erase(6 + rng() % 88, 1 + rng() % 3);
    s.resize(100);
    for (unsigned j = 0, m = kSubs[rng() % 16]; j < m; ++j) s[rng() % 100] = kB[rng() & 3];
    if (rng() % 33 == 0) s[rng() % 100] = 'N';
    if (rng() & 1) {
      std::reverse(s.begin(), s.end());
      for (auto& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : c;
    }
    rc.add(s.data(), s.size());
  }
  return rc;
}

// Reads [b, e) of rc as a batch of their own.
bc::ReadCodes slice(const bc::ReadCodes& rc, std::size_t b, std::size_t e) {
  bc::ReadCodes out;
  for (std::size_t i = b; i < e; ++i) {
    out.offset.push_back(out.codes.size());
    out.len.push_back(rc.len[i]);
    out.codes.insert(out.codes.end(), rc.codes.begin() + static_cast<std::ptrdiff_t>(rc.offset[i]),
                     rc.codes.begin() + static_cast<std::ptrdiff_t>(rc.offset[i] + rc.len[i]));
  }
  return out;
}

void write_fastq_gz(const bc::ReadCodes& rc, const fs::path& p) {
  BGZF* f = bgzf_open(p.c_str(), "w");
  if (!f) throw std::runtime_error("bench: cannot write " + p.string());
  std::string buf;
  for (std::size_t i = 0; i < rc.size(); ++i) {
    buf += "@r" + std::to_string(i) + "\n";
    for (std::uint32_t j = 0; j < rc.len[i]; ++j) buf += "ACGTN"[rc.codes[rc.offset[i] + j]];
    buf += "\n+\n" + std::string(rc.len[i], 'F') + "\n";
    if (buf.size() > (1 << 20)) {
      if (bgzf_write(f, buf.data(), buf.size()) < 0) throw std::runtime_error("bench: writing failed");
      buf.clear();
    }
  }
  if (bgzf_write(f, buf.data(), buf.size()) < 0 || bgzf_close(f) < 0) throw std::runtime_error("bench: writing failed");
}

// The inexact data set of a genome, written once per process: our index, the reads as FASTQ.gz
// (art_illumina when on PATH for E. coli, else the error model) and as codes.
struct InexactSet {
  fs::path dir;
  bc::ReadCodes reads;
  std::string source;  // "art_illumina HS25 100 bp" or "error model"
};
std::map<std::string, std::unique_ptr<InexactSet>>& inexact_sets() {
  static std::map<std::string, std::unique_ptr<InexactSet>> sets;
  return sets;
}
InexactSet* inexact_set(const std::string& genome) {
  auto& sets = inexact_sets();
  if (auto it = sets.find(genome); it != sets.end()) return it->second.get();
  Genome* g = get_genome(genome);
  if (!g) return nullptr;
  auto s = std::make_unique<InexactSet>();
  s->dir = fs::temp_directory_path() / ("bench_barracuda_inexact_" + genome + "_" + std::to_string(::getpid()));
  fs::create_directories(s->dir);
  bc::write_index(g->idx, (s->dir / "ref.fa").string());
  const std::size_t n = inexact_reads_wanted();
  bool art = false;
  if (genome == "ecoli" && std::system("command -v art_illumina > /dev/null 2>&1") == 0) {
    {  // the genome as FASTA for art_illumina
      std::ofstream fa(s->dir / "art_ref.fa");
      fa << ">ecoli\n";
      for (std::size_t i = 0; i < g->fwd.size(); i += 60) fa << g->fwd.substr(i, 60) << "\n";
    }
    const std::string cmd = "art_illumina -ss HS25 -i " + (s->dir / "art_ref.fa").string() + " -l 100 -c " + std::to_string(n) +
                            " -rs 11 -na -q -o " + (s->dir / "art").string() + " > /dev/null 2>&1";
    art = std::system(cmd.c_str()) == 0 && fs::exists(s->dir / "art.fq");
  }
  if (art) {
    bc::ReadSource src((s->dir / "art.fq").string());
    bc::ReadBatch b;
    while (src.next(b, 1u << 18, ~std::size_t{0} >> 1, 1024))
      for (std::size_t i = 0; i < b.size(); ++i) s->reads.add(b.seq(i).data(), b.seq(i).size());
    s->source = "art_illumina HS25 100 bp";
    fs::remove(s->dir / "art.fq");
  } else {
    s->reads = error_reads(*g, n, 99);
    s->source = "error model 100 bp";
  }
  write_fastq_gz(s->reads, s->dir / "reads.fq.gz");
  return (sets[genome] = std::move(s)).get();
}

// The kernel alone (reads resident, every repeat searches all of them; L2 flushed), after checking
// every read against the CPU search (hand-backs excluded: the CPU answers those in the stage below).
void BM_InexactKernel(benchmark::State& state, const std::string& genome) {
  if (!evk::gpu_environment().usable()) {
    state.SkipWithError("no usable GPU");
    return;
  }
  InexactSet* set = inexact_set(genome);
  if (!set) {
    state.SkipWithError("genome data missing");
    return;
  }
  const Genome& g = *get_genome(genome);
  const auto& dev = evk::gpu_environment().devices[0];
  const bc::AlnOptions opt;
  bc::InexactKernelConfig cfg;
  evk::CudaLibrary lib = bc::load_inexact_kernel(cfg, dev.cc());
  cudaKernel_t k = lib.kernel(bc::kAlnKernelEntry);
  bc::InexactDevice d(g.idx, opt, dev.index, cfg.stack_cap, cfg.max_len, cfg.threads_per_sm);
  // at most 2^20 reads per launch (the map pipeline's batches are 2^18)
  const std::size_t n = std::min<std::size_t>(set->reads.size(), 1u << 20);
  const bc::ReadCodes part = slice(set->reads, 0, n);
  d.upload(part, cfg.aln_cap, nullptr);
  d.poison(nullptr);
  d.launch(k, cfg.block_w, cfg.stack_cap, d.max_threads(), nullptr);
  std::vector<std::uint32_t> n_out;
  std::vector<std::uint64_t> aln_out;
  d.download(n_out, aln_out, nullptr);
  const bc::AlnBatch ref = bc::aln_search_batch(g.idx, part, opt, 0);
  std::size_t wrong = 0, back = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (n_out[i] == bc::kHandedBack) {
      ++back;
      continue;
    }
    if (n_out[i] != ref.count(i)) {
      ++wrong;
      continue;
    }
    for (std::uint32_t a = 0; a < n_out[i]; ++a)
      if (!(bc::decode_kernel_aln(aln_out.data() + (i * static_cast<std::size_t>(cfg.aln_cap) + a) * 3) == ref.begin(i)[a])) {
        ++wrong;
        break;
      }
  }
  if (wrong) {
    state.SkipWithError((std::to_string(wrong) + " reads differ from the CPU search").c_str());
    return;
  }
  evk::TimingOptions to;
  to.warmup = 1;
  to.repeats = 5;
  to.max_seconds = 30;
  evk::TimingStats t;
  for (auto _ : state) {
    t = evk::time_gpu([&](cudaStream_t s) { d.launch(k, cfg.block_w, cfg.stack_cap, d.max_threads(), s); }, nullptr, to);
    state.SetIterationTime(t.median_ms / 1e3);
  }
  state.counters["reads_per_s"] = static_cast<double>(n) / (t.median_ms / 1e3);
  state.counters["median_ms"] = t.median_ms;
  state.counters["spread"] = t.spread();
  state.counters["reads"] = static_cast<double>(n);
  state.counters["handed_back"] = static_cast<double>(back);
  state.counters["threads"] = d.max_threads();
  state.counters["genome_mbp"] = static_cast<double>(g.idx.l_pac) / 1e6;
  state.SetLabel(dev.name + ", " + set->source);
}

// The mapping stage: all reads in batches of 2^18 through the GPU backend (upload, kernel, download,
// the CPU for handed-back reads), or through the CPU search on all cores.
void BM_InexactMapStage(benchmark::State& state, const std::string& genome, bool gpu) {
  if (gpu && !evk::gpu_environment().usable()) {
    state.SkipWithError("no usable GPU");
    return;
  }
  InexactSet* set = inexact_set(genome);
  if (!set) {
    state.SkipWithError("genome data missing");
    return;
  }
  const Genome& g = *get_genome(genome);
  const bc::AlnOptions opt;
  std::unique_ptr<bc::GpuAligner> al;
  if (gpu) al = std::make_unique<bc::GpuAligner>(g.idx, opt, evk::gpu_environment().devices[0].index);
  std::vector<bc::ReadCodes> batches;
  for (std::size_t b = 0; b < set->reads.size(); b += 1u << 18)
    batches.push_back(slice(set->reads, b, std::min(set->reads.size(), b + (1u << 18))));
  bc::GpuAlnTimes gt;
  double secs = 0;
  std::size_t alns = 0;
  for (auto _ : state) {
    gt = bc::GpuAlnTimes{};
    alns = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& b : batches) alns += (gpu ? al->search(b, 0, &gt) : bc::aln_search_batch(g.idx, b, opt, 0)).alns.size();
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(secs);
  }
  const double n = static_cast<double>(set->reads.size());
  state.counters["reads_per_s"] = n / secs;
  state.counters["seconds"] = secs;
  state.counters["reads"] = n;
  state.counters["intervals"] = static_cast<double>(alns);
  state.counters["kernel_s"] = gt.kernel_ms / 1e3;
  state.counters["transfer_s"] = (gt.upload_ms + gt.download_ms) / 1e3;  // host<->device copies
  state.counters["pack_s"] = gt.pack_ms / 1e3;                            // packing the reads (pinned, host)
  state.counters["compact_s"] = gt.compact_ms / 1e3;                      // compacting the hits (device)
  state.counters["handed_back"] = static_cast<double>(gt.fallback_reads);
  state.counters["handed_back_cpu_s"] = gt.fallback_s;
  state.counters["threads"] = std::thread::hardware_concurrency();
  state.SetLabel(set->source);
}

// The host side of inexact mapping after the search, alone (what the GPU backend leaves to the
// CPU per read): bwa samse's serial step (the primary draws, in read order), then per read in
// parallel on a task pool of all cores: positions, CIGAR/MD/NM, tags, and the BAM record
// (aln_record_to_bam). positions: "host" (every SA row -> position on the CPU, as the CPU backend)
// or "known" (the rows of reads with 1..4 rows given, as GpuHitRows gives them; computed before
// timing). The hits come from one search of the data set before timing (GPU when there is one).
// core_us_per_read: process CPU time per read; serial_s: the in-order step (the draws) alone.
void BM_InexactSamseStage(benchmark::State& state, const std::string& genome, bool known) {
  InexactSet* set = inexact_set(genome);
  if (!set) {
    state.SkipWithError("genome data missing");
    return;
  }
  const Genome& g = *get_genome(genome);
  const bc::AlnOptions opt;
  std::unique_ptr<bc::GpuAligner> al;
  if (evk::gpu_environment().usable()) al = std::make_unique<bc::GpuAligner>(g.idx, opt, evk::gpu_environment().devices[0].index);
  struct B {
    bc::ReadCodes rc;
    std::vector<int> len;
    bc::AlnBatch alns;
    std::vector<std::uint64_t> pos;
    std::string seq;
  };
  std::vector<B> batches;
  for (std::size_t b = 0; b < set->reads.size(); b += bc::kSampeBatch) {
    B x;
    x.rc = slice(set->reads, b, std::min(set->reads.size(), b + bc::kSampeBatch));
    x.len.assign(x.rc.len.begin(), x.rc.len.end());
    x.alns = al ? al->search(x.rc, 0) : bc::aln_search_batch(g.idx, x.rc, opt, 0);
    if (known) {  // GpuHitRows' output, computed on the host
      x.pos.assign(x.alns.alns.size() * bc::kKnownRows, ~0ull);
      for (std::size_t i = 0; i < x.alns.size(); ++i) {
        std::uint64_t rows = 0;
        for (std::uint32_t e = x.alns.offset[i]; e < x.alns.offset[i + 1]; ++e) rows += x.alns.alns[e].l - x.alns.alns[e].k + 1;
        if (rows > bc::kKnownRows) continue;
        for (std::uint32_t e = x.alns.offset[i]; e < x.alns.offset[i + 1]; ++e)
          for (std::uint64_t j = 0; x.alns.alns[e].k + j <= x.alns.alns[e].l; ++j)
            x.pos[e * bc::kKnownRows + j] = g.idx.sa_at(x.alns.alns[e].k + j);
      }
    }
    for (std::size_t i = 0; i < x.rc.codes.size(); ++i) x.seq += "ACGTN"[x.rc.codes[i]];
    batches.push_back(std::move(x));
  }
  evk::TaskPool pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) - 1);
  auto cpu_s = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  double secs = 0, serial = 0, cpu = 0;
  std::size_t bytes = 0;
  for (auto _ : state) {
    bc::Rand48 rng(static_cast<std::uint32_t>(g.idx.seed));
    std::vector<bc::AlnDraw> draws;
    std::vector<bc::AlnRecord> recs;
    std::vector<std::size_t> part_bytes;
    secs = serial = 0;
    const double c0 = cpu_s();
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& x : batches) {
      const auto ts = std::chrono::steady_clock::now();
      bc::samse_draws(x.alns, rng, draws);
      serial += std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
      const std::size_t n = x.rc.size();
      recs.resize(n);
      part_bytes.assign((n + 4095) / 4096, 0);
      pool.parallel_for(n, 4096, [&](std::size_t b, std::size_t e) {
        bam1_t* rec = bam_init1();
        bc::ReadRows rows;
        bc::SeqAln scratch;
        const bc::AlnReads ar{&x.rc, &x.len};
        for (std::size_t i = b; i < e; ++i) {
          bc::known_rows(x.alns, x.pos, i, rows);
          recs[i] = bc::samse_record(g.idx, ar, i, x.alns, draws[i], opt, bc::kSeMulti, scratch, rows.known());
          const std::string name = "r" + std::to_string(i);
          if (!bc::aln_record_to_bam(rec, name, std::string_view(x.seq).substr(x.rc.offset[i], x.rc.len[i]), {}, recs[i], ""))
            std::abort();
          part_bytes[b / 4096] += static_cast<std::size_t>(rec->l_data);
        }
        bam_destroy1(rec);
      });
      for (auto pb : part_bytes) bytes += pb;
    }
    secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu = cpu_s() - c0;
    state.SetIterationTime(secs);
  }
  const double n = static_cast<double>(set->reads.size());
  state.counters["reads_per_s"] = n / secs;
  state.counters["core_us_per_read"] = 1e6 * cpu / n;
  state.counters["serial_s"] = serial;
  state.counters["serial_reads_per_s"] = serial > 0 ? n / serial : 0;
  state.counters["record_bytes"] = static_cast<double>(bytes);
  state.counters["threads"] = std::thread::hardware_concurrency();
  state.SetLabel(set->source + (known ? ", positions given (GPU lookup)" : ", positions on the host"));
}

// End to end, FASTQ.gz -> BAM through `map` (inexact, single end) on the GPU or the CPU: the
// streaming pipeline (map/map_run.hpp with map/aln_mapper.hpp; what the CLI runs).
void BM_InexactEndToEnd(benchmark::State& state, const std::string& genome, bool gpu) {
  if (gpu && !evk::gpu_environment().usable()) {
    state.SkipWithError("no usable GPU");
    return;
  }
  InexactSet* set = inexact_set(genome);
  if (!set) {
    state.SkipWithError("genome data missing");
    return;
  }
  bc::MapOptions o;
  o.ref = (set->dir / "ref.fa").string();
  o.reads = (set->dir / "reads.fq.gz").string();
  o.out = (set->dir / "out.bam").string();
  o.gpu = gpu;
  o.inexact = true;
  bc::MapStats st;
  for (auto _ : state) {
    st = bc::run_map(o);
    state.SetIterationTime(st.total_s);
  }
  state.counters["reads_per_s"] = static_cast<double>(st.reads) / st.total_s;
  state.counters["inflate_s"] = st.inflate_s;
  state.counters["parse_s"] = st.parse_s;
  state.counters["search_s"] = st.match_s;  // lane seconds (summed over lanes)
  state.counters["kernel_s"] = st.kernel_s;
  state.counters["lookup_s"] = st.lookup_s;
  state.counters["handed_back"] = static_cast<double>(st.counts.handed_back);
  state.counters["sam_s"] = st.records_s;
  state.counters["format_s"] = st.format_s;
  state.counters["write_s"] = st.write_s;
  state.counters["total_s"] = st.total_s;
  state.counters["mapped"] = static_cast<double>(st.counts.unique + st.counts.repeat);
  state.counters["threads"] = std::thread::hardware_concurrency();
  state.SetLabel(set->source);
}

// The peer on the same reads and index, in the same run: `bwa aln -t N` (bwa's defaults: the same
// inexact search) then `bwa samse`, timed apart.
void BM_BwaAlnPeer(benchmark::State& state, const std::string& genome) {
  std::string bwa = std::getenv("BC_BENCH_BWA") ? std::getenv("BC_BENCH_BWA") : "";
  if (bwa.empty() && std::system("command -v bwa > /dev/null 2>&1") == 0) bwa = "bwa";
  if (bwa.empty()) {
    state.SkipWithError("bwa not found (set BC_BENCH_BWA)");
    return;
  }
  InexactSet* set = inexact_set(genome);
  if (!set) {
    state.SkipWithError("genome data missing");
    return;
  }
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const std::string fa = (set->dir / "ref.fa").string(), fq = (set->dir / "reads.fq.gz").string(),
                    sai = (set->dir / "bwa.sai").string(), sam = (set->dir / "bwa.sam").string();
  auto timed = [](const std::string& cmd) {
    const auto t = std::chrono::steady_clock::now();
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("bench: failed: " + cmd);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  double aln_s = 0, samse_s = 0;
  for (auto _ : state) {
    aln_s = timed(bwa + " aln -t " + std::to_string(threads) + " " + fa + " " + fq + " > " + sai + " 2> /dev/null");
    samse_s = timed(bwa + " samse " + fa + " " + sai + " " + fq + " > " + sam + " 2> /dev/null");
    state.SetIterationTime(aln_s + samse_s);
  }
  const double n = static_cast<double>(set->reads.size());
  state.counters["aln_s"] = aln_s;
  state.counters["samse_s"] = samse_s;
  state.counters["aln_reads_per_s"] = n / aln_s;
  state.counters["reads_per_s"] = n / (aln_s + samse_s);
  state.counters["threads"] = threads;
  state.SetLabel(set->source);
}

}  // namespace

void register_inexact_benchmarks(const std::vector<std::string>& genomes) {
  for (const auto& g : genomes) {  // the inexact search (bwa aln's defaults)
    benchmark::RegisterBenchmark(("BM_InexactKernel/" + g).c_str(), BM_InexactKernel, g)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    for (const bool known : {false, true})
      benchmark::RegisterBenchmark(("BM_InexactSamseStage/" + g + (known ? "/known_positions" : "/host_positions")).c_str(),
                                   BM_InexactSamseStage, g, known)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_InexactMapStage/" + g + "/gpu").c_str(), BM_InexactMapStage, g, true)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_InexactMapStage/" + g + "/cpu").c_str(), BM_InexactMapStage, g, false)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    for (const bool gpu : {true, false})
      benchmark::RegisterBenchmark(("BM_InexactEndToEnd/" + g + (gpu ? "/gpu" : "/cpu")).c_str(), BM_InexactEndToEnd, g, gpu)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_BwaAlnPeer/" + g + "/aln_then_samse").c_str(), BM_BwaAlnPeer, g)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
  }
  register_paired_benchmarks();
}

fs::path inexact_set_dir(const std::string& genome) {
  InexactSet* set = inexact_set(genome);
  return set ? set->dir : fs::path{};
}

void remove_inexact_data() {
  // the inexact data sets (index, reads, outputs) go unless BC_BENCH_KEEP is set (the device script
  // keeps them to compare our GPU records with bwa's)
  if (std::getenv("BC_BENCH_KEEP")) return;
  for (const auto& [name, set] : inexact_sets()) {
    std::error_code ec;
    fs::remove_all(set->dir, ec);
  }
}

}  // namespace bcb
