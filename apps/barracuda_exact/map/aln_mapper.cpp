#include "map/aln_mapper.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <span>
#include <stdexcept>

#include "core/aln_positions.hpp"
#include "evk/error.hpp"
#include "io/aln_sam.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/aln_gpu.hpp"
#include "evk/cuda_check.hpp"
static_assert(evk::barracuda_exact::kMapLaterPasses == evk::barracuda_exact::kAlnMaxLaterPasses);
#endif

namespace evk::barracuda_exact {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr std::size_t kSearchGrain = 128;  // reads per search chunk (their costs differ a lot)
constexpr std::size_t kRecordGrain = 1024;  // reads per record chunk

// The batch's gap-open limit as bwa sets it (by the maximum differences of its longest read).
int batch_gapo(const AlnOptions& opt, std::span<const int> len) {
  int max_len = 0;
  for (int l : len) max_len = std::max(max_len, l);
  return std::min(opt.max_gapo, aln_max_diff(opt, max_len));
}

// aln_search_batch on the task pool over reads [from, to) (one of bwa's batches, or several with
// one gap-open limit): chunks of reads, each with its own searcher; the hits appended to out in order.
void search_cpu(const BwtIndex& idx, const AlnOptions& opt, const ReadCodes& rc, const std::vector<int>& len,
                std::size_t from, std::size_t to, TaskPool& pool, AlnBatch& out) {
  const std::size_t n = to - from, chunks = (n + kSearchGrain - 1) / kSearchGrain;
  const int gapo = batch_gapo(opt, std::span<const int>(len).subspan(from, n));
  std::vector<std::vector<Aln>> hits(chunks);
  std::vector<std::uint32_t> count(n);
  pool.parallel_for(n, kSearchGrain, [&](std::size_t b, std::size_t e) {
    AlnSearcher s(idx, opt);
    s.set_batch_max_gapo(gapo);
    std::vector<Aln>& h = hits[b / kSearchGrain];
    for (std::size_t i = b; i < e; ++i) {
      const std::size_t before = h.size();
      s.search(rc.codes.data() + rc.offset[from + i], static_cast<std::uint32_t>(len[from + i]), h);
      count[i] = static_cast<std::uint32_t>(h.size() - before);
    }
  });
  std::size_t total = out.alns.size();
  for (const auto& h : hits) total += h.size();
  out.alns.reserve(total);
  for (const auto& h : hits) out.alns.insert(out.alns.end(), h.begin(), h.end());
  for (std::size_t i = 0; i < n; ++i) out.offset.push_back(out.offset.back() + count[i]);
}

void append_batch(AlnBatch& to, const AlnBatch& part) {
  const std::uint32_t base = to.offset.back();
  to.alns.insert(to.alns.end(), part.alns.begin(), part.alns.end());
  for (std::size_t i = 1; i < part.offset.size(); ++i) to.offset.push_back(base + part.offset[i]);
}

constexpr std::size_t kPairGrain = 256;  // pairs per sampe chunk

}  // namespace

void aln_count(MapCounts& c, const AlnRecord& r) {
  ++c.reads;
  if (!r.aligned || (r.flag & 4)) {
    ++c.unmatched;
    return;
  }
  if (r.xt == 'R') ++c.repeat;
  else ++c.unique;
  if (r.xo > 0) ++c.gapped;
  if (r.xt == 'M') ++c.mate_rescued;
  if (r.flag & 2) ++c.proper_pairs;
  ++c.by_diff[r.nm < 7 ? r.nm : 7];
}

bool AlnPairMapped::record(const ReadBatch& pairs, std::size_t i, bam1_t* b) const {
  return aln_record_to_bam(b, pairs.name(i), pairs.seq(i), pairs.qual(i), rec[i & 1][i >> 1], ro_->rg_id);
}

bool AlnPairMapped::unmatched(std::size_t i) const {
  const AlnRecord& r = rec[i & 1][i >> 1];
  return !r.aligned || (r.flag & 4);
}

bool AlnMapped::record(const ReadBatch& reads, std::size_t i, bam1_t* rec) const {
  return aln_record_to_bam(rec, reads.name(i), reads.seq(i), reads.qual(i), recs[i], ro_->rg_id);
}

bool AlnMapped::unmatched(std::size_t i) const { return !recs[i].aligned || (recs[i].flag & 4); }

#if defined(EVK_HAVE_CUDA)
struct AlnMapper::Gpu {
  std::vector<std::unique_ptr<GpuAligner>> lanes;  // one per (device, stream)
  std::vector<std::unique_ptr<GpuHitRows>> rows;   // the lane's position lookup
  std::vector<int> device;                         // of each lane
  std::string text;
  bool variant = false;  // a GPU runs a variant of the inexact kernel (not the original as built)
};
#else
struct AlnMapper::Gpu {};
#endif

AlnMapper::AlnMapper(const BwtIndex& idx, const AlnOptions& opt, int lanes, const RecordOptions& ro)
    : idx_(idx), opt_(opt), ro_(ro), lanes_(std::max(lanes, 1)), rng_(static_cast<std::uint32_t>(idx.seed)) {}

AlnMapper::AlnMapper(const BwtIndex& idx, const AlnOptions& opt, const std::vector<GpuPlan>& gpus, int streams,
                     const RecordOptions& ro, int gpu_passes, std::size_t batch_reads)
    : idx_(idx), opt_(opt), ro_(ro), rng_(static_cast<std::uint32_t>(idx.seed)) {
#if defined(EVK_HAVE_CUDA)
  if (gpus.empty()) throw std::invalid_argument("AlnMapper: no GPU given");
  gpu_ = std::make_unique<Gpu>();
  streams = std::max(streams, 1);
  for (const GpuPlan& g : gpus) {
    const int d = g.device;
    InexactKernelConfig cfg;  // a variant's BLOCK_W, STACK_CAP, THREADS_PER_SM (512: the default, 0)
    cfg.later_passes = gpu_passes;
    if (auto it = g.config.find("BLOCK_W"); it != g.config.end()) cfg.block_w = std::stoi(it->second);
    if (auto it = g.config.find("STACK_CAP"); it != g.config.end()) cfg.stack_cap = std::stoi(it->second);
    if (auto it = g.config.find("THREADS_PER_SM"); it != g.config.end() && it->second != "512")
      cfg.threads_per_sm = std::stoi(it->second);
    if (!g.source.empty() || !(cfg == InexactKernelConfig{.later_passes = gpu_passes})) gpu_->variant = true;
    // the index once per GPU; the memory left split among its streams' stacks
    EVK_CUDA(cudaSetDevice(d));
    AlnDeviceShare share;
    share.bwt = std::make_shared<const DeviceBwt>(idx);
    auto sa = std::make_shared<const DeviceSa>(idx, d);
    std::size_t free_b = 0, total_b = 0;
    EVK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const AlnStreamPlan plan = aln_stream_plan(free_b, streams, batch_reads);  // fewer on a small GPU
    share.stack_budget = plan.stack_budget;
    for (int s = 0; s < plan.streams; ++s) {
      gpu_->lanes.push_back(std::make_unique<GpuAligner>(idx, opt, d, cfg, g.source, share));
      gpu_->rows.push_back(std::make_unique<GpuHitRows>(idx, *share.bwt, d, sa));
      gpu_->device.push_back(d);
    }
    gpu_->text += (gpu_->text.empty() ? "" : ", ") + std::to_string(d);
    if (plan.streams < streams)
      gpu_->text += " (" + std::to_string(plan.streams) + (plan.streams > 1 ? " streams" : " stream") + ": no room for more)";
  }
  lanes_ = static_cast<int>(gpu_->lanes.size());
  gpu_->text = "inexact kernel on GPU " + gpu_->text + " (" + std::to_string(streams) + " stream" +
               (streams > 1 ? "s" : "") + " each)";
#else
  (void)gpus;
  (void)streams;
  (void)gpu_passes;
  (void)batch_reads;
  throw InputError("--backend gpu: built without CUDA");
#endif
}

AlnMapper::~AlnMapper() = default;

void AlnMapper::poison_gpu_outputs() {
#if defined(EVK_HAVE_CUDA)
  if (gpu_)
    for (auto& r : gpu_->rows) r->poison_outputs = true;
#endif
}

std::string AlnMapper::describe() const {
  const std::string what = paired_ ? "bwa aln + sampe" : "bwa aln + samse";
#if defined(EVK_HAVE_CUDA)
  if (gpu_) return what + ", " + gpu_->text;
#endif
  return what + " on the CPU (" + std::to_string(lanes_) + " lane" + (lanes_ > 1 ? "s" : "") + ")";
}

std::string AlnMapper::kernel_origin() const {
#if defined(EVK_HAVE_CUDA)
  if (gpu_) return gpu_->variant ? "inexact kernel (evolved variant)" : "inexact kernel (original)";
#endif
  return {};
}

void AlnMapper::map(int lane, const ReadBatch& reads, std::unique_ptr<MappedBatch>& out, TaskPool& pool,
                    MapTimes& times) {
  auto* m = dynamic_cast<AlnMapped*>(out.get());
  if (!m) {
    out = std::make_unique<AlnMapped>(ro_);
    m = static_cast<AlnMapped*>(out.get());
  }
  const std::size_t n = reads.size();
  const ReadCodes& rc = reads.codes;
  const auto t = Clock::now();
  m->len.resize(n);
  for (std::size_t i = 0; i < n; ++i) {  // -q trimming (bwa_trim_read)
    const std::string_view q = reads.qual(i);
    m->len[i] = opt_.trim_qual > 0 ? trim_len(opt_.trim_qual, q.empty() ? nullptr : q.data(), static_cast<int>(rc.len[i]))
                                   : static_cast<int>(rc.len[i]);
  }
  m->handed_back = 0;
  m->first_pass_back = 0;
  m->pass_reads = {};
  m->pass_answered = {};
  if (n == 0) {
    m->alns.clear();
    times.match += since(t);
    return;
  }
  // bwa's batches within this one, searched one at a time where their gap-open limits differ
  const std::vector<std::size_t> cuts = aln_batch_cuts(opt_, m->len);
  const bool whole = cuts.size() == 2;
  m->alns.clear();
#if defined(EVK_HAVE_CUDA)
  if (gpu_) {
    const std::size_t l = static_cast<std::size_t>(lane);
    EVK_CUDA(cudaSetDevice(gpu_->device.at(l)));
    // the searched codes: the whole reads' unless -q trimmed some (then a copy with the shorter lengths)
    ReadCodes trimmed;
    const ReadCodes* all = &rc;
    if (opt_.trim_qual > 0) {
      trimmed = rc;
      trimmed.len.assign(m->len.begin(), m->len.end());
      all = &trimmed;
    }
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      ReadCodes part;  // one of bwa's batches where they go one at a time
      const ReadCodes* searched = all;
      if (!whole) {
        std::vector<std::uint32_t> ids(cuts[c + 1] - cuts[c]);
        std::iota(ids.begin(), ids.end(), static_cast<std::uint32_t>(cuts[c]));
        part = gather_reads(*all, ids);
        searched = &part;
      }
      GpuAlnTimes gt;
      AlnBatch got = gpu_->lanes[l]->search(*searched, std::max(pool.workers(), 1), &gt);
      if (whole) m->alns = std::move(got);
      else append_batch(m->alns, got);
      times.kernel += gt.kernel_ms / 1e3;
      times.transfer += (gt.pack_ms + gt.upload_ms + gt.compact_ms + gt.download_ms) / 1e3;
      times.fallback += gt.fallback_s;
      m->handed_back += gt.fallback_reads;
      m->first_pass_back += gt.first_pass_handed_back;
      times.later_passes += gt.later_passes_ms() / 1e3;
      for (std::size_t k = 0; k < kMapLaterPasses; ++k) {
        m->pass_reads[k] += gt.passes[k].reads;
        m->pass_answered[k] += gt.passes[k].answered;
        times.pass[k] += gt.passes[k].ms / 1e3;
      }
    }
    const auto tl = Clock::now();
    gpu_->rows[l]->lookup(m->alns, m->pos);
    times.lookup += since(tl);
  } else
#endif
  {
    (void)lane;
    m->pos.clear();  // positions looked up on the host, in finish()
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) search_cpu(idx_, opt_, rc, m->len, cuts[c], cuts[c + 1], pool, m->alns);
  }
  times.match += since(t);
}

void AlnMapper::finish(MappedBatch& out, const ReadBatch& reads, TaskPool& pool, MapTimes& times) {
  auto& m = static_cast<AlnMapped&>(out);
  const auto t = Clock::now();
  const ReadCodes& rc = reads.codes;
  const std::size_t n = reads.size();
  samse_draws(m.alns, rng_, m.draws);  // bwa's draws, in input order
  m.recs.resize(n);
  const AlnReads ar{&rc, &m.len};
  pool.parallel_for(n, kRecordGrain, [&](std::size_t b, std::size_t e) {
    ReadRows rows;
    SeqAln s;
    for (std::size_t i = b; i < e; ++i) {
      known_rows(m.alns, m.pos, i, rows);
      m.recs[i] = samse_record(idx_, ar, i, m.alns, m.draws[i], opt_, kSeMulti, s, rows.known());
    }
  });
  m.counts_ = MapCounts{};
  for (const auto& r : m.recs) aln_count(m.counts_, r);
  m.counts_.handed_back = m.handed_back;
  m.counts_.first_pass_back = m.first_pass_back;
  m.counts_.pass_reads = m.pass_reads;
  m.counts_.pass_answered = m.pass_answered;
  times.records += since(t);
}

void AlnMapper::finish_pairs(const MappedBatch& one, const MappedBatch& two, const ReadBatch& r1, const ReadBatch& r2,
                             const PeOptions& pe, AlnPairMapped& out, TaskPool& pool, MapTimes& times) {
  const auto& m1 = static_cast<const AlnMapped&>(one);
  const auto& m2 = static_cast<const AlnMapped&>(two);
  if (r1.size() != r2.size()) throw std::logic_error("finish_pairs: the ends' batches differ in size");
  paired_ = true;
  const auto t = Clock::now();
  const ChunkLoop loop = [&pool](std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn) {
    pool.parallel_for(n, kPairGrain, fn);
  };
  SampeResult res = sampe_batch(idx_, AlnReads{&r1.codes, &m1.len}, AlnReads{&r2.codes, &m2.len}, m1.alns, m2.alns, opt_, pe,
                                rng_, last_isize_, loop, &m1.pos, &m2.pos);
  last_isize_ = res.isize;
  out.rec[0] = std::move(res.rec1);
  out.rec[1] = std::move(res.rec2);
  out.counts_ = MapCounts{};
  for (std::size_t i = 0; i < r1.size(); ++i) {
    aln_count(out.counts_, out.rec[0][i]);
    aln_count(out.counts_, out.rec[1][i]);
  }
  out.counts_.pairs = r1.size();
  out.counts_.handed_back = m1.handed_back + m2.handed_back;
  out.counts_.first_pass_back = m1.first_pass_back + m2.first_pass_back;
  for (std::size_t k = 0; k < kMapLaterPasses; ++k) {
    out.counts_.pass_reads[k] = m1.pass_reads[k] + m2.pass_reads[k];
    out.counts_.pass_answered[k] = m1.pass_answered[k] + m2.pass_answered[k];
  }
  times.records += since(t);
}

}  // namespace evk::barracuda_exact
