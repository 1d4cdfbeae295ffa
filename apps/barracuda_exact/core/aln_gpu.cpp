#if defined(EVK_HAVE_CUDA)
#include "core/aln_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "core/aln_gpu_pass.hpp"
#include "core/aln_warp.hpp"
#include "evk/cuda_check.hpp"
#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "evk/parallel.hpp"
#include "evk_kernels/barracuda_inexact_kernel.hpp"

namespace evk::barracuda_exact {

static_assert(sizeof(AlnKernelParams) == 14 * sizeof(int), "mirrors the kernel's aln_params");

std::vector<std::string> InexactKernelConfig::nvrtc_options() const {
  return {"-DBLOCK_W=" + std::to_string(block_w), "-DSTACK_CAP=" + std::to_string(stack_cap),
          "-DALN_CAP=" + std::to_string(aln_cap), "-DMAX_LEN=" + std::to_string(max_len)};
}

namespace {
float elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  EVK_CUDA(cudaEventElapsedTime(&ms, a, b));
  return ms;
}
void validate(const InexactKernelConfig& c) {
  if (c.block_w < 32 || c.block_w > 1024 || c.block_w % 32) throw InputError("inexact kernel: BLOCK_W must be a multiple of 32 up to 1024");
  if (c.stack_cap < 1 || c.stack_cap > 4095) throw InputError("inexact kernel: STACK_CAP must be 1..4095");
  if (c.aln_cap < 1 || c.aln_cap > 64) throw InputError("inexact kernel: ALN_CAP must be 1..64");
  if (c.max_len < 1 || c.max_len > 511) throw InputError("inexact kernel: MAX_LEN must be 1..511");
  if (c.threads_per_sm < 0 || c.threads_per_sm > 2048) throw InputError("inexact kernel: threads per SM must be 0..2048");
}
bool default_limits(const InexactKernelConfig& c) {
  InexactKernelConfig d;
  d.threads_per_sm = c.threads_per_sm;
  d.later_passes = c.later_passes;
  return c == d;
}
}  // namespace

CudaLibrary load_inexact_kernel(const InexactKernelConfig& cfg, int cc, const std::string& source) {
  validate(cfg);
  const KernelImage& img = barracuda_inexact_kernel();
  if (source.empty() && default_limits(cfg) && img.fatbin_size > 0) return CudaLibrary(img.fatbin);
  NvrtcRequest req;
  req.source = source.empty() ? std::string(img.text()) : source;
  req.name = source.empty() ? "inexact.cu" : "inexact_evolved.cu";
  req.options = cfg.nvrtc_options();
  for (auto& o : gi::source_nvrtc_options(req.source)) req.options.push_back(o);
  req.cc = cc;
  NvrtcResult r = CompileCache().compile(req);
  if (!r.ok) throw std::runtime_error("NVRTC failed for the inexact kernel: " + r.log);
  return CudaLibrary(r.cubin.data());
}

namespace {
std::shared_ptr<const DeviceBwt> device_bwt(const BwtIndex& idx, int device, const AlnDeviceShare& share) {
  EVK_CUDA(cudaSetDevice(device));
  return share.bwt ? share.bwt : std::make_shared<const DeviceBwt>(idx);
}
}  // namespace

InexactDevice::InexactDevice(const BwtIndex& idx, const AlnOptions& opt, int device, int stack_cap, int max_len,
                             int threads_per_sm, bool whole_budget, const AlnDeviceShare& share)
    : opt_(opt), bwt_(device_bwt(idx, device, share)) {
  EVK_CUDA(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
  std::size_t free_b = 0, total_b = 0;
  EVK_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t per_thread = static_cast<std::size_t>(stack_cap) * 16;
  // the stack memory: the first pass's threads' stacks, or the whole budget, which the later passes'
  // warps share (more warps, larger stacks)
  const std::size_t budget = share.stack_budget > 0 ? share.stack_budget : std::min<std::size_t>(kAlnStackBudget, free_b / 3);
  std::size_t t = static_cast<std::size_t>(sms_) * static_cast<std::size_t>(threads_per_sm > 0 ? threads_per_sm : 512);
  t = std::min(t, budget / per_thread);
  t = t / 32 * 32;
  if (t == 0) throw std::runtime_error("inexact kernel: not enough device memory for one warp's stacks");
  n_threads_ = static_cast<std::uint32_t>(t);
  stack_bytes_ = whole_budget ? std::max(t * per_thread, budget) : t * per_thread;
  EVK_CUDA(cudaMalloc(&stack_, stack_bytes_));
  const std::vector<int> md = aln_max_diff_table(opt_, max_len);
  EVK_CUDA(cudaMalloc(&max_diff_, md.size() * sizeof(int)));
  EVK_CUDA(cudaMemcpy(max_diff_, md.data(), md.size() * sizeof(int), cudaMemcpyHostToDevice));
  EVK_CUDA(cudaMalloc(&counter_, sizeof(std::uint32_t)));
  EVK_CUDA(cudaMalloc(&total_, sizeof(std::uint64_t)));
}

InexactDevice::~InexactDevice() {
  cudaFree(stack_);
  cudaFree(max_diff_);
  cudaFree(counter_);
  cudaFree(words_);
  cudaFree(lens_);
  cudaFree(n_out_);
  cudaFree(aln_out_);
  cudaFree(packed_);
  cudaFree(total_);
}

std::uint32_t InexactDevice::threads_for(int stack_cap, int threads_per_sm) const {
  std::size_t t = static_cast<std::size_t>(sms_) * static_cast<std::size_t>(threads_per_sm > 0 ? threads_per_sm : 512);
  t = std::min(t, stack_bytes_ / (static_cast<std::size_t>(stack_cap) * 16));
  return static_cast<std::uint32_t>(t / 32 * 32);
}

void InexactDevice::grow(std::size_t words, std::size_t reads, int aln_cap) {
  words = std::max<std::size_t>(words, 32);
  reads = std::max<std::size_t>(reads, 1);
  const std::size_t alns = reads * static_cast<std::size_t>(aln_cap) * 3;
  // a failed allocation (a later pass short of memory) leaves the buffer empty, never dangling
  if (words > cap_words_) {
    cudaFree(words_);
    words_ = nullptr;
    cap_words_ = 0;
    EVK_CUDA(cudaMalloc(&words_, (words + words / 4) * 4));
    cap_words_ = words + words / 4;
  }
  if (reads > cap_reads_) {
    cudaFree(lens_);
    cudaFree(n_out_);
    lens_ = n_out_ = nullptr;
    cap_reads_ = 0;
    EVK_CUDA(cudaMalloc(&lens_, (reads + reads / 4) * 4));
    EVK_CUDA(cudaMalloc(&n_out_, (reads + reads / 4) * 4));
    cap_reads_ = reads + reads / 4;
  }
  if (alns > cap_alns_) {
    cudaFree(aln_out_);
    aln_out_ = nullptr;
    cap_alns_ = 0;
    EVK_CUDA(cudaMalloc(&aln_out_, (alns + alns / 4) * 8));
    cap_alns_ = alns + alns / 4;
  }
}

void InexactDevice::stage(const ReadCodes& reads, int aln_cap, int threads, cudaStream_t s, int batch_max_len) {
  const std::size_t n = reads.size();
  if (n > 0xffffffffu) throw std::runtime_error("inexact kernel: batch too large");
  EVK_CUDA(cudaStreamSynchronize(s));  // the previous batch's buffers (device and pinned) may still be in use
  n_ = n;
  aln_cap_ = aln_cap;
  std::uint32_t max_len = 0;
  for (auto l : reads.len) max_len = std::max(max_len, l);
  params_ = aln_kernel_params(opt_, batch_max_len >= 0 ? batch_max_len : static_cast<int>(max_len));
  // pack_reads's layout: blocks of 32 reads, word j of read r at (r / 32) * stride * 32 + j * 32 + r % 32
  stride_ = packed_stride(max_len);
  const std::size_t blocks = (n + 31) / 32;
  n_words_ = blocks * 32 * stride_;
  grow(n_words_, n, aln_cap);
  if (n == 0) return;
  auto* words = static_cast<std::uint32_t*>(host_words_.reserve(n_words_ * 4));
  auto* lens = static_cast<std::uint32_t*>(host_lens_.reserve(n * 4));
  std::copy(reads.len.begin(), reads.len.end(), lens);
  // whole 32-read blocks per thread (pack_reads_range clears the blocks it writes)
  const std::uint32_t stride = stride_;
  parallel_for(
      blocks, [&](std::size_t b0, std::size_t b1) { pack_reads_range(reads, stride, b0 * 32, std::min(n, b1 * 32), words); },
      blocks >= 2048 ? threads : 1);
}

void InexactDevice::copy_up(cudaStream_t s) {
  if (n_ == 0) return;
  EVK_CUDA(cudaMemcpyAsync(words_, host_words_.data(), n_words_ * 4, cudaMemcpyHostToDevice, s));
  EVK_CUDA(cudaMemcpyAsync(lens_, host_lens_.data(), n_ * 4, cudaMemcpyHostToDevice, s));
}

void InexactDevice::poison(cudaStream_t s) {
  if (n_) EVK_CUDA(cudaMemsetAsync(n_out_, 0xA5, n_ * 4, s));
}

std::uint32_t InexactDevice::launch(cudaKernel_t k, int block_w, int stack_cap, std::uint32_t threads, cudaStream_t s,
                                    int entry_bytes) {
  if (n_ == 0) return 0;
  const std::size_t bw = static_cast<std::size_t>(block_w);
  const std::size_t fit = stack_fit(stack_cap, entry_bytes);  // threads whose stacks fit
  if (fit == 0) throw std::runtime_error("inexact kernel: not one thread's stack fits the stack memory");
  const std::size_t need = (n_ + bw - 1) / bw * bw;
  std::size_t t = std::min<std::size_t>({threads, fit, need});
  t = t >= bw ? t / bw * bw : std::min(fit, bw);  // whole blocks; one (part of a) block at least
  threads = static_cast<std::uint32_t>(t);
  BwtConsts consts = bwt_->consts();
  const std::uint32_t* bwt = bwt_->data();
  std::uint32_t stride = stride_, n32 = static_cast<std::uint32_t>(n_);
  EVK_CUDA(cudaMemsetAsync(counter_, 0, 4, s));
  void* args[] = {&bwt, &consts, &params_, &max_diff_, &words_, &lens_, &stride, &n32, &counter_, &stack_, &threads, &n_out_, &aln_out_};
  const std::uint32_t blocks = (threads + static_cast<std::uint32_t>(block_w) - 1) / static_cast<std::uint32_t>(block_w);
  evk::launch(k, dim3(blocks), dim3(static_cast<unsigned>(block_w)), args, 0, s);  // threads >= n_threads return
  EVK_CUDA_LAST();
  return threads;
}

std::uint64_t InexactDevice::warp_fit(std::uint64_t stack_cap) const { return stack_bytes_ / aln_warp_bytes(stack_cap); }

std::uint32_t InexactDevice::launch_warps(std::uint64_t stack_cap, cudaStream_t s) {
  if (n_ == 0) return 0;
  const std::uint64_t warps = std::min<std::uint64_t>(warp_fit(stack_cap), n_);
  if (warps == 0) return 0;
  AlnWarpLaunch a;
  a.bwt = bwt_->data();
  const BwtConsts consts = bwt_->consts();
  static_assert(sizeof consts == sizeof a.consts && sizeof params_ == sizeof a.params, "AlnWarpLaunch mirrors them");
  std::memcpy(a.consts, &consts, sizeof a.consts);
  std::memcpy(a.params, &params_, sizeof a.params);
  a.max_diff = max_diff_;
  a.words = words_;
  a.lens = lens_;
  a.stride = stride_;
  a.n_reads = static_cast<std::uint32_t>(n_);
  a.counter = counter_;
  a.mem = stack_;
  a.stack_cap = stack_cap;
  a.n_warps = static_cast<std::uint32_t>(warps);
  a.n_out = n_out_;
  a.aln_out = aln_out_;
  a.aln_cap = aln_cap_;
  EVK_CUDA(cudaMemsetAsync(counter_, 0, 4, s));
  launch_aln_warp(a, s);
  EVK_CUDA_LAST();
  return a.n_warps;
}

void InexactDevice::download(std::vector<std::uint32_t>& n_out, std::vector<std::uint64_t>& aln_out, cudaStream_t s) {
  n_out.assign(n_, 0);
  aln_out.assign(n_ * static_cast<std::size_t>(aln_cap_) * 3, 0);
  if (n_) {
    EVK_CUDA(cudaMemcpyAsync(n_out.data(), n_out_, n_ * 4, cudaMemcpyDeviceToHost, s));
    EVK_CUDA(cudaMemcpyAsync(aln_out.data(), aln_out_, aln_out.size() * 8, cudaMemcpyDeviceToHost, s));
  }
  EVK_CUDA(cudaStreamSynchronize(s));
}

void InexactDevice::compact(cudaStream_t s) {
  const std::size_t words = std::max<std::size_t>(n_ * static_cast<std::size_t>(aln_cap_) * 3, 3);
  if (words > cap_packed_) {
    EVK_CUDA(cudaFree(packed_));
    packed_ = nullptr;
    cap_packed_ = 0;
    const std::size_t cap = words + words / 4;
    EVK_CUDA(cudaMalloc(&packed_, cap * 8));
    cap_packed_ = cap;
  }
  compactor_.run(n_out_, aln_out_, n_, aln_cap_, packed_, total_, s);
}

KernelHits InexactDevice::download_packed(cudaStream_t s) {
  if (n_ == 0) {
    EVK_CUDA(cudaStreamSynchronize(s));
    return {};
  }
  auto* n_out = static_cast<std::uint32_t*>(host_n_out_.reserve(n_ * 4));
  auto* total = static_cast<std::uint64_t*>(host_total_.reserve(8));
  EVK_CUDA(cudaMemcpyAsync(n_out, n_out_, n_ * 4, cudaMemcpyDeviceToHost, s));
  EVK_CUDA(cudaMemcpyAsync(total, total_, 8, cudaMemcpyDeviceToHost, s));
  EVK_CUDA(cudaStreamSynchronize(s));
  const std::uint64_t entries = *total;
  if (entries > n_ * static_cast<std::uint64_t>(aln_cap_))
    throw std::runtime_error("inexact kernel: compacted output of " + std::to_string(entries) + " entries for " +
                             std::to_string(n_) + " reads");
  std::uint64_t* packed = nullptr;
  if (entries > 0) {
    packed = static_cast<std::uint64_t*>(host_packed_.reserve(entries * 3 * 8));
    EVK_CUDA(cudaMemcpyAsync(packed, packed_, entries * 3 * 8, cudaMemcpyDeviceToHost, s));
    EVK_CUDA(cudaStreamSynchronize(s));
  }
  return {std::span<const std::uint32_t>(n_out, n_), std::span<const std::uint64_t>(packed, entries * 3)};
}

GpuAligner::GpuAligner(const BwtIndex& idx, const AlnOptions& opt, int device, const InexactKernelConfig& cfg,
                       const std::string& source, const AlnDeviceShare& share)
    : idx_(idx), opt_(opt), cfg_(cfg), supported_(aln_kernel_supports(opt, idx, cfg.max_len)),
      dev_(idx, opt, device, (validate(cfg), cfg.stack_cap), cfg.max_len, cfg.threads_per_sm,
           cfg.later_passes > 0 && cfg.share_budget, share) {
  int major = 0, minor = 0;
  EVK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  EVK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  lib_ = load_inexact_kernel(cfg_, major * 10 + minor, source);
  kernel_ = lib_.kernel(kAlnKernelEntry);
  if (cfg_.later_passes > 0) passes_ = std::make_unique<AlnPasses>(opt_, cfg_);
  EVK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  for (auto& e : ev_) EVK_CUDA(cudaEventCreate(&e));
}

GpuAligner::~GpuAligner() {
  for (auto& e : ev_) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
}

void GpuAligner::run(const ReadCodes& reads, std::vector<std::uint32_t>& n_out, std::vector<std::uint64_t>& aln_out,
                     GpuAlnTimes* times) {
  const auto t0 = std::chrono::steady_clock::now();
  dev_.stage(reads, cfg_.aln_cap, 0, stream_);
  const double pack_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EVK_CUDA(cudaEventRecord(ev_[0], stream_));
  dev_.copy_up(stream_);
  dev_.poison(stream_);  // every read must be answered
  EVK_CUDA(cudaEventRecord(ev_[1], stream_));
  dev_.launch(kernel_, cfg_.block_w, cfg_.stack_cap, dev_.max_threads(), stream_);
  EVK_CUDA(cudaEventRecord(ev_[2], stream_));
  dev_.download(n_out, aln_out, stream_);
  EVK_CUDA(cudaEventRecord(ev_[3], stream_));
  EVK_CUDA(cudaStreamSynchronize(stream_));
  if (times) {
    times->pack_ms += pack_ms;
    times->upload_ms += elapsed_ms(ev_[0], ev_[1]);
    times->kernel_ms += elapsed_ms(ev_[1], ev_[2]);
    times->download_ms += elapsed_ms(ev_[2], ev_[3]);
  }
}

KernelHits GpuAligner::run_packed(const ReadCodes& reads, int cpu_threads, GpuAlnTimes* times) {
  const auto t0 = std::chrono::steady_clock::now();
  dev_.stage(reads, cfg_.aln_cap, cpu_threads, stream_);
  const double pack_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EVK_CUDA(cudaEventRecord(ev_[0], stream_));
  dev_.copy_up(stream_);
  dev_.poison(stream_);  // every read must be answered
  EVK_CUDA(cudaEventRecord(ev_[1], stream_));
  dev_.launch(kernel_, cfg_.block_w, cfg_.stack_cap, dev_.max_threads(), stream_);
  EVK_CUDA(cudaEventRecord(ev_[2], stream_));
  dev_.compact(stream_);
  EVK_CUDA(cudaEventRecord(ev_[3], stream_));
  const KernelHits h = dev_.download_packed(stream_);
  EVK_CUDA(cudaEventRecord(ev_[4], stream_));
  EVK_CUDA(cudaStreamSynchronize(stream_));
  if (times) {
    times->pack_ms += pack_ms;
    times->upload_ms += elapsed_ms(ev_[0], ev_[1]);
    times->kernel_ms += elapsed_ms(ev_[1], ev_[2]);
    times->compact_ms += elapsed_ms(ev_[2], ev_[3]);
    times->download_ms += elapsed_ms(ev_[3], ev_[4]);
  }
  return h;
}

AlnBatch GpuAligner::search(const ReadCodes& reads, int cpu_threads, GpuAlnTimes* times) {
  AlnBatch out;
  if (!supported_) {  // options beyond the kernel's packed entries: the CPU does the batch
    const auto t = std::chrono::steady_clock::now();
    out = aln_search_batch(idx_, reads, opt_, cpu_threads);
    if (times) {
      times->fallback_reads += reads.size();
      times->fallback_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    }
    return out;
  }
  const KernelHits h = run_packed(reads, cpu_threads, times);
  // throws for a read neither answered nor handed back
  const std::size_t first_back = handed_back_reads(h.n_out, cfg_.aln_cap).size();
  if (times) times->first_pass_handed_back += first_back;
  std::span<const std::uint32_t> n_out = h.n_out;
  std::span<const std::uint64_t> packed = h.packed;
  int cap = cfg_.aln_cap;
  std::vector<std::uint32_t> later_n_out;
  std::vector<std::uint64_t> later_packed;
  if (first_back > 0 && passes_) {  // the handed-back reads again on the GPU, with larger limits
    later_n_out.assign(h.n_out.begin(), h.n_out.end());
    later_packed.assign(h.packed.begin(), h.packed.end());
    cap = passes_->run(dev_, reads, later_n_out, later_packed, stream_, cpu_threads, times);
    n_out = later_n_out;
    packed = later_packed;
  }
  const auto t = std::chrono::steady_clock::now();
  const std::size_t back = merge_kernel_output_packed(idx_, reads, opt_, n_out, packed, cap, cpu_threads, out);
  if (times) {
    times->fallback_reads += back;
    times->fallback_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
  return out;
}

}  // namespace evk::barracuda_exact
#endif
