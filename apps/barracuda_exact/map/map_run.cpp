#include "map/map_run.hpp"

#include <atomic>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "core/kernel_config.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#include "io/aln_sam.hpp"
#include "io/index_files.hpp"
#include "io/read_batch.hpp"
#include "io/record_scan.hpp"
#include "evk/atomic_file.hpp"
#include "io/damage_files.hpp"
#include "io/sam_writer.hpp"
#include "io/text_input.hpp"
#include "map/aln_mapper.hpp"
#include "core/gpu_room.hpp"
#include "map/exact_mapper.hpp"
#include "map/map_stages.hpp"
#include "map/map_trace.hpp"

namespace evk::barracuda_exact {

std::unique_ptr<Mapper> make_mapper(const MapOptions& opt, const BwtIndex& idx, int lanes) {
  RecordOptions ro;
  ro.rg_id = parse_read_group(opt.read_group).id;
  ro.max_top2 = opt.aln.max_top2;
  if (lanes <= 0) lanes = opt.gpu ? map_streams(opt) : opt.cpu_lanes;
  std::vector<GpuPlan> gpus = opt.gpus;
  if (opt.gpu && gpus.empty()) gpus.push_back(GpuPlan{});
  if (opt.inexact) {
    if (!opt.gpu) return std::make_unique<AlnMapper>(idx, opt.aln, lanes, ro);
    return std::make_unique<AlnMapper>(idx, opt.aln, gpus, lanes, ro, opt.gpu_passes, stages::batch_reads(opt));
  }
  if (!opt.gpu) return std::make_unique<ExactMapper>(idx, lanes, ro);
  return std::make_unique<ExactMapper>(idx, gpus, lanes, ro);
}

namespace {

using namespace stages;

// A batch on its way through the stages (the objects are recycled: their buffers keep capacity).
// Single end: end[0] and mapped[0] (its records). Pairs: each file's reads and search in end[e] and
// mapped[e], both ends interleaved in `pairs_reads` (read 1 and read 2 of pair i at 2i and 2i + 1:
// the records' order) and sampe's records in `pairs`.
struct Batch {
  std::uint64_t seq = 0;
  ScanBatch scan[2];
  ReadBatch end[2];
  ReadBatch pairs_reads;
  std::unique_ptr<MappedBatch> mapped[2];
  std::unique_ptr<AlnPairMapped> pairs;
  FormattedBatch out;

  const ReadBatch& record_reads(bool paired) const { return paired ? pairs_reads : end[0]; }
};

// What the stages share: the options, the pool, the mapper, the scanners and writers, the figures.
struct Run {
  const MapOptions& opt;
  bool paired;
  TaskPool& pool;
  Mapper& mapper;
  AlnMapper* pair_mapper;  // pairs: mapper as the inexact mapper (finish_pairs)
  std::vector<RecordScanner*> scanners;  // one per file
  SamWriter& sam;
  FastqWriter* fq;
  MapStats& st;
  const std::function<void(std::uint64_t)>& progress;
  std::size_t max_reads, max_bases;
  double parse_s = 0, format_s = 0, write_s = 0;
  std::vector<MapTimes> lane_times;  // one per lane, and the last for finish()
  std::atomic<int> lanes_left{0};
  MapTrace* trace = nullptr;  // --trace: each batch's stages

  // A trace row for batch b's stage that began at `start` (trace time) and ends now.
  void traced(const Batch& b, const char* stage, int lane, double start, std::uint64_t reads,
              const MapTimes& lt = {}) const {
    if (trace) trace->add({static_cast<std::int64_t>(b.seq), stage, lane, start, trace->now(), reads, lt});
  }
  double mark() const { return trace ? trace->now() : 0; }
};

void scan_stage(Run& R, Pipeline<Batch>& P) {
  for (std::uint64_t seq = 0;; ++seq) {
    auto b = P.free_q.pop();
    if (!b) break;
    ScanBatch* s = (*b)->scan;
    const double ts = R.mark();
    bool more[2] = {false, false};
    for (std::size_t e = 0; e < R.scanners.size(); ++e)
      more[e] = R.scanners[e]->next(s[e], R.max_reads, R.max_bases, kMaxReadLen);
    if (!more[0] && (!R.paired || !more[1])) break;  // pairs: both files ended at the same pair
    (*b)->seq = seq;
    R.traced(**b, "scan", -1, ts, s[0].recs.size());
    // an error (parse rethrows it after the batch's own errors), or one file of the pairs at its
    // end (parse reports the counts that differ): the last batch
    const bool last = s[0].error || (R.paired && (s[1].error || !more[0] || !more[1]));
    if (!P.scanned.push(*b) || last) break;
  }
  P.scanned.close();
}

void parse_stage(Run& R, Pipeline<Batch>& P) {
  const MapOptions& opt = R.opt;
  while (auto b = P.scanned.pop()) {
    Batch& B = **b;
    const auto tp = Clock::now();
    const double ts = R.mark();
    parse_batch(opt.reads, B.scan[0], B.end[0], R.pool);
    if (R.paired) {  // each file's errors first (file 1's before file 2's), then the pair checks
      parse_batch(opt.reads2, B.scan[1], B.end[1], R.pool);
      check_pairs(opt.reads, B.end[0], opt.reads2, B.end[1]);
      interleave_pairs(B.end[0], B.end[1], B.pairs_reads, R.pool);
      B.scan[1].clear();
    } else {
      R.mapper.prepare(B.end[0]);
    }
    B.scan[0].clear();  // the text chunks go back as soon as the reads are parsed
    R.parse_s += since(tp);
    R.traced(B, "parse", -1, ts, B.end[0].size());
    if (!P.parsed.push(*b)) break;
  }
  P.parsed.close();
}

void map_stage(Run& R, Pipeline<Batch>& P, int lane) {
  MapTimes& lt = R.lane_times[static_cast<std::size_t>(lane)];
  const int ends = R.paired ? 2 : 1;
  while (auto b = P.parsed.pop()) {
    const double ts = R.mark();
    const MapTimes before = lt;
    for (int e = 0; e < ends; ++e) R.mapper.map(lane, (*b)->end[e], (*b)->mapped[e], R.pool, lt);
    R.traced(**b, "map", lane, ts, (*b)->end[0].size() + (R.paired ? (*b)->end[1].size() : 0), times_since(lt, before));
    if (!P.mapped.push((*b)->seq, *b)) break;
  }
  if (--R.lanes_left == 0) P.mapped.finish();
}

void format_stage(Run& R, Pipeline<Batch>& P) {
  while (auto b = P.mapped.pop()) {
    Batch& B = **b;
    const MappedBatch* recs = B.mapped[0].get();
    const double ts = R.mark();
    if (R.paired) {  // sampe's records, in input order
      if (!B.pairs) B.pairs = std::make_unique<AlnPairMapped>(R.pair_mapper->record_options());
      R.pair_mapper->finish_pairs(*B.mapped[0], *B.mapped[1], B.end[0], B.end[1], R.opt.pe, *B.pairs, R.pool,
                                  R.lane_times.back());
      recs = B.pairs.get();
    } else {
      R.mapper.finish(*B.mapped[0], B.end[0], R.pool, R.lane_times.back());
    }
    R.traced(B, "finish", -1, ts, B.record_reads(R.paired).size());
    const auto tf = Clock::now();
    const double tfs = R.mark();
    R.sam.format(B.record_reads(R.paired), *recs, B.out, R.pool, R.fq != nullptr);
    add_counts(R.st, recs->counts());
    R.format_s += since(tf);
    R.traced(B, "format", -1, tfs, B.record_reads(R.paired).size());
    if (!P.formatted.push(*b)) break;
  }
  P.formatted.close();
}

void write_stage(Run& R, Pipeline<Batch>& P) {
  std::uint64_t done = 0;
  while (auto b = P.formatted.pop()) {
    const auto tw = Clock::now();
    const double ts = R.mark();
    R.sam.write((*b)->out);
    if (R.fq) R.fq->write((*b)->out);
    R.write_s += since(tw);
    R.traced(**b, "write", -1, ts, (*b)->record_reads(R.paired).size());
    done += (*b)->record_reads(R.paired).size();
    if (R.progress) R.progress(done);
    if (!P.free_q.push(*b)) break;
  }
}

void check_options(const MapOptions& opt) {
  (void)parse_read_group(opt.read_group);  // a bad -R fails before any work
  if (opt.reads2.empty()) return;
  if (!opt.inexact) throw InputError("--exact maps single-end reads only (no READS2)");
  if (!opt.unmatched.empty()) input_error("--unmatched", "only available with --exact");
}

}  // namespace

MapStats run_map(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress,
                 const std::function<void(Mapper&)>& on_mapper) {
  check_options(opt);
  const bool paired = !opt.reads2.empty();
  MapStats st;
  const auto t0 = Clock::now();
  Outputs outs(opt);
  std::optional<AtomicOutput> trace_out;  // a bad --trace path fails before any work too
  std::optional<MapTrace> trace;
  if (!opt.trace.empty()) {
    trace_out.emplace(opt.trace);
    trace.emplace(t0);
  }
  const int threads = opt.threads > 0 ? opt.threads : default_threads();
  TaskPool pool(threads);
  // open the reads (InputError when missing) and start reading: a gzip stream (inflated on one
  // thread) up to 1 GiB of text ahead while the index loads
  std::vector<std::unique_ptr<TextInput>> inputs;
  constexpr std::size_t kChunk = std::size_t{1} << 20, kAhead = std::size_t{1} << 30;
  inputs.push_back(std::make_unique<TextInput>(opt.reads, pool, kChunk, kAhead));
  if (paired) inputs.push_back(std::make_unique<TextInput>(opt.reads2, pool, kChunk, kAhead));
  if (!opt.damage.empty())  // --damage's folder checked now, not after the mapping
    for (const char* suffix : {".misincorporation.txt", ".lgdistribution.txt", ".dnacomp.txt", ".damage.svg"})
      AtomicOutput probe(opt.damage + suffix);
  std::vector<int> devs;  // the GPUs, started while the index loads
  for (const auto& g : opt.gpus) devs.push_back(g.device);
  if (devs.empty()) devs.push_back(0);
  std::future<void> started = opt.gpu ? gpu_start(devs) : std::future<void>{};
  auto t = Clock::now();
  const BwtIndex idx = read_index(opt.ref);
  st.index_s = since(t);
  if (trace) trace->add({-1, "index", -1, trace->now() - st.index_s, trace->now(), 0, {}});
  std::unique_ptr<Mapper> mapper;
  if (opt.gpu) {  // a GPU without room for the index: the CPU backend (or, asked for the GPU, an error)
    started.wait();
    st.gpu_fallback = gpu_index_room(idx, devs, opt.gpu_memory);
    if (!st.gpu_fallback.empty() && opt.gpu_forced) input_error("--backend gpu", st.gpu_fallback);
  }
  if (st.gpu_fallback.empty()) {
    mapper = make_mapper(opt, idx);
  } else {
    MapOptions cpu = opt;
    cpu.gpu = false;
    cpu.gpus.clear();
    mapper = make_mapper(cpu, idx);
  }
  if (on_mapper) on_mapper(*mapper);
  SamWriter sam(opt.out, outs.out_file(), idx, opt.command_line, threads, sam_options(opt));
  std::unique_ptr<FastqWriter> fq;
  if (outs.un) fq = std::make_unique<FastqWriter>(opt.unmatched, outs.un->temp_path().string(), threads);
  std::vector<std::unique_ptr<RecordScanner>> scanners;
  for (const auto& in : inputs) scanners.push_back(std::make_unique<RecordScanner>(*in));

  const int lanes = mapper->lanes();
  Run R{opt, paired, pool, *mapper, paired ? dynamic_cast<AlnMapper*>(mapper.get()) : nullptr, {}, sam, fq.get(), st,
        progress, batch_reads(opt), batch_bases(opt)};
  for (const auto& s : scanners) R.scanners.push_back(s.get());
  R.trace = trace ? &*trace : nullptr;
  R.lane_times.resize(static_cast<std::size_t>(lanes) + 1);
  R.lanes_left = lanes;
  // every batch in flight is one of these: scan 1, parse 1, lanes, 1 waiting for its turn to be
  // formatted, format 1, write 1, and one in each queue between them
  const std::size_t n_batches = static_cast<std::size_t>(lanes) + 6;
  for (const auto& in : inputs) in->end_read_ahead();  // the pipeline takes over
  {
    // last of the locals that the stages use: ~Pipeline (a throw before join) stops them first
    Pipeline<Batch> P(n_batches, static_cast<std::size_t>(lanes));
    P.stage([&] { scan_stage(R, P); });
    P.stage([&] { parse_stage(R, P); });
    for (int l = 0; l < lanes; ++l) P.stage([&, l] { map_stage(R, P, l); });
    P.stage([&] { format_stage(R, P); });
    P.stage([&] { write_stage(R, P); });
    P.join();
  }
  t = Clock::now();
  sam.close();
  if (fq) fq->close();
  R.write_s += since(t);
  if (trace) {
    std::ofstream f(trace_out->temp_path(), std::ios::binary);
    const std::string text = trace->tsv();
    if (!f.write(text.data(), static_cast<std::streamsize>(text.size())) || !f.flush()) input_error(opt.trace, "write failed");
    trace_out->commit();
  }
  outs.commit();
  if (const DamageProfile* d = sam.damage()) {
    const std::string source = "reads " + opt.reads + (opt.reads2.empty() ? "" : " " + opt.reads2) + " mapped to " + opt.ref +
                               " by barracuda_exact map, MAPQ >= " + std::to_string(opt.damage_options.min_mapq);
    write_misincorporation(*d, opt.damage + ".misincorporation.txt", source);
    write_lengths(*d, opt.damage + ".lgdistribution.txt", source);
    write_composition(*d, opt.damage + ".dnacomp.txt", source);
    write_damage_svg(*d, opt.damage + ".damage.svg");
  }

  for (const auto& lt : R.lane_times) add_times(st, lt);
  double scan_s = 0;
  for (const auto& s : scanners) scan_s += s->busy_seconds();
  for (const auto& in : inputs) add_input(st, *in);
  close_stats(st, {scan_s, R.parse_s, R.format_s, R.write_s}, *mapper, lanes, threads, n_batches, t0);
  return st;
}

}  // namespace evk::barracuda_exact
