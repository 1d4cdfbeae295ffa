#if defined(EVK_HAVE_CUDA)
#include "core/aln_gpu_pass.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "evk/cuda_check.hpp"
#include "evk_kernels/barracuda_inexact_kernel.hpp"
#include "evk_kernels/barracuda_inexact_wide_16383_128.hpp"
#include "evk_kernels/barracuda_inexact_wide_2000008_4096.hpp"
#include "evk_kernels/barracuda_inexact_wide_262143_1024.hpp"

namespace evk::barracuda_exact {

const KernelImage* embedded_wide_kernel(const AlnPassLimits& l, int max_len) {
  struct Built {
    AlnPassLimits lim;
    const KernelImage& (*image)();
  };
  // apps/barracuda_exact/CMakeLists.txt: BLOCK_W 32, MAX_LEN 256, the symbol names the limits
  static const Built built[] = {{{16383, 128}, barracuda_inexact_wide_16383_128},
                                {{262143, 1024}, barracuda_inexact_wide_262143_1024},
                                {{2000008, 4096}, barracuda_inexact_wide_2000008_4096}};
  if (max_len != kAlnKernelMaxLen) return nullptr;
  for (const Built& b : built)
    if (b.lim == l) return &b.image();
  return nullptr;
}

AlnPasses::AlnPasses(const AlnOptions& opt, const InexactKernelConfig& first, int cc)
    : limits_(aln_pass_limits(opt, first.stack_cap, first.aln_cap)), first_aln_cap_(first.aln_cap),
      max_len_(first.max_len), cc_(cc) {
  if (limits_.size() > kAlnMaxLaterPasses) throw std::logic_error("AlnPasses: more passes than GpuAlnTimes holds");
  if (first.later_passes >= 0 && limits_.size() > static_cast<std::size_t>(first.later_passes))
    limits_.resize(static_cast<std::size_t>(first.later_passes));
  for (const AlnPassLimits& l : limits_) passes_.push_back(Pass{l, {}, nullptr});
}

bool AlnPasses::load(Pass& p) {
  if (p.kernel) return true;
  if (!error_.empty()) return false;
  try {
    const std::string source = inexact_wide_source(barracuda_inexact_kernel().text());
    const KernelImage* img = embedded_wide_kernel(p.lim, max_len_);
    if (img && img->fatbin_size > 0 && img->text() == source) {
      p.lib = CudaLibrary(img->fatbin);
      p.kernel = p.lib.kernel(kAlnKernelEntry);
      return true;
    }
    InexactKernelConfig c;
    c.block_w = kAlnWideBlockW;
    c.stack_cap = p.lim.stack_cap;
    c.aln_cap = p.lim.aln_cap;
    c.max_len = max_len_;
    NvrtcRequest req;
    req.source = source;
    req.name = "inexact_wide.cu";
    req.options = c.nvrtc_options();
    req.cc = cc_;
    NvrtcResult r = CompileCache().compile(req);
    if (!r.ok) throw std::runtime_error("NVRTC failed for the wide inexact kernel: " + r.log);
    p.lib = CudaLibrary(r.cubin.data());
    p.kernel = p.lib.kernel(kAlnKernelEntry);
  } catch (const std::exception& e) {
    error_ = std::string("later passes off: ") + e.what();
    return false;
  }
  return true;
}

void AlnPasses::run_pass(Pass& p, InexactDevice& dev, const ReadCodes& reads, std::span<const std::uint32_t> ids,
                         int batch_max_len, cudaStream_t s, int cpu_threads, std::vector<std::uint32_t>& n_out,
                         std::vector<std::uint64_t>& packed, AlnPassTimes& t) {
  // chunks whose raw output (ALN_CAP x 24 bytes a read, and as much for its compaction) fits the
  // room the first pass left, or 256 MiB; halved when an allocation fails
  const std::size_t per_read = static_cast<std::size_t>(p.lim.aln_cap) * 3 * 8;
  const std::size_t room = std::max<std::size_t>(dev.output_bytes(), std::size_t{256} << 20);
  std::size_t chunk = std::max<std::size_t>(room / per_read, kAlnWideBlockW);
  n_out.clear();
  packed.clear();
  for (std::size_t at = 0; at < ids.size();) {
    const std::size_t m = std::min(chunk, ids.size() - at);
    const ReadCodes sub = gather_reads(reads, ids.subspan(at, m));
    try {
      dev.stage(sub, p.lim.aln_cap, cpu_threads, s, batch_max_len);
      dev.copy_up(s);
      dev.poison(s);  // every read must be answered or handed back
      const std::uint32_t th = dev.launch(p.kernel, kAlnWideBlockW, p.lim.stack_cap, dev.max_threads(), s, kAlnWideEntryBytes);
      t.threads = std::max(t.threads, th);
      dev.compact(s);
      const KernelHits h = dev.download_packed(s);
      n_out.insert(n_out.end(), h.n_out.begin(), h.n_out.end());
      packed.insert(packed.end(), h.packed.begin(), h.packed.end());
      at += m;
    } catch (const CudaError& e) {
      if (e.code != cudaErrorMemoryAllocation) throw;
      if (m <= static_cast<std::size_t>(kAlnWideBlockW)) {  // not even one block's output: the CPU takes the rest
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
  for (const Pass& p : passes_) cap = std::max(cap, p.lim.aln_cap);
  std::uint32_t batch_max_len = 0;
  for (const std::uint32_t l : reads.len) batch_max_len = std::max(batch_max_len, l);
  for (std::size_t k = 0; k < passes_.size(); ++k) {
    Pass& p = passes_[k];
    std::vector<std::uint32_t> ids;  // handed back so far, and not too long for the kernel
    for (std::size_t i = 0; i < n_out.size(); ++i)
      if (n_out[i] == kHandedBack && reads.len[i] <= static_cast<std::uint32_t>(max_len_)) ids.push_back(static_cast<std::uint32_t>(i));
    if (ids.empty()) break;
    AlnPassTimes local;
    AlnPassTimes& t = times ? times->passes[k] : local;
    const auto t0 = std::chrono::steady_clock::now();
    t.reads += ids.size();
    // not one block's stacks in the stack memory: this pass and the later (larger) ones leave them to the CPU
    if (dev.stack_fit(p.lim.stack_cap, kAlnWideEntryBytes) < static_cast<std::uint64_t>(kAlnWideBlockW)) break;
    if (!load(p)) break;
    std::vector<std::uint32_t> pass_n_out;
    std::vector<std::uint64_t> pass_packed;
    run_pass(p, dev, reads, ids, static_cast<int>(batch_max_len), s, cpu_threads, pass_n_out, pass_packed, t);
    for (const std::uint32_t c : pass_n_out) t.answered += c != kHandedBack;
    splice_pass_output(n_out, packed, ids, pass_n_out, pass_packed, p.lim.aln_cap);
    t.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return cap;
}

}  // namespace evk::barracuda_exact
#endif
