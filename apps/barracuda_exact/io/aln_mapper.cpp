#include "io/aln_mapper.hpp"

#include <algorithm>
#include <chrono>

#include "core/aln_positions.hpp"
#include "evk/error.hpp"
#include "io/aln_sam.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/aln_gpu.hpp"
#include "evk/cuda_check.hpp"
#endif

namespace evk::barracuda_exact {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr std::size_t kSearchGrain = 128;  // reads per search chunk (their costs differ a lot)
constexpr std::size_t kRecordGrain = 1024;  // reads per record chunk

// The batch's gap-open limit as bwa sets it (by the maximum differences of its longest read).
int batch_gapo(const AlnOptions& opt, const std::vector<int>& len) {
  int max_len = 0;
  for (int l : len) max_len = std::max(max_len, l);
  return std::min(opt.max_gapo, aln_max_diff(opt, max_len));
}

// aln_search_batch on the task pool: chunks of reads, each with its own searcher, joined in order.
void search_cpu(const BwtIndex& idx, const AlnOptions& opt, const ReadCodes& rc, const std::vector<int>& len,
                TaskPool& pool, AlnBatch& out) {
  const std::size_t n = rc.size(), chunks = (n + kSearchGrain - 1) / kSearchGrain;
  const int gapo = batch_gapo(opt, len);
  std::vector<std::vector<Aln>> hits(chunks);
  std::vector<std::uint32_t> count(n);
  pool.parallel_for(n, kSearchGrain, [&](std::size_t b, std::size_t e) {
    AlnSearcher s(idx, opt);
    s.set_batch_max_gapo(gapo);
    std::vector<Aln>& h = hits[b / kSearchGrain];
    for (std::size_t i = b; i < e; ++i) {
      const std::size_t before = h.size();
      s.search(rc.codes.data() + rc.offset[i], static_cast<std::uint32_t>(len[i]), h);
      count[i] = static_cast<std::uint32_t>(h.size() - before);
    }
  });
  out.clear();
  std::size_t total = 0;
  for (const auto& h : hits) total += h.size();
  out.alns.reserve(total);
  out.offset.resize(n + 1);
  for (const auto& h : hits) out.alns.insert(out.alns.end(), h.begin(), h.end());
  for (std::size_t i = 0; i < n; ++i) out.offset[i + 1] = out.offset[i] + count[i];
}

void count(MapCounts& c, const AlnRecord& r) {
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

}  // namespace

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
};
#else
struct AlnMapper::Gpu {};
#endif

AlnMapper::AlnMapper(const BwtIndex& idx, const AlnOptions& opt, int lanes, const RecordOptions& ro)
    : idx_(idx), opt_(opt), ro_(ro), lanes_(std::max(lanes, 1)), rng_(static_cast<std::uint32_t>(idx.seed)) {}

AlnMapper::AlnMapper(const BwtIndex& idx, const AlnOptions& opt, const std::vector<int>& devices, int streams,
                     const RecordOptions& ro)
    : idx_(idx), opt_(opt), ro_(ro), rng_(static_cast<std::uint32_t>(idx.seed)) {
#if defined(EVK_HAVE_CUDA)
  if (devices.empty()) throw std::invalid_argument("AlnMapper: no GPU given");
  gpu_ = std::make_unique<Gpu>();
  streams = std::max(streams, 1);
  for (int d : devices) {
    for (int s = 0; s < streams; ++s) {
      gpu_->lanes.push_back(std::make_unique<GpuAligner>(idx, opt, d));
      gpu_->rows.push_back(std::make_unique<GpuHitRows>(idx, gpu_->lanes.back()->device().bwt(), d));
      gpu_->device.push_back(d);
    }
    gpu_->text += (gpu_->text.empty() ? "" : ", ") + std::to_string(d);
  }
  lanes_ = static_cast<int>(gpu_->lanes.size());
  gpu_->text = "bwa aln + samse, inexact kernel on GPU " + gpu_->text + " (" + std::to_string(streams) + " stream" +
               (streams > 1 ? "s" : "") + " each)";
#else
  (void)devices;
  (void)streams;
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
#if defined(EVK_HAVE_CUDA)
  if (gpu_) return gpu_->text;
#endif
  return "bwa aln + samse on the CPU (" + std::to_string(lanes_) + " lane" + (lanes_ > 1 ? "s" : "") + ")";
}

std::string AlnMapper::kernel_origin() const {
#if defined(EVK_HAVE_CUDA)
  if (gpu_) return "inexact kernel (original)";
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
  if (n == 0) {
    m->alns.clear();
    times.match += since(t);
    return;
  }
#if defined(EVK_HAVE_CUDA)
  if (gpu_) {
    const std::size_t l = static_cast<std::size_t>(lane);
    EVK_CUDA(cudaSetDevice(gpu_->device.at(l)));
    // the searched codes: the whole reads' unless -q trimmed some (then a copy with the shorter lengths)
    ReadCodes trimmed;
    const ReadCodes* searched = &rc;
    if (opt_.trim_qual > 0) {
      trimmed = rc;
      trimmed.len.assign(m->len.begin(), m->len.end());
      searched = &trimmed;
    }
    GpuAlnTimes gt;
    m->alns = gpu_->lanes[l]->search(*searched, std::max(pool.workers(), 1), &gt);
    times.kernel += gt.kernel_ms / 1e3;
    times.transfer += (gt.pack_ms + gt.upload_ms + gt.compact_ms + gt.download_ms) / 1e3;
    times.fallback += gt.fallback_s;
    m->handed_back = gt.fallback_reads;
    const auto tl = Clock::now();
    gpu_->rows[l]->lookup(m->alns, m->pos);
    times.lookup += since(tl);
  } else
#endif
  {
    (void)lane;
    m->pos.clear();  // positions looked up on the host, in finish()
    search_cpu(idx_, opt_, rc, m->len, pool, m->alns);
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
  for (const auto& r : m.recs) count(m.counts_, r);
  m.counts_.handed_back = m.handed_back;
  times.records += since(t);
}

}  // namespace evk::barracuda_exact
