// bench_barracuda_exact, the pipeline part: `map` end to end FASTQ.gz -> BAM (GPU on one and on
// every GPU, CPU backend; gzip and BGZF input), each stage alone on the same reads (inflate, scan,
// parse, map, format, compress), and the peer `bwa aln -n 0 -o 0 -t N` + `bwa samse` on the same
// reads and index in the same run. Reads: BC_BENCH_READS (default 10 M) simulated 100 bp E. coli
// reads (85% exact, 15% one substitution, both strands, NovaSeq-like binned qualities), written
// once as BGZF (htslib, level 6) and as gzip (libdeflate level 6, members of 64 Ki reads); the
// stages run on the first BC_BENCH_STAGE_READS (default 2 M) held in memory. Threads:
// BC_BENCH_THREADS (default: all cores). Every figure is wall time with all threads; core_us_per_read
// is the process CPU time per read (user + system), what the stage costs in cores.
#include <benchmark/benchmark.h>
#include <htslib/bgzf.h>
#include <libdeflate.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "bench_common.hpp"
#include "evk/device.hpp"
#include "map/exact_mapper.hpp"
#include "io/index_files.hpp"
#include "map/map_run.hpp"
#include "io/read_batch.hpp"
#include "io/record_scan.hpp"
#include "io/sam_writer.hpp"
#include "evk/task_pool.hpp"
#include "io/text_input.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;

namespace bcb {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
std::size_t env_size(const char* name, std::size_t def) {
  const char* v = std::getenv(name);
  return v && std::atoll(v) > 0 ? static_cast<std::size_t>(std::atoll(v)) : def;
}
std::size_t total_reads() { return env_size("BC_BENCH_READS", 10000000); }
std::size_t stage_reads() { return std::min(total_reads(), env_size("BC_BENCH_STAGE_READS", 2000000)); }
int threads() { return static_cast<int>(env_size("BC_BENCH_THREADS", std::max(1u, std::thread::hardware_concurrency()))); }
constexpr std::size_t kChunkReads = 65536;
constexpr std::size_t kBatch = std::size_t(1) << 16;  // map's default batch

// ---- the data set -------------------------------------------------------------------------------

struct DataSet {
  fs::path dir, ref, gz, bgzf, plain;  // plain: the first stage_reads() reads, uncompressed
  std::size_t reads = 0, text_bytes = 0, gz_bytes = 0, bgzf_bytes = 0;
  double generate_s = 0;
};
std::unique_ptr<DataSet>& data_slot() {
  static std::unique_ptr<DataSet> d;
  return d;
}

const DataSet* data_set() {
  auto& d = data_slot();
  if (d) return d.get();
  Genome* g = get_genome("ecoli");
  if (!g) return nullptr;
  const auto t0 = Clock::now();
  d = std::make_unique<DataSet>();
  d->dir = fs::temp_directory_path() / ("bench_barracuda_" + std::to_string(::getpid()));
  fs::create_directories(d->dir);
  d->ref = d->dir / "ecoli.fa";
  bc::write_index(g->idx, d->ref.string());
  d->reads = total_reads();
  d->gz = d->dir / "reads.fq.gz";
  d->bgzf = d->dir / "reads.bgzf.fq.gz";
  d->plain = d->dir / "reads_head.fq";
  const int T = threads();
  BGZF* bf = bgzf_open(d->bgzf.c_str(), "w6");
  if (!bf || (T > 1 && bgzf_mt(bf, T, 256) < 0)) throw std::runtime_error("bench: cannot write " + d->bgzf.string());
  std::ofstream gz(d->gz, std::ios::binary), plain(d->plain, std::ios::binary);
  const std::size_t chunks = (d->reads + kChunkReads - 1) / kChunkReads;
  for (std::size_t c0 = 0; c0 < chunks; c0 += static_cast<std::size_t>(T)) {  // T chunks at a time, in parallel
    const std::size_t c1 = std::min(chunks, c0 + static_cast<std::size_t>(T));
    std::vector<std::string> text(c1 - c0), member(c1 - c0);
    std::vector<std::thread> ts;
    for (std::size_t c = c0; c < c1; ++c)
      ts.emplace_back([&, c] {
        const std::size_t first = c * kChunkReads, n = std::min(kChunkReads, d->reads - first);
        std::string& t = text[c - c0];
        t = fastq_chunk(*g, first, n);
        libdeflate_compressor* z = libdeflate_alloc_compressor(6);
        member[c - c0].resize(libdeflate_gzip_compress_bound(z, t.size()));
        member[c - c0].resize(libdeflate_gzip_compress(z, t.data(), t.size(), member[c - c0].data(), member[c - c0].size()));
        libdeflate_free_compressor(z);
      });
    for (auto& t : ts) t.join();
    for (std::size_t c = c0; c < c1; ++c) {
      const std::string& t = text[c - c0];
      if (member[c - c0].empty() || bgzf_write(bf, t.data(), t.size()) < 0) throw std::runtime_error("bench: compression failed");
      gz.write(member[c - c0].data(), static_cast<std::streamsize>(member[c - c0].size()));
      if (c * kChunkReads < stage_reads()) plain.write(t.data(), static_cast<std::streamsize>(t.size()));
      d->text_bytes += t.size();
    }
  }
  if (bgzf_close(bf) < 0 || !gz.good() || !plain.good()) throw std::runtime_error("bench: writing the data set failed");
  gz.close();
  plain.close();
  d->gz_bytes = fs::file_size(d->gz);
  d->bgzf_bytes = fs::file_size(d->bgzf);
  d->generate_s = since(t0);
  return d.get();
}

// ---- results for the summary --------------------------------------------------------------------

struct Figure {
  double reads_per_s = 0, core_us_per_read = 0;
};
std::map<std::string, Figure>& figures() {
  static std::map<std::string, Figure> f;
  return f;
}
void report(benchmark::State& state, const std::string& key, double reads, double wall, double cpu) {
  Figure f{reads / wall, 1e6 * cpu / reads};
  figures()[key] = f;
  state.SetIterationTime(wall);
  state.counters["reads_per_s"] = f.reads_per_s;
  state.counters["core_us_per_read"] = f.core_us_per_read;
  state.counters["reads"] = reads;
  state.counters["threads"] = threads();
}

bool have_data(benchmark::State& state, const DataSet* d) {
  if (!d) state.SkipWithError("genome data missing (data/genomes/NC_008253.fna.gz)");
  return d != nullptr;
}

// ---- end to end ---------------------------------------------------------------------------------

void BM_EndToEnd(benchmark::State& state, bool gpu, bool all_gpus, bool bgzf, int level) {
  const auto& env = evk::gpu_environment();
  if (gpu && !env.usable()) return state.SkipWithError("no usable GPU");
  if (all_gpus && env.devices.size() < 2) return state.SkipWithError("fewer than 2 GPUs");
  const DataSet* d = data_set();
  if (!have_data(state, d)) return;
  bc::MapOptions o;
  o.ref = d->ref.string();
  o.reads = (bgzf ? d->bgzf : d->gz).string();
  o.out = (d->dir / "out.bam").string();
  o.threads = threads();
  o.gpu = gpu;
  o.level = level;
  if (all_gpus)
    for (const auto& g : env.devices) o.gpus.push_back(bc::GpuPlan{g.index, {}, {}});
  bc::MapStats st;
  double cpu = 0;
  for (auto _ : state) {
    const double c0 = cpu_seconds();
    st = bc::run_map(o);
    cpu = cpu_seconds() - c0;
  }
  const std::string key = std::string("end_to_end/") + (gpu ? (all_gpus ? "gpu_all" : "gpu") : "cpu") + "/" +
                          (bgzf ? "bgzf" : "gzip") + (level >= 0 ? "/level" + std::to_string(level) : "");
  report(state, key, static_cast<double>(st.reads), st.total_s, cpu);
  for (const auto& [k, v] : std::map<std::string, double>{{"index_s", st.index_s},     {"inflate_s", st.inflate_s},
                                                           {"scan_s", st.scan_s},       {"parse_s", st.parse_s},
                                                           {"match_s", st.match_s},     {"kernel_s", st.kernel_s},
                                                           {"transfer_s", st.transfer_s}, {"lookup_s", st.lookup_s},
                                                           {"format_s", st.format_s},   {"write_s", st.write_s},
                                                           {"total_s", st.total_s}})
    state.counters[k] = v;
  state.counters["lanes"] = st.lanes;
  state.counters["input_MB"] = static_cast<double>(st.input_bytes) / 1e6;
  state.counters["output_MB"] = static_cast<double>(fs::file_size(o.out)) / 1e6;
  state.SetLabel(st.mapper + "; " + st.input_format);
  fs::remove(o.out);
}

// ---- the stages alone ---------------------------------------------------------------------------

// The first stage_reads() reads through each stage, kept for the next stage.
struct StageData {
  std::vector<bc::ScanBatch> scanned;
  std::vector<bc::ReadBatch> parsed;
  std::vector<std::unique_ptr<bc::MappedBatch>> mapped;
  std::unique_ptr<bc::ExactMapper> mapper;  // the mapped batches point to its record options
  std::vector<bc::FormattedBatch> formatted;
  std::unique_ptr<bc::BwtIndex> idx;
  std::unique_ptr<evk::TaskPool> pool;
  std::unique_ptr<bc::TextInput> input;  // owns the chunks the scanned spans point into
  std::size_t reads = 0;
};
StageData& stages() {
  static StageData s;
  return s;
}

void BM_Inflate(benchmark::State& state, bool bgzf) {
  const DataSet* d = data_set();
  if (!have_data(state, d)) return;
  double wall = 0, cpu = 0;
  std::size_t bytes = 0;
  for (auto _ : state) {
    evk::TaskPool pool(threads());
    const double c0 = cpu_seconds();
    const auto t = Clock::now();
    bc::TextInput in((bgzf ? d->bgzf : d->gz).string(), pool);
    bytes = 0;
    while (auto c = in.next()) bytes += c->size;
    wall = since(t);
    cpu = cpu_seconds() - c0;
  }
  report(state, bgzf ? "inflate/bgzf (parallel)" : "inflate/gzip (one thread)", static_cast<double>(d->reads), wall, cpu);
  state.counters["text_MB_per_s"] = static_cast<double>(bytes) / wall / 1e6;
  state.counters["compressed_MB"] = static_cast<double>(bgzf ? d->bgzf_bytes : d->gz_bytes) / 1e6;
}

void BM_Scan(benchmark::State& state) {
  const DataSet* d = data_set();
  if (!have_data(state, d)) return;
  StageData& s = stages();
  double busy = 0;
  for (auto _ : state) {
    s = StageData{};
    s.pool = std::make_unique<evk::TaskPool>(threads());
    s.input = std::make_unique<bc::TextInput>(d->plain.string(), *s.pool);
    bc::RecordScanner scan(*s.input);
    bc::ScanBatch b;
    while (scan.next(b, kBatch, kBatch * 160, 1024)) {
      s.reads += b.recs.size();
      s.scanned.push_back(std::move(b));
      b = bc::ScanBatch{};
    }
    busy = scan.busy_seconds();  // scanning alone, not the waits for text
  }
  report(state, "scan (one thread)", static_cast<double>(s.reads), busy, busy);
}

void BM_Parse(benchmark::State& state) {
  StageData& s = stages();
  if (s.scanned.empty()) return state.SkipWithError("needs BM_Stage/scan first");
  double wall = 0, cpu = 0;
  // a first pass sizes the buffers, as the pipeline's recycled batches are after their first use
  s.parsed.assign(s.scanned.size(), bc::ReadBatch{});
  for (std::size_t i = 0; i < s.scanned.size(); ++i) bc::parse_batch("bench", s.scanned[i], s.parsed[i], *s.pool);
  for (auto _ : state) {
    const double c0 = cpu_seconds();
    const auto t = Clock::now();
    for (std::size_t i = 0; i < s.scanned.size(); ++i) bc::parse_batch("bench", s.scanned[i], s.parsed[i], *s.pool);
    wall = since(t);
    cpu = cpu_seconds() - c0;
  }
  report(state, "parse", static_cast<double>(s.reads), wall, cpu);
}

// Batches through `lanes` lanes at once (as in the pipeline: lane threads share the pool).
void BM_Map(benchmark::State& state, bool gpu, bool all_gpus) {
  const auto& env = evk::gpu_environment();
  if (gpu && !env.usable()) return state.SkipWithError("no usable GPU");
  if (all_gpus && env.devices.size() < 2) return state.SkipWithError("fewer than 2 GPUs");
  StageData& s = stages();
  if (s.parsed.empty()) return state.SkipWithError("needs BM_Stage/parse first");
  if (!s.idx) s.idx = std::make_unique<bc::BwtIndex>(bc::read_index(data_set()->ref.string()));
  std::unique_ptr<bc::ExactMapper> m;
  if (gpu) {
    std::vector<bc::GpuPlan> g;
    for (const auto& dv : env.devices)
      if (all_gpus || g.empty()) g.push_back(bc::GpuPlan{dv.index, {}, {}});
    m = std::make_unique<bc::ExactMapper>(*s.idx, g, 2);
  } else {
    m = std::make_unique<bc::ExactMapper>(*s.idx, 2);
  }
  double wall = 0, cpu = 0;
  bc::MapTimes total;
  std::vector<std::unique_ptr<bc::MappedBatch>> out(s.parsed.size());
  auto pass = [&] {
    std::vector<bc::MapTimes> times(static_cast<std::size_t>(m->lanes()));
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> ts;
    for (int l = 0; l < m->lanes(); ++l)
      ts.emplace_back([&, l] {
        for (std::size_t i; (i = next++) < s.parsed.size();) m->map(l, s.parsed[i], out[i], *s.pool, times[static_cast<std::size_t>(l)]);
      });
    for (auto& th : ts) th.join();
    total = bc::MapTimes{};
    for (const auto& x : times) total.add(x);
  };
  pass();  // warm: buffers sized, GPU kernels loaded (as in a running pipeline)
  for (auto _ : state) {
    const double c0 = cpu_seconds();
    const auto t = Clock::now();
    pass();
    wall = since(t);
    cpu = cpu_seconds() - c0;
  }
  const int lanes = m->lanes();
  const std::string label = m->describe();
  if (!gpu) {
    s.mapped = std::move(out);
    s.mapper = std::move(m);
  }
  report(state, std::string("map/") + (gpu ? (all_gpus ? "gpu_all" : "gpu") : "cpu"), static_cast<double>(s.reads), wall, cpu);
  state.counters["lanes"] = lanes;
  state.counters["lookup_s"] = total.lookup;  // summed over lanes
  if (gpu) {
    state.counters["kernel_s"] = total.kernel;
    state.counters["transfer_s"] = total.transfer;
  }
  state.SetLabel(label);
}

void BM_Format(benchmark::State& state) {
  StageData& s = stages();
  if (s.mapped.empty()) return state.SkipWithError("needs BM_Stage/map/cpu first");
  const fs::path out = data_set()->dir / "format.bam";
  bc::SamWriter w(out.string(), out.string(), *s.idx, "bench", 1);
  double wall = 0, cpu = 0;
  std::size_t bytes = 0;
  s.formatted.clear();  // a first pass sizes the buffers (see parse)
  s.formatted.resize(s.parsed.size());
  for (std::size_t i = 0; i < s.parsed.size(); ++i) w.format(s.parsed[i], *s.mapped[i], s.formatted[i], *s.pool, false);
  for (auto _ : state) {
    const double c0 = cpu_seconds();
    const auto t = Clock::now();
    for (std::size_t i = 0; i < s.parsed.size(); ++i) w.format(s.parsed[i], *s.mapped[i], s.formatted[i], *s.pool, false);
    wall = since(t);
    cpu = cpu_seconds() - c0;
  }
  for (const auto& f : s.formatted)
    for (std::size_t p = 0; p < f.parts_used; ++p) bytes += f.parts[p].records.size();
  report(state, "format (BAM records)", static_cast<double>(s.reads), wall, cpu);
  state.counters["record_MB"] = static_cast<double>(bytes) / 1e6;
  w.close();
  fs::remove(out);
}

void BM_Compress(benchmark::State& state, int level) {
  StageData& s = stages();
  if (s.formatted.empty()) return state.SkipWithError("needs BM_Stage/format first");
  const fs::path out = data_set()->dir / "compress.bam";
  double wall = 0, cpu = 0;
  for (auto _ : state) {
    const double c0 = cpu_seconds();
    const auto t = Clock::now();
    bc::SamOptions so;
    so.level = level;
    bc::SamWriter w(out.string(), out.string(), *s.idx, "bench", threads(), so);
    for (const auto& f : s.formatted) w.write(f);
    w.close();
    wall = since(t);
    cpu = cpu_seconds() - c0;
  }
  report(state, level < 0 ? "compress (BGZF level 6, htslib threads)" : "compress (BGZF level " + std::to_string(level) + ")",
         static_cast<double>(s.reads), wall, cpu);
  state.counters["bam_MB"] = static_cast<double>(fs::file_size(out)) / 1e6;
  fs::remove(out);
}

// ---- the peer -----------------------------------------------------------------------------------

// `bwa aln -n 0 -o 0 -t N` (exact matches only, like our kernel) then `bwa samse` (single-threaded in
// bwa 0.7.17), on the same gzip reads and index. bwa: $BC_BENCH_BWA, else `bwa` on PATH.
void BM_BwaPeer(benchmark::State& state) {
  stages() = StageData{};  // the stage benchmarks' data is no longer needed
  std::string bwa = std::getenv("BC_BENCH_BWA") ? std::getenv("BC_BENCH_BWA") : "";
  if (bwa.empty() && std::system("command -v bwa > /dev/null 2>&1") == 0) bwa = "bwa";
  if (bwa.empty()) return state.SkipWithError("bwa not found (set BC_BENCH_BWA)");
  const DataSet* d = data_set();
  if (!have_data(state, d)) return;
  const std::string fa = d->ref.string(), fq = d->gz.string(), sai = (d->dir / "bwa.sai").string(),
                    sam = (d->dir / "bwa.sam").string();
  auto timed = [](const std::string& cmd) {
    const auto t = Clock::now();
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("bench: failed: " + cmd);
    return since(t);
  };
  double aln_s = 0, samse_s = 0;
  for (auto _ : state) {
    aln_s = timed(bwa + " aln -n 0 -o 0 -t " + std::to_string(threads()) + " " + fa + " " + fq + " > " + sai + " 2> /dev/null");
    samse_s = timed(bwa + " samse " + fa + " " + sai + " " + fq + " > " + sam + " 2> /dev/null");
    state.SetIterationTime(aln_s + samse_s);
  }
  const double n = static_cast<double>(d->reads);
  figures()["peer bwa aln -t N + samse"] = Figure{n / (aln_s + samse_s), 0};
  figures()["peer bwa aln -t N (SA intervals only)"] = Figure{n / aln_s, 0};
  state.counters["aln_s"] = aln_s;
  state.counters["samse_s"] = samse_s;
  state.counters["aln_reads_per_s"] = n / aln_s;
  state.counters["reads_per_s"] = n / (aln_s + samse_s);
  state.counters["threads"] = threads();
  fs::remove(sai);
  fs::remove(sam);
}

void reg(const std::string& name, void (*fn)(benchmark::State&)) {
  benchmark::RegisterBenchmark(name.c_str(), fn)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
}
template <class... A>
void reg(const std::string& name, void (*fn)(benchmark::State&, A...), A... a) {
  benchmark::RegisterBenchmark(name.c_str(), fn, a...)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
}

}  // namespace

void register_pipeline_benchmarks() {
  reg("BM_EndToEnd/fastq_gz_to_bam/gpu/bgzf", BM_EndToEnd, true, false, true, -1);
  reg("BM_EndToEnd/fastq_gz_to_bam/gpu/gzip", BM_EndToEnd, true, false, false, -1);
  reg("BM_EndToEnd/fastq_gz_to_bam/gpu_all/bgzf", BM_EndToEnd, true, true, true, -1);
  reg("BM_EndToEnd/fastq_gz_to_bam/gpu/bgzf/level1", BM_EndToEnd, true, false, true, 1);
  reg("BM_EndToEnd/fastq_gz_to_bam/cpu/bgzf", BM_EndToEnd, false, false, true, -1);
  reg("BM_EndToEnd/fastq_gz_to_bam/cpu/gzip", BM_EndToEnd, false, false, false, -1);
  reg("BM_Stage/inflate/gzip", BM_Inflate, false);
  reg("BM_Stage/inflate/bgzf", BM_Inflate, true);
  reg("BM_Stage/scan", BM_Scan);
  reg("BM_Stage/parse", BM_Parse);
  reg("BM_Stage/map/gpu", BM_Map, true, false);
  reg("BM_Stage/map/gpu_all", BM_Map, true, true);
  reg("BM_Stage/map/cpu", BM_Map, false, false);
  reg("BM_Stage/format", BM_Format);
  reg("BM_Stage/compress", BM_Compress, -1);
  reg("BM_Stage/compress/level1", BM_Compress, 1);
  reg("BM_BwaPeer/aln_n0_o0_then_samse", BM_BwaPeer);
}

// Each stage's throughput alone and its cost in cores; the pipeline's bound is the slower of (a)
// the serial stages (gzip inflation of one stream, the record scan) and (b) the cores: T threads
// over the summed core-microseconds per read of every stage on that path.
void print_pipeline_summary() {
  const auto& f = figures();
  if (f.empty()) return;
  const DataSet* d = data_slot().get();
  std::printf("\npipeline summary: %zu reads of 100 bp (E. coli), %d threads", d ? d->reads : 0, threads());
  if (d)
    std::printf("; text %.0f MB, gzip %.0f MB, BGZF %.0f MB (generated in %.1f s)", static_cast<double>(d->text_bytes) / 1e6,
                static_cast<double>(d->gz_bytes) / 1e6, static_cast<double>(d->bgzf_bytes) / 1e6, d->generate_s);
  std::printf("\n%-44s %14s %16s\n", "", "M reads/s", "core-us/read");
  for (const auto& [k, v] : f) std::printf("%-44s %14.3f %16.3f\n", k.c_str(), v.reads_per_s / 1e6, v.core_us_per_read);
  auto get = [&](const std::string& k) { auto it = f.find(k); return it == f.end() ? Figure{} : it->second; };
  const Figure scan = get("scan (one thread)"), parse = get("parse"), fmt = get("format (BAM records)"),
               comp = get("compress (BGZF level 6, htslib threads)"), inf_gz = get("inflate/gzip (one thread)"),
               inf_bg = get("inflate/bgzf (parallel)");
  for (const char* backend : {"gpu", "cpu"}) {
    const Figure map = get(std::string("map/") + backend);
    if (map.reads_per_s == 0 || parse.reads_per_s == 0) continue;
    for (const bool bgzf : {true, false}) {
      const Figure inf = bgzf ? inf_bg : inf_gz;
      const double cores_us = inf.core_us_per_read + scan.core_us_per_read + parse.core_us_per_read + map.core_us_per_read +
                              fmt.core_us_per_read + comp.core_us_per_read;
      const double core_bound = 1e6 * threads() / cores_us;
      double serial_bound = scan.reads_per_s;
      std::string serial = "record scan";
      if (!bgzf && inf.reads_per_s < serial_bound) {
        serial_bound = inf.reads_per_s;
        serial = "gzip inflation";
      }
      const Figure e2e = get(std::string("end_to_end/") + backend + "/" + (bgzf ? "bgzf" : "gzip"));
      std::printf("%s backend, %s input: %.2f core-us/read in all -> cores allow %.2f M reads/s; the serial %s allows "
                  "%.2f M reads/s; measured end to end %.2f M reads/s -> limit: %s\n",
                  backend, bgzf ? "BGZF" : "gzip", cores_us, core_bound / 1e6, serial.c_str(), serial_bound / 1e6,
                  e2e.reads_per_s / 1e6, core_bound < serial_bound ? "CPU cores" : serial.c_str());
    }
  }
  const Figure g = get("end_to_end/gpu/bgzf"), c = get("end_to_end/cpu/bgzf");
  if (g.reads_per_s > 0 && c.reads_per_s > 0) std::printf("GPU / CPU backend end to end (BGZF): %.2fx\n", g.reads_per_s / c.reads_per_s);
}

void remove_pipeline_data() {
  if (auto& d = data_slot()) {
    std::error_code ec;
    fs::remove_all(d->dir, ec);
  }
}

}  // namespace bcb
