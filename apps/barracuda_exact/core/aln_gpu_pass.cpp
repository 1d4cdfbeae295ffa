#if defined(EVK_HAVE_CUDA)
#include "core/aln_gpu_pass.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "evk/cuda_check.hpp"

namespace evk::barracuda_exact {

AlnPasses::AlnPasses(const AlnOptions& opt, const InexactKernelConfig& first)
    : limits_(aln_pass_limits(opt, first.stack_cap, first.aln_cap)), first_aln_cap_(first.aln_cap), max_len_(first.max_len) {
  if (limits_.size() > kAlnMaxLaterPasses) throw std::logic_error("AlnPasses: more passes than GpuAlnTimes holds");
  if (first.later_passes >= 0 && limits_.size() > static_cast<std::size_t>(first.later_passes))
    limits_.resize(static_cast<std::size_t>(first.later_passes));
}

void AlnPasses::run_pass(const AlnPassLimits& p, InexactDevice& dev, const ReadCodes& reads, std::span<const std::uint32_t> ids,
                         int batch_max_len, cudaStream_t s, int cpu_threads, std::vector<std::uint32_t>& n_out,
                         std::vector<std::uint64_t>& packed, AlnPassTimes& t) {
  // chunks whose raw output (ALN_CAP x 24 bytes a read, and as much for its compaction) fits the
  // room the first pass left, or 256 MiB; halved when an allocation fails
  const std::size_t per_read = static_cast<std::size_t>(p.aln_cap) * 3 * 8;
  const std::size_t room = std::max<std::size_t>(dev.output_bytes(), std::size_t{256} << 20);
  std::size_t chunk = std::max<std::size_t>(room / per_read, 32);
  n_out.clear();
  packed.clear();
  for (std::size_t at = 0; at < ids.size();) {
    const std::size_t m = std::min(chunk, ids.size() - at);
    const ReadCodes sub = gather_reads(reads, ids.subspan(at, m));
    try {
      dev.stage(sub, p.aln_cap, cpu_threads, s, batch_max_len);
      dev.copy_up(s);
      dev.poison(s);  // every read must be answered or handed back
      t.warps = std::max(t.warps, dev.launch_warps(static_cast<std::uint64_t>(p.stack_cap), s));
      dev.compact(s);
      const KernelHits h = dev.download_packed(s);
      n_out.insert(n_out.end(), h.n_out.begin(), h.n_out.end());
      packed.insert(packed.end(), h.packed.begin(), h.packed.end());
      at += m;
    } catch (const CudaError& e) {
      if (e.code != cudaErrorMemoryAllocation) throw;
      if (m <= 32) {  // not even 32 reads' output: the CPU takes the rest
        n_out.resize(ids.size(), kHandedBack);
        return;
      }
      chunk = m / 2;
    }
  }
}

int AlnPasses::run(InexactDevice& dev, const ReadCodes& reads, std::vector<std::uint32_t>& n_out,
                   std::vector<std::uint64_t>& packed, cudaStream_t s, int cpu_threads, GpuAlnTimes* times) {
  int cap = first_aln_cap_;
  for (const AlnPassLimits& p : limits_) cap = std::max(cap, p.aln_cap);
  std::uint32_t batch_max_len = 0;
  for (const std::uint32_t l : reads.len) batch_max_len = std::max(batch_max_len, l);
  for (std::size_t k = 0; k < limits_.size(); ++k) {
    const AlnPassLimits& p = limits_[k];
    std::vector<std::uint32_t> ids;  // handed back so far, and not too long for the kernel
    for (std::size_t i = 0; i < n_out.size(); ++i)
      if (n_out[i] == kHandedBack && reads.len[i] <= static_cast<std::uint32_t>(max_len_)) ids.push_back(static_cast<std::uint32_t>(i));
    if (ids.empty()) break;
    AlnPassTimes local;
    AlnPassTimes& t = times ? times->passes[k] : local;
    const auto t0 = std::chrono::steady_clock::now();
    t.reads += ids.size();
    // not one warp's stack in the stack memory: this pass and the later (larger) ones leave them to the CPU
    if (dev.warp_fit(static_cast<std::uint64_t>(p.stack_cap)) == 0) break;
    std::vector<std::uint32_t> pass_n_out;
    std::vector<std::uint64_t> pass_packed;
    run_pass(p, dev, reads, ids, static_cast<int>(batch_max_len), s, cpu_threads, pass_n_out, pass_packed, t);
    for (const std::uint32_t c : pass_n_out) t.answered += c != kHandedBack;
    splice_pass_output(n_out, packed, ids, pass_n_out, pass_packed, p.aln_cap);
    t.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return cap;
}

}  // namespace evk::barracuda_exact
#endif
