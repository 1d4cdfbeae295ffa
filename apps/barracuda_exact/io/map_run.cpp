#include "io/map_run.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/kernel_config.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#include "io/aln_mapper.hpp"
#include "io/aln_sam.hpp"
#include "io/index_files.hpp"
#include "io/map_stages.hpp"
#include "io/queue.hpp"
#include "io/read_batch.hpp"
#include "io/record_scan.hpp"
#include "io/sam_writer.hpp"
#include "io/sequences.hpp"
#include "io/text_input.hpp"

namespace evk::barracuda_exact {
namespace {

using namespace stages;

std::unique_ptr<Mapper> make_mapper(const MapOptions& opt, const BwtIndex& idx, bool serial) {
  RecordOptions ro;
  ro.rg_id = parse_read_group(opt.read_group).id;
  ro.max_top2 = opt.max_top2;
  if (opt.inexact) {
    ro.max_top2 = opt.aln.max_top2;
    if (!opt.gpu) return std::make_unique<AlnMapper>(idx, opt.aln, serial ? 1 : opt.cpu_lanes, ro);
    std::vector<int> devices;
    for (const auto& g : opt.gpus) devices.push_back(g.device);
    if (devices.empty()) devices.push_back(opt.device);
    auto m = std::make_unique<AlnMapper>(idx, opt.aln, devices, serial ? 1 : opt.streams, ro);
    if (opt.poison_gpu) m->poison_gpu_outputs();
    return m;
  }
  if (!opt.gpu) return std::make_unique<ExactMapper>(idx, serial ? 1 : opt.cpu_lanes, ro);
  std::vector<GpuPlan> gpus = opt.gpus;
  if (gpus.empty()) gpus.push_back(GpuPlan{opt.device, opt.kernel_config, opt.kernel_source});
  auto m = std::make_unique<ExactMapper>(idx, gpus, serial ? 1 : opt.streams, ro);
  if (opt.poison_gpu) m->poison_gpu_outputs();
  return m;
}

// The reference path: kseq, one batch at a time, sam_write1 per record, no worker threads.
MapStats run_serial(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress) {
  MapStats st;
  const auto t0 = Clock::now();
  Outputs outs(opt);
  ReadSource source(opt.reads);
  auto t = Clock::now();
  const BwtIndex idx = read_index(opt.ref);
  st.index_s = since(t);
  auto mapper = make_mapper(opt, idx, true);
  SamWriter sam(opt.out, outs.out_file(), idx, opt.command_line, 1, sam_options(opt));
  std::unique_ptr<FastqWriter> fq;
  if (outs.un) fq = std::make_unique<FastqWriter>(opt.unmatched, outs.un->temp_path().string(), 1);
  TaskPool pool(0);
  ReadBatch reads;
  std::unique_ptr<MappedBatch> mapped;
  MapTimes times;
  for (;;) {
    t = Clock::now();
    if (!source.next(reads, batch_reads(opt), batch_bases(opt), kMaxReadLen)) break;
    mapper->prepare(reads);
    st.parse_s += since(t);
    mapper->map(0, reads, mapped, pool, times);
    mapper->finish(*mapped, reads, pool, times);
    t = Clock::now();
    sam.write_serial(reads, *mapped);
    if (fq) fq->write_serial(reads, *mapped);
    st.write_s += since(t);
    add_counts(st, mapped->counts());
    if (progress) progress(st.reads);
  }
  t = Clock::now();
  sam.close();
  if (fq) fq->close();
  st.write_s += since(t);
  outs.commit();
  add_times(st, times);
  st.mapper = mapper->describe();
  st.kernel_origin = mapper->kernel_origin();
  st.input_format = "kseq";
  st.total_s = since(t0);
  st.peak_rss_mib = peak_rss_mib();
  st.cpu_s = cpu_seconds();
  return st;
}

// A batch on its way through the stages (the objects are recycled: their buffers keep capacity).
struct Batch {
  std::uint64_t seq = 0;
  ScanBatch scan;
  ReadBatch reads;
  std::unique_ptr<MappedBatch> mapped;
  FormattedBatch out;
};

}  // namespace

MapStats run_map(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress) {
  (void)parse_read_group(opt.read_group);  // a bad -R fails before any work
  if (!opt.reads2.empty()) return run_map_pairs(opt, progress);
  if (opt.serial_io) return run_serial(opt, progress);
  MapStats st;
  const auto t0 = Clock::now();
  Outputs outs(opt);
  const int threads = opt.threads > 0 ? opt.threads : default_threads();
  TaskPool pool(threads);
  TextInput input(opt.reads, pool);  // opens the reads (InputError when missing) and starts reading
  auto t = Clock::now();
  const BwtIndex idx = read_index(opt.ref);
  st.index_s = since(t);
  std::unique_ptr<Mapper> mapper = make_mapper(opt, idx, false);
  SamWriter sam(opt.out, outs.out_file(), idx, opt.command_line, threads, sam_options(opt));
  std::unique_ptr<FastqWriter> fq;
  if (outs.un) fq = std::make_unique<FastqWriter>(opt.unmatched, outs.un->temp_path().string(), threads);
  RecordScanner scanner(input);

  const int lanes = mapper->lanes();
  // every batch in flight is one of these: scan 1, parse 1, lanes, 1 waiting for its turn to be
  // formatted, format 1, write 1, and one in each queue between them
  const std::size_t n_batches = static_cast<std::size_t>(lanes) + 6;
  const std::size_t max_reads = batch_reads(opt), max_bases = batch_bases(opt);
  double parse_s = 0, format_s = 0, write_s = 0;
  std::vector<MapTimes> lane_times(static_cast<std::size_t>(lanes) + 1);  // the last: finish()
  std::atomic<int> lanes_left{lanes};
  // last of the locals that the stages use: ~Pipeline (a throw before join) stops them first
  Pipeline<Batch> P(n_batches, static_cast<std::size_t>(lanes));
  P.stage([&] {  // scan
    for (std::uint64_t seq = 0;; ++seq) {
      auto b = P.free_q.pop();
      if (!b || !scanner.next((*b)->scan, max_reads, max_bases, kMaxReadLen)) break;
      (*b)->seq = seq;
      const bool last = (*b)->scan.error != nullptr;  // parse rethrows it after the batch's own errors
      if (!P.scanned.push(*b) || last) break;
    }
    P.scanned.close();
  });
  P.stage([&] {  // parse
    while (auto b = P.scanned.pop()) {
      const auto tp = Clock::now();
      parse_batch(opt.reads, (*b)->scan, (*b)->reads, pool);
      mapper->prepare((*b)->reads);
      (*b)->scan.clear();  // the text chunks go back as soon as the reads are parsed
      parse_s += since(tp);
      if (!P.parsed.push(*b)) break;
    }
    P.parsed.close();
  });
  for (int l = 0; l < lanes; ++l)
    P.stage([&, l] {  // map
      while (auto b = P.parsed.pop()) {
        mapper->map(l, (*b)->reads, (*b)->mapped, pool, lane_times[static_cast<std::size_t>(l)]);
        if (!P.mapped.push((*b)->seq, *b)) break;
      }
      if (--lanes_left == 0) P.mapped.finish();
    });
  P.stage([&] {  // format, in input order
    while (auto b = P.mapped.pop()) {
      mapper->finish(*(*b)->mapped, (*b)->reads, pool, lane_times.back());
      const auto tf = Clock::now();
      sam.format((*b)->reads, *(*b)->mapped, (*b)->out, pool, fq != nullptr);
      add_counts(st, (*b)->mapped->counts());
      format_s += since(tf);
      if (!P.formatted.push(*b)) break;
    }
    P.formatted.close();
  });
  P.stage([&] {  // write
    std::uint64_t done = 0;
    while (auto b = P.formatted.pop()) {
      const auto tw = Clock::now();
      sam.write((*b)->out);
      if (fq) fq->write((*b)->out);
      write_s += since(tw);
      done += (*b)->reads.size();
      if (progress) progress(done);
      if (!P.free_q.push(*b)) break;
    }
  });
  P.join();
  t = Clock::now();
  sam.close();
  if (fq) fq->close();
  write_s += since(t);
  outs.commit();

  for (const auto& lt : lane_times) add_times(st, lt);
  add_input(st, input);
  close_stats(st, {scanner.busy_seconds(), parse_s, format_s, write_s}, *mapper, lanes, threads, n_batches, t0);
  return st;
}

}  // namespace evk::barracuda_exact
