// Paired-end inexact mapping (bwa aln + sampe) through the streaming pipeline of `map`
// (map_run.hpp): the stages of the single-end driver (map_run.cpp), with two inputs in lockstep.
//   scan    both files, a batch of up to `batch_reads` records of each (bwa sampe's batch)
//   parse   each file's records (its own errors first, file 1's before file 2's), then the pair
//           checks (check_pairs: counts, names, formats, empty reads) and the reads interleaved
//   map     a lane searches read 1s then read 2s (AlnMapper::map), out of order
//   format  in input order: sampe's records (AlnMapper::finish_pairs: bwa's draws and the insert
//           size need the batches in file order), then the records formatted in parallel parts,
//           interleaved (read 1, read 2 of each pair)
//   write   in order
// A batch boundary in one file is one in the other, so a file that ends first, a truncation or a
// name that differs is reported for the same pair, with the same message, as by the serial
// reference (io/aln_run.cpp), and the insert size is estimated over the same batches.
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/kernel_config.hpp"
#include "evk/parallel.hpp"
#include "io/aln_mapper.hpp"
#include "io/aln_run.hpp"
#include "io/index_files.hpp"
#include "io/map_run.hpp"
#include "io/map_stages.hpp"
#include "io/queue.hpp"
#include "io/read_batch.hpp"
#include "io/record_scan.hpp"
#include "io/sam_writer.hpp"
#include "io/text_input.hpp"

namespace evk::barracuda_exact {
namespace {

using namespace stages;

std::unique_ptr<AlnMapper> make_pair_mapper(const MapOptions& opt, const BwtIndex& idx) {
  RecordOptions ro;
  ro.rg_id = parse_read_group(opt.read_group).id;
  ro.max_top2 = opt.aln.max_top2;
  if (!opt.gpu) return std::make_unique<AlnMapper>(idx, opt.aln, opt.cpu_lanes, ro);
  std::vector<int> devices;
  for (const auto& g : opt.gpus) devices.push_back(g.device);
  if (devices.empty()) devices.push_back(opt.device);
  auto m = std::make_unique<AlnMapper>(idx, opt.aln, devices, opt.streams, ro);
  if (opt.poison_gpu) m->poison_gpu_outputs();
  return m;
}

// The reference path: the batch-by-batch driver (kseq, one batch at a time, sam_write1 per record;
// htslib's default compression: no -u or -l).
MapStats run_pairs_serial(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress) {
  AlnMapOptions ao;
  ao.map = opt;
  ao.reads2 = opt.reads2;
  ao.aln = opt.aln;
  ao.pe = opt.pe;
  ao.read_group = opt.read_group;
  const AlnMapStats a = run_aln_map(ao, progress);
  MapStats st;
  st.reads = a.reads;
  st.unique = a.unique;
  st.repeat = a.repeat;
  st.unmatched = a.unmapped;
  MapCounts& c = st.counts;
  c.reads = a.reads;
  c.unique = a.unique;
  c.repeat = a.repeat;
  c.unmatched = a.unmapped;
  c.pairs = a.pairs;
  c.gapped = a.gapped;
  c.mate_rescued = a.mate_rescued;
  c.proper_pairs = a.proper_pairs;
  c.handed_back = a.gpu_fallback;
  for (int d = 0; d < 8; ++d) c.by_diff[d] = a.by_diff[d];
  st.index_s = a.index_s;
  st.parse_s = a.parse_s;
  st.match_s = a.search_s;
  st.kernel_s = a.kernel_s;
  st.transfer_s = a.transfer_s;
  st.fallback_s = a.fallback_s;
  st.records_s = a.sam_s;
  st.write_s = a.write_s;
  st.total_s = a.total_s;
  st.input_format = "kseq";
  st.mapper = std::string("bwa aln + sampe, serial driver, ") + (opt.gpu ? "GPU " + std::to_string(opt.device) : "CPU");
  st.peak_rss_mib = peak_rss_mib();
  st.cpu_s = cpu_seconds();
  return st;
}

// A batch of pairs on its way through the stages (recycled: the buffers keep their capacity).
struct PairBatch {
  std::uint64_t seq = 0;
  ScanBatch scan[2];
  ReadBatch end[2];  // each file's reads
  ReadBatch reads;   // both interleaved, read 1 and read 2 of pair i at 2i and 2i + 1: the records' order
  std::unique_ptr<MappedBatch> mapped[2];  // each end's search
  std::unique_ptr<AlnPairMapped> pairs;    // sampe's records
  FormattedBatch out;
};

}  // namespace

MapStats run_map_pairs(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress) {
  if (!opt.inexact) throw InputError("--exact maps single-end reads only (no READS2)");
  if (!opt.unmatched.empty()) input_error("--unmatched", "only available with --exact");
  (void)parse_read_group(opt.read_group);  // a bad -R fails before any work
  if (opt.serial_io) return run_pairs_serial(opt, progress);
  MapStats st;
  const auto t0 = Clock::now();
  Outputs outs(opt);
  const int threads = opt.threads > 0 ? opt.threads : default_threads();
  TaskPool pool(threads);
  TextInput in1(opt.reads, pool), in2(opt.reads2, pool);  // open the reads (InputError when missing), start reading
  auto t = Clock::now();
  const BwtIndex idx = read_index(opt.ref);
  st.index_s = since(t);
  std::unique_ptr<AlnMapper> mapper = make_pair_mapper(opt, idx);
  SamWriter sam(opt.out, outs.out_file(), idx, opt.command_line, threads, sam_options(opt));
  RecordScanner sc1(in1), sc2(in2);

  const int lanes = mapper->lanes();
  const std::size_t n_batches = static_cast<std::size_t>(lanes) + 6;  // as the single-end driver's
  const std::size_t max_reads = batch_reads(opt), max_bases = batch_bases(opt);
  double parse_s = 0, format_s = 0, write_s = 0;
  std::vector<MapTimes> lane_times(static_cast<std::size_t>(lanes) + 1);  // the last: finish_pairs()
  std::atomic<int> lanes_left{lanes};
  // last of the locals that the stages use: ~Pipeline (a throw before join) stops them first
  Pipeline<PairBatch> P(n_batches, static_cast<std::size_t>(lanes));
  P.stage([&] {  // scan, both files in lockstep
    for (std::uint64_t seq = 0;; ++seq) {
      auto b = P.free_q.pop();
      if (!b) break;
      ScanBatch* s = (*b)->scan;
      const bool more1 = sc1.next(s[0], max_reads, max_bases, kMaxReadLen);
      const bool more2 = sc2.next(s[1], max_reads, max_bases, kMaxReadLen);
      if (!more1 && !more2) break;  // both files ended at the same pair
      (*b)->seq = seq;
      // an error, or one file at its end (parse reports the counts that differ): the last batch
      const bool last = s[0].error || s[1].error || !more1 || !more2;
      if (!P.scanned.push(*b) || last) break;
    }
    P.scanned.close();
  });
  P.stage([&] {  // parse and pair
    while (auto b = P.scanned.pop()) {
      PairBatch& B = **b;
      const auto tp = Clock::now();
      parse_batch(opt.reads, B.scan[0], B.end[0], pool);
      parse_batch(opt.reads2, B.scan[1], B.end[1], pool);
      check_pairs(opt.reads, B.end[0], opt.reads2, B.end[1]);
      interleave_pairs(B.end[0], B.end[1], B.reads, pool);
      B.scan[0].clear();  // the text chunks go back as soon as the reads are parsed
      B.scan[1].clear();
      parse_s += since(tp);
      if (!P.parsed.push(*b)) break;
    }
    P.parsed.close();
  });
  for (int l = 0; l < lanes; ++l)
    P.stage([&, l] {  // map: both ends on this lane
      MapTimes& lt = lane_times[static_cast<std::size_t>(l)];
      while (auto b = P.parsed.pop()) {
        for (int e = 0; e < 2; ++e) mapper->map(l, (*b)->end[e], (*b)->mapped[e], pool, lt);
        if (!P.mapped.push((*b)->seq, *b)) break;
      }
      if (--lanes_left == 0) P.mapped.finish();
    });
  P.stage([&] {  // sampe and format, in input order
    while (auto b = P.mapped.pop()) {
      PairBatch& B = **b;
      if (!B.pairs) B.pairs = std::make_unique<AlnPairMapped>(mapper->record_options());
      mapper->finish_pairs(*B.mapped[0], *B.mapped[1], B.end[0], B.end[1], opt.pe, *B.pairs, pool, lane_times.back());
      const auto tf = Clock::now();
      sam.format(B.reads, *B.pairs, B.out, pool, false);
      add_counts(st, B.pairs->counts());
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
      write_s += since(tw);
      done += (*b)->reads.size();
      if (progress) progress(done);
      if (!P.free_q.push(*b)) break;
    }
  });
  P.join();
  t = Clock::now();
  sam.close();
  write_s += since(t);
  outs.commit();

  for (const auto& lt : lane_times) add_times(st, lt);
  add_input(st, in1);
  add_input(st, in2);
  close_stats(st, {sc1.busy_seconds() + sc2.busy_seconds(), parse_s, format_s, write_s}, *mapper, lanes, threads, n_batches, t0);
  return st;
}

}  // namespace evk::barracuda_exact
