// The serial oracles of `map` (serial_map.hpp).
#include "serial_map.hpp"

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "core/aln_search.hpp"
#include "core/sampe.hpp"
#include "core/samse.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/aln_sam.hpp"
#include "io/index_files.hpp"
#include "io/queue.hpp"
#include "io/read_batch.hpp"
#include "io/sam_writer.hpp"
#include "io/sequences.hpp"
#include "map/aln_mapper.hpp"
#include "map/exact_mapper.hpp"
#include "map/map_run.hpp"
#include "map/map_stages.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/aln_gpu.hpp"
#endif

namespace bct {

using namespace evk::barracuda_exact;
using evk::InputError;
using evk::AtomicOutput;

namespace {

using stages::Clock;
using stages::Failure;
using stages::since;

// One end's reads of a batch: as read, as codes (whole reads), and the searched (trimmed) lengths.
struct End {
  ReadBatch reads;      // with the codes of the whole reads
  ReadCodes searched;   // the same codes, lengths after -q trimming
  std::vector<int> len;
  AlnBatch alns;
  std::vector<AlnRecord> recs;
};
struct Batch {
  End end[2];
  bool paired = false;
};
using BatchPtr = std::unique_ptr<Batch>;

void prepare(End& e, const AlnOptions& opt) {
  const std::size_t n = e.reads.size();
  e.len.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view q = e.reads.qual(i);
    e.len[i] = trim_len(opt.trim_qual, q.empty() ? nullptr : q.data(), static_cast<int>(e.reads.codes.len[i]));
  }
  e.searched.codes.clear();
  e.searched.offset = e.reads.codes.offset;
  e.searched.len.assign(e.len.begin(), e.len.end());
}

void count(AlnMapStats& st, const AlnRecord& r) {
  if (!r.aligned || (r.flag & 4)) {
    ++st.unmapped;
    return;
  }
  if (r.xt == 'R') ++st.repeat;
  else ++st.unique;
  if (r.xo > 0) ++st.gapped;
  if (r.xt == 'M') ++st.mate_rescued;
  if (r.flag & 2) ++st.proper_pairs;
  ++st.by_diff[r.nm < 7 ? r.nm : 7];
}

// bwa aln's search of one end's reads: on the CPU, or on opt.gpus' first GPU.
class Searcher {
 public:
  Searcher(const BwtIndex& idx, const MapOptions& opt) : idx_(idx), opt_(opt) {
#if defined(EVK_HAVE_CUDA)
    if (opt.gpu) gpu_ = std::make_unique<GpuAligner>(idx, opt.aln, opt.gpus.empty() ? 0 : opt.gpus.front().device);
#else
    if (opt.gpu) throw InputError("--backend gpu: built without CUDA");
#endif
  }
  void search(End& E, AlnMapStats& st) {
    E.searched.codes.swap(E.reads.codes.codes);  // share the codes: the search reads only the first len of each read
#if defined(EVK_HAVE_CUDA)
    if (gpu_) {
      GpuAlnTimes gt;
      E.alns = gpu_->search(E.searched, opt_.threads, &gt);
      st.kernel_s += gt.kernel_ms / 1e3;
      st.transfer_s += (gt.pack_ms + gt.upload_ms + gt.compact_ms + gt.download_ms) / 1e3;  // moving reads and hits
      st.gpu_fallback += gt.fallback_reads;
      st.fallback_s += gt.fallback_s;
    } else
#endif
    {
      E.alns = aln_search_batch(idx_, E.searched, opt_.aln, opt_.threads);
    }
    E.searched.codes.swap(E.reads.codes.codes);
  }

 private:
  const BwtIndex& idx_;
  const MapOptions& opt_;
#if defined(EVK_HAVE_CUDA)
  std::unique_ptr<GpuAligner> gpu_;
#endif
};

}  // namespace

AlnMapStats serial_aln_map(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress) {
  AlnMapStats st;
  const auto t0 = Clock::now();
  const MapOptions& mo = opt;
  const bool paired = !opt.reads2.empty();
  const ReadGroup rg = parse_read_group(opt.read_group);
  (void)sam_path_is_bam(mo.out);  // validates the extension before any work
  std::optional<AtomicOutput> out_file;
  if (mo.out != "-") out_file.emplace(mo.out);
  if (!mo.unmatched.empty()) evk::input_error("--unmatched", "only available with --exact");
  ReadSource src1(mo.reads);
  std::optional<ReadSource> src2;
  if (paired) src2.emplace(opt.reads2);

  auto t = Clock::now();
  const BwtIndex idx = read_index(mo.ref);
  st.index_s = since(t);
  AlnSamWriter sam(mo.out, out_file ? out_file->temp_path().string() : "-", idx, mo.command_line, rg, mo.threads, {}, mo.level);

  Searcher searcher(idx, opt);

  const std::size_t batch = mo.batch_reads > 0 ? mo.batch_reads : kSampeBatch;  // reads (pairs) per batch
  Queue<BatchPtr> parsed(2), done(2);
  Failure fail;
  double parse_s = 0, write_s = 0;
  std::thread reader([&] {
    try {
      for (;;) {
        const auto tp = Clock::now();
        auto b = std::make_unique<Batch>();
        b->paired = paired;
        const bool more = src1.next(b->end[0].reads, batch, ~std::size_t{0} >> 1, kMaxReadLen);
        if (paired) {
          src2->next(b->end[1].reads, batch, ~std::size_t{0} >> 1, kMaxReadLen);
          check_pairs(mo.reads, b->end[0].reads, opt.reads2, b->end[1].reads);  // counts, names, formats, empty reads
        }
        if (!more) break;
        if (!paired) b->end[0].reads.drop_empty();  // as bwa aln/samse do: no record for an empty read
        for (int e = 0; e < (paired ? 2 : 1); ++e) prepare(b->end[e], opt.aln);
        parse_s += since(tp);
        if (!parsed.push(std::move(b))) break;
      }
    } catch (...) {
      fail.set(std::current_exception());
      done.close();
    }
    parsed.close();
  });
  std::thread writer([&] {
    try {
      std::uint64_t n = 0;
      while (auto b = done.pop()) {
        const auto tw = Clock::now();
        Batch& B = **b;
        if (B.paired) sam.write_pairs(B.end[0].reads, B.end[1].reads, B.end[0].recs, B.end[1].recs);
        else sam.write(B.end[0].reads, B.end[0].recs);
        write_s += since(tw);
        n += B.end[0].reads.size();
        if (progress) progress(n);
      }
    } catch (...) {
      fail.set(std::current_exception());
      parsed.close();
    }
    done.close();
  });
  try {
    Rand48 rng(static_cast<std::uint32_t>(idx.seed));
    IsizeInfo last_ii;
    while (auto b = parsed.pop()) {
      Batch& B = **b;
      const int n_end = B.paired ? 2 : 1;
      auto ts = Clock::now();
      for (int e = 0; e < n_end; ++e) searcher.search(B.end[e], st);
      st.search_s += since(ts);
      ts = Clock::now();
      if (B.paired) {
        const AlnReads r1{&B.end[0].reads.codes, &B.end[0].len}, r2{&B.end[1].reads.codes, &B.end[1].len};
        SampeResult res = sampe_batch(idx, r1, r2, B.end[0].alns, B.end[1].alns, opt.aln, opt.pe, rng, last_ii, mo.threads);
        B.end[0].recs = std::move(res.rec1);
        B.end[1].recs = std::move(res.rec2);
        last_ii = res.isize;
        st.pairs += B.end[0].reads.size();
      } else {
        B.end[0].recs = samse_batch(idx, AlnReads{&B.end[0].reads.codes, &B.end[0].len}, B.end[0].alns, opt.aln, rng, mo.threads);
      }
      st.sam_s += since(ts);
      for (int e = 0; e < n_end; ++e) {
        st.reads += B.end[e].reads.size();
        for (const auto& r : B.end[e].recs) count(st, r);
      }
      if (!done.push(std::move(*b))) break;
    }
  } catch (...) {
    fail.set(std::current_exception());
    parsed.close();
  }
  done.close();
  reader.join();
  writer.join();
  fail.rethrow();
  st.parse_s = parse_s;
  t = Clock::now();
  sam.close();
  st.write_s = write_s + since(t);
  if (out_file) out_file->commit();
  st.total_s = since(t0);
  return st;
}

void poison_gpu(Mapper& m) {
  if (auto* e = dynamic_cast<ExactMapper*>(&m)) e->poison_gpu_outputs();
  if (auto* a = dynamic_cast<AlnMapper*>(&m)) a->poison_gpu_outputs();
}

namespace {

using stages::add_counts;
using stages::add_times;
using stages::cpu_seconds;
using stages::peak_rss_mib;

// Pairs: serial_aln_map's figures as the driver's (htslib's default compression: no -u or -l).
MapStats serial_pairs(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress) {
  const AlnMapStats a = serial_aln_map(opt, progress);
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
  st.mapper = std::string("bwa aln + sampe, serial driver, ") + (opt.gpu ? "GPU" : "CPU");
  st.peak_rss_mib = peak_rss_mib();
  st.cpu_s = cpu_seconds();
  return st;
}

}  // namespace

MapStats serial_map(const MapOptions& opt, bool poison, const std::function<void(std::uint64_t)>& progress) {
  (void)parse_read_group(opt.read_group);  // a bad -R fails before any work
  if (!opt.reads2.empty()) {
    if (!opt.inexact) throw InputError("--exact maps single-end reads only (no READS2)");
    if (!opt.unmatched.empty()) evk::input_error("--unmatched", "only available with --exact");
    return serial_pairs(opt, progress);
  }
  MapStats st;
  const auto t0 = Clock::now();
  stages::Outputs outs(opt);
  ReadSource source(opt.reads);
  auto t = Clock::now();
  const BwtIndex idx = read_index(opt.ref);
  st.index_s = since(t);
  auto mapper = make_mapper(opt, idx, 1);
  if (poison) poison_gpu(*mapper);
  SamWriter sam(opt.out, outs.out_file(), idx, opt.command_line, 1, stages::sam_options(opt));
  std::unique_ptr<FastqWriter> fq;
  if (outs.un) fq = std::make_unique<FastqWriter>(opt.unmatched, outs.un->temp_path().string(), 1);
  evk::TaskPool pool(0);
  ReadBatch reads;
  std::unique_ptr<MappedBatch> mapped;
  MapTimes times;
  for (;;) {
    t = Clock::now();
    if (!source.next(reads, stages::batch_reads(opt), stages::batch_bases(opt), kMaxReadLen)) break;
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

}  // namespace bct
