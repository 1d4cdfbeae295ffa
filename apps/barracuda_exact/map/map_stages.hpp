// The plumbing of `map`'s driver (map_run.cpp): the outputs opened first, the stages' threads and
// queues, the first failure of any stage, the batch sizes, the statistics. Internal to map/.
#pragma once
#include <sys/resource.h>

#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/aln_options.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/aln_sam.hpp"
#include "io/queue.hpp"
#include "io/sam_writer.hpp"
#include "io/text_input.hpp"
#include "map/map_options.hpp"
#include "map/mapper.hpp"

namespace evk::barracuda_exact::stages {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

inline double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// user + system CPU seconds of the whole process so far
inline double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

class Failure {  // the first exception of any stage
 public:
  void set(std::exception_ptr e) {
    std::lock_guard<std::mutex> l(m_);
    if (!e_) e_ = e;
  }
  void rethrow() {
    if (e_) std::rethrow_exception(e_);
  }

 private:
  std::mutex m_;
  std::exception_ptr e_;
};

// The drivers' plumbing: a pool of batches B, a queue between each pair of stages (free -> scan ->
// parse -> map lanes -> in input order -> format -> write -> free), one thread per stage. The first
// exception of any stage is kept and closes every queue, so the other stages stop; join() rethrows it.
template <class B>
class Pipeline {
 public:
  Queue<B*> free_q, scanned, parsed, formatted;
  OrderedQueue<B*> mapped;

  Pipeline(std::size_t batches, std::size_t lanes) : free_q(batches), scanned(1), parsed(1), formatted(1), mapped(lanes) {
    for (std::size_t i = 0; i < batches; ++i) free_q.push(store_.emplace_back(std::make_unique<B>()).get());
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline() {  // a driver that throws before join(): stop and wait for the stages
    close_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  template <class F>
  void stage(F body) {
    threads_.emplace_back([this, body] {
      try {
        body();
      } catch (...) {
        fail_.set(std::current_exception());
        close_all();
      }
    });
  }
  void join() {
    for (auto& t : threads_) t.join();
    threads_.clear();
    fail_.rethrow();
  }

 private:
  void close_all() {
    free_q.close();
    scanned.close();
    parsed.close();
    mapped.close();
    formatted.close();
  }
  std::vector<std::unique_ptr<B>> store_;
  Failure fail_;
  std::vector<std::thread> threads_;
};

// The driver's closing figures: stage seconds, the mapper, the layout, wall and CPU time.
struct StageSeconds {
  double scan = 0, parse = 0, format = 0, write = 0;
};
template <class M>
void close_stats(MapStats& st, const StageSeconds& s, const M& mapper, int lanes, int threads, std::size_t batches,
                 Clock::time_point t0) {
  st.scan_s = s.scan;
  st.parse_s = s.parse;
  st.format_s = s.format;
  st.write_s = s.write;
  st.mapper = mapper.describe();
  st.kernel_origin = mapper.kernel_origin();
  st.lanes = lanes;
  st.threads = threads;
  st.batches = static_cast<int>(batches);
  st.total_s = since(t0);
  st.peak_rss_mib = peak_rss_mib();
  st.cpu_s = cpu_seconds();
}

inline SamOptions sam_options(const MapOptions& opt) {
  SamOptions so;
  so.uncompressed = opt.uncompressed;
  so.level = opt.level;
  so.rg_line = parse_read_group(opt.read_group).line;
  so.damage = !opt.damage.empty();
  so.damage_options = opt.damage_options;
  return so;
}

// Reads per batch: exact 65536; pairs and the CPU backend: bwa's batch (kSampeBatch; sampe
// estimates the insert size per batch, so the default gives bwa's records); single-end inexact on
// the GPU: two of bwa aln's batches (the mapper keeps their gap-open limits: aln_batch_cuts).
// Larger batches give the GPU more of the rare reads whose search is long at once (10 M aDNA reads
// on an H200, 4 streams: 62.3 s against 67.7 s with bwa's batch), smaller ones leave less work to
// the last batch after the others are done and the host's records less to catch up with (two
// calls, same run each: 1 M / 512 k reads: aDNA 57.98 / -, 58.95 / 59.27 s; -n 0.04 24.64 / 24.15,
// 25.08 / 25.26 s; defaults at 100 bp 16.23 / 13.86, 17.29 / 14.76 s); on the CPU they would only
// take memory.
inline std::size_t batch_reads(const MapOptions& opt) {
  if (opt.batch_reads > 0) return opt.batch_reads;
  if (!opt.inexact) return std::size_t(1) << 16;
  return opt.reads2.empty() && opt.gpu ? 2 * std::size_t{kSampeBatch} : kSampeBatch;
}
// bwa's batches of the inexact mode count reads only
inline std::size_t batch_bases(const MapOptions& opt) {
  return opt.inexact ? ~std::size_t{0} >> 1 : batch_reads(opt) * 160;
}

inline void add_counts(MapStats& st, const MapCounts& c) {
  st.counts.add(c);
  st.reads += c.reads;
  st.unique += c.unique;
  st.repeat += c.repeat;
  st.unmatched += c.unmatched;
  st.bridging += c.bridging;
}

inline void add_times(MapStats& st, const MapTimes& t) {
  st.transfer_s += t.transfer;
  st.kernel_s += t.kernel;
  st.match_s += t.match;
  st.lookup_s += t.lookup;
  st.fallback_s += t.fallback;
  st.later_passes_s += t.later_passes;
  for (std::size_t k = 0; k < kMapLaterPasses; ++k) st.pass_s[k] += t.pass[k];
  st.records_s += t.records;
}

// An input's read and inflation seconds and bytes added to st (pairs: both files'), its format named.
inline void add_input(MapStats& st, const TextInput& input) {
  const TextInputStats& is = input.stats();
  st.read_s += static_cast<double>(is.read_ns.load()) / 1e9;
  st.inflate_s += static_cast<double>(is.inflate_ns.load()) / 1e9;
  st.input_bytes += is.compressed_bytes;
  st.text_bytes += is.text_bytes;
  const char* f = input.format() == TextFormat::plain ? "plain" : input.format() == TextFormat::gzip ? "gzip" : "bgzf";
  if (st.input_format.empty()) st.input_format = f;
  else if (st.input_format != f) st.input_format += std::string(" + ") + f;
}

// Outputs first: a bad output path fails before any work.
struct Outputs {
  std::optional<AtomicOutput> out, un;
  explicit Outputs(const MapOptions& opt) {
    const bool bam = sam_path_is_bam(opt.out);  // checks the extension
    if (opt.uncompressed && opt.out != "-" && !bam)
      input_error(opt.out, "-u writes uncompressed BAM: the output must end in .bam (or be - for stdout)");
    if (opt.out != "-") out.emplace(opt.out);
    if (!opt.unmatched.empty()) un.emplace(opt.unmatched);
  }
  std::string out_file() const { return out ? out->temp_path().string() : "-"; }
  void commit() {
    if (out) out->commit();
    if (un) un->commit();
  }
};

}  // namespace evk::barracuda_exact::stages
