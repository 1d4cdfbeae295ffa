#include "map/exact_mapper.hpp"

#include <algorithm>
#include <chrono>

#include "core/match.hpp"
#include "evk/error.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/gpu_exact.hpp"
#endif

namespace evk::barracuda_exact {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr std::size_t kGrain = 2048;  // reads per parallel chunk (a multiple of 32: whole packed blocks)

void aux_int(bam1_t* b, const char* tag, int v, bool& ok) {
  ok &= bam_aux_append(b, tag, 'i', 4, reinterpret_cast<const uint8_t*>(&v)) == 0;
}
void aux_str(bam1_t* b, const char* tag, const std::string& s, bool& ok) {
  ok &= bam_aux_append(b, tag, 'Z', static_cast<int>(s.size() + 1), reinterpret_cast<const uint8_t*>(s.c_str())) == 0;
}

}  // namespace

// As `bwa samse` writes an exact hit (or an unmapped read): SEQ/QUAL reverse-complemented on the
// reverse strand, SEQ upper case with non-ACGT as N, MAPQ 25 unique / 0 repeat, XT X0 X1 XM XO XG
// MD, XN when the reference has ambiguous bases under the hit, XA for 2-4 hits.
bool ExactMapped::record(const ReadBatch& reads, std::size_t i, bam1_t* b) const {
  static const char kFwd[] = "ACGTN", kRev[] = "TGCAN";
  thread_local std::string s, q;
  const std::string_view name = reads.name(i), qual = reads.qual(i);
  const std::uint8_t* code = reads.codes.codes.data() + reads.codes.offset[i];
  const std::size_t n = reads.codes.len[i];
  const Hit& h = hits[i];
  const bool rev = h.count > 0 && h.primary.reverse;
  s.resize(n);
  for (std::size_t j = 0; j < n; ++j) s[j] = rev ? kRev[code[n - 1 - j]] : kFwd[code[j]];
  if (!qual.empty()) {
    q.resize(n);
    for (std::size_t j = 0; j < n; ++j) q[j] = static_cast<char>((rev ? qual[n - 1 - j] : qual[j]) - 33);
  }
  const char* qp = qual.empty() ? nullptr : q.data();
  bool ok = true;
  if (h.count == 0) {
    if (bam_set1(b, name.size(), name.data(), BAM_FUNMAP, -1, -1, 0, 0, nullptr, -1, -1, 0, n, s.data(), qp, 64) < 0)
      return false;
    if (!ro_->rg_id.empty()) aux_str(b, "RG", ro_->rg_id, ok);
    return ok;
  }
  const Contig& ct = idx_->contigs[static_cast<std::size_t>(h.primary.tid)];
  std::uint16_t flag = rev ? BAM_FREVERSE : 0;
  if (h.bridging) flag |= BAM_FUNMAP;
  const std::uint32_t cigar = static_cast<std::uint32_t>(n) << BAM_CIGAR_SHIFT | BAM_CMATCH;
  const std::uint8_t mapq = h.count == 1 ? 25 : 0;
  if (bam_set1(b, name.size(), name.data(), flag, h.primary.tid, h.primary.pos - ct.offset, mapq, n ? 1 : 0, &cigar, -1,
               -1, 0, n, s.data(), qp, 256) < 0)
    return false;
  if (!ro_->rg_id.empty()) aux_str(b, "RG", ro_->rg_id, ok);
  char xt = h.count > 1 ? 'R' : 'U';
  if (h.n_ambiguous > 10) xt = 'N';
  ok &= bam_aux_append(b, "XT", 'A', 1, reinterpret_cast<const uint8_t*>(&xt)) == 0;
  aux_int(b, "NM", 0, ok);
  if (h.n_ambiguous) aux_int(b, "XN", h.n_ambiguous, ok);
  aux_int(b, "X0", static_cast<int>(h.count), ok);
  if (h.count <= static_cast<std::uint64_t>(ro_->max_top2)) aux_int(b, "X1", 0, ok);  // bwa: only up to aln's -R
  aux_int(b, "XM", 0, ok);
  aux_int(b, "XO", 0, ok);
  aux_int(b, "XG", 0, ok);
  aux_str(b, "MD", std::to_string(n), ok);
  if (!h.alts.empty()) {
    std::string xa;
    for (const auto& a : h.alts) {
      const Contig& c = idx_->contigs[static_cast<std::size_t>(a.tid)];
      xa += c.name + "," + (a.reverse ? '-' : '+') + std::to_string(a.pos - c.offset + 1) + "," + std::to_string(n) +
            "M,0;";
    }
    aux_str(b, "XA", xa, ok);
  }
  return ok;
}

MapCounts ExactMapped::counts() const {
  MapCounts c;
  c.reads = hits.size();
  for (const auto& h : hits) {
    if (!h.mapped()) ++c.unmatched;
    else if (h.count == 1) ++c.unique;
    else ++c.repeat;
    c.bridging += h.bridging;
  }
  return c;
}

#if defined(EVK_HAVE_CUDA)
struct ExactMapper::Gpu {
  std::vector<std::unique_ptr<GpuDevice>> devices;
  std::vector<std::unique_ptr<GpuStream>> streams;  // one per lane
  std::string text;
};
#else
struct ExactMapper::Gpu {};
#endif

ExactMapper::ExactMapper(const BwtIndex& idx, int lanes, const RecordOptions& ro)
    : idx_(idx), ro_(ro), lanes_(std::max(lanes, 1)) {}

ExactMapper::ExactMapper(const BwtIndex& idx, const std::vector<GpuPlan>& gpus, int streams, const RecordOptions& ro)
    : idx_(idx), ro_(ro) {
#if defined(EVK_HAVE_CUDA)
  if (gpus.empty()) throw std::invalid_argument("ExactMapper: no GPU given");
  gpu_ = std::make_unique<Gpu>();
  streams = std::max(streams, 1);
  for (const auto& g : gpus) {
    gpu_->devices.push_back(std::make_unique<GpuDevice>(
        idx, g.config.empty() ? default_kernel_config() : g.config, g.device, g.source));
    gpu_->text += (gpu_->text.empty() ? "" : ", ") + std::to_string(g.device);
  }
  for (auto& d : gpu_->devices)
    for (int s = 0; s < streams; ++s) gpu_->streams.push_back(std::make_unique<GpuStream>(*d));
  lanes_ = static_cast<int>(gpu_->streams.size());
  gpu_->text = "exact matching on GPU " + gpu_->text + " (" + std::to_string(streams) + " stream" +
               (streams > 1 ? "s" : "") + " each)";
#else
  (void)gpus;
  (void)streams;
  throw InputError("--backend gpu: built without CUDA");
#endif
}

ExactMapper::~ExactMapper() = default;

std::string ExactMapper::describe() const {
#if defined(EVK_HAVE_CUDA)
  if (gpu_) return gpu_->text;
#endif
  return "exact matching on the CPU (" + std::to_string(lanes_) + " lane" + (lanes_ > 1 ? "s" : "") + ")";
}

std::string ExactMapper::kernel_origin() const {
  std::string o;
#if defined(EVK_HAVE_CUDA)
  if (gpu_)
    for (const auto& d : gpu_->devices)
      o += (o.empty() ? "" : "; ") + (gpu_->devices.size() > 1 ? "GPU " + std::to_string(d->device()) + ": " : "") + d->origin();
#endif
  return o;
}

void ExactMapper::poison_gpu_outputs() {
#if defined(EVK_HAVE_CUDA)
  if (gpu_)
    for (auto& s : gpu_->streams) s->poison_outputs = true;
#endif
}

void ExactMapper::map(int lane, const ReadBatch& reads, std::unique_ptr<MappedBatch>& out, TaskPool& pool,
                      MapTimes& times) {
  auto* m = dynamic_cast<ExactMapped*>(out.get());
  if (!m) {
    out = std::make_unique<ExactMapped>(idx_, ro_);
    m = static_cast<ExactMapped*>(out.get());
  }
  const std::size_t n = reads.size();
  const ReadCodes& rc = reads.codes;
  m->hits.resize(n);
  auto t = Clock::now();
  const KL* kl = nullptr;
  const std::uint64_t* sa_rows = nullptr;  // kSaRowsPerHit per read, when the GPU looked them up
#if defined(EVK_HAVE_CUDA)
  if (gpu_) {
    GpuStream& s = *gpu_->streams.at(static_cast<std::size_t>(lane));
    std::uint32_t max_len = 1;
    for (auto l : rc.len) max_len = std::max(max_len, l);
    const std::uint32_t stride = packed_stride(max_len);
    s.reserve(n, stride);
    std::uint32_t* words = s.host_words();
    std::uint32_t* lens = s.host_lens();
    pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e) {
      pack_reads_range(rc, stride, b, e, words);
      std::copy(rc.len.begin() + static_cast<std::ptrdiff_t>(b), rc.len.begin() + static_cast<std::ptrdiff_t>(e), lens + b);
    });
    GpuBatchTimes gt;
    kl = s.run(n, stride, &gt);
    sa_rows = s.sa_rows();
    times.transfer += (gt.upload_ms + gt.download_ms) / 1e3;
    times.kernel += (gt.kernel_ms + gt.lookup_ms) / 1e3;
  } else
#endif
  {
    (void)lane;
    m->kl.resize(n);
    pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) m->kl[i] = match_exact(idx_, rc.codes.data() + rc.offset[i], rc.len[i]);
    });
    kl = m->kl.data();
  }
  times.match += since(t);
  t = Clock::now();
  pool.parallel_for(n, kGrain, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      m->hits[i] = resolve_hit(idx_, kl[i], rc.len[i], sa_rows ? sa_rows + i * kSaRowsPerHit : nullptr);
  });
  times.lookup += since(t);
}

}  // namespace evk::barracuda_exact
