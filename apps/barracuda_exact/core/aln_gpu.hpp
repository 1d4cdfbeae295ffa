// GPU backend of the inexact search: the BWT resident on the device, reads uploaded per batch,
// the inexact kernel (kernels/original/barracuda_exact/inexact.cu; embedded fatbin for the default
// configuration, NVRTC for any other) run by persistent threads with their stacks in device memory,
// the reads it hands back searched again on the GPU with larger limits (core/aln_gpu_pass.hpp) and
// those still handed back on the CPU, so a batch's hit lists equal aln_search_batch's.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/aln_compact.hpp"
#include "core/aln_kernel.hpp"
#include "core/aln_passes.hpp"
#include "core/aln_search.hpp"
#include "core/gpu_exact.hpp"
#include "core/index.hpp"
#include "core/match.hpp"
#include "evk/cuda_library.hpp"

namespace evk::barracuda_exact {


// What the aligners of one GPU share: the index's BWT (uploaded once per device, not per stream),
// and each aligner's share of the device memory for its stacks (0: min(kAlnStackBudget, a third of
// the free memory when it is made); `map`: core/aln_passes.hpp's aln_stream_plan).
struct AlnDeviceShare {
  std::shared_ptr<const DeviceBwt> bwt;  // null: the aligner uploads its own
  std::size_t stack_budget = 0;
};

// The kernel's compile-time limits and launch shape.
struct InexactKernelConfig {
  int block_w = kAlnKernelBlockW;
  int stack_cap = kAlnKernelStackCap;
  int aln_cap = kAlnKernelAlnCap;
  int max_len = kAlnKernelMaxLen;
  int threads_per_sm = 0;  // persistent threads per SM; 0 = 512
  int later_passes = 3;  // how many later GPU passes (a warp per read) search the handed-back reads before the CPU (0-3)
  // the later passes' warps share the whole stack budget (else only the first pass's threads'
  // stacks: tests starve the later passes with few threads per SM)
  bool share_budget = true;
  bool operator==(const InexactKernelConfig&) const = default;
  std::vector<std::string> nvrtc_options() const;  // -D for the four macros
};

// Loads the kernel: the embedded fatbin for the original source with the default limits, else NVRTC
// (cached) of `source` (empty: the original text) with cfg's macros.
CudaLibrary load_inexact_kernel(const InexactKernelConfig& cfg, int cc, const std::string& source = {});

// One later pass (core/aln_gpu_pass.hpp): the reads given to it and those it answered, the
// persistent warps of its launches (0: its stacks did not fit), its wall time (gathering the reads,
// copies, kernel, compaction, splicing the answers in).
struct AlnPassTimes {
  std::uint64_t reads = 0, answered = 0;
  std::uint32_t warps = 0;
  double ms = 0;
};
constexpr std::size_t kAlnMaxLaterPasses = 3;

// upload: host-to-device copies (and the n_out poison); pack: packing the reads into pinned memory
// on the host; compact: the compaction kernels (run_packed, search); download: device-to-host copies
// (these five of the first pass). fallback_reads, fallback_s: the reads searched on the CPU (handed
// back by every pass, or all of a batch whose options the kernel does not support) and that time.
struct GpuAlnTimes {
  double upload_ms = 0, kernel_ms = 0, download_ms = 0, pack_ms = 0, compact_ms = 0, fallback_s = 0;
  std::uint64_t fallback_reads = 0;
  std::uint64_t first_pass_handed_back = 0;           // reads the first pass handed back
  std::array<AlnPassTimes, kAlnMaxLaterPasses> passes{};  // the later passes, in order
  std::uint64_t cpu_reads() const { return fallback_reads; }
  std::uint64_t second_pass_reads() const { return passes[0].reads; }
  double second_pass_ms() const { return passes[0].ms; }
  double later_passes_ms() const {
    double t = 0;
    for (const auto& p : passes) t += p.ms;
    return t;
  }
};

// The kernel's output as downloaded compacted: n_out per read as the kernel wrote it, and the
// answered reads' entries (3 words each) in read order (see merge_kernel_output_packed). Views of
// pinned memory, valid until the next stage/upload/download of the same device.
struct KernelHits {
  std::span<const std::uint32_t> n_out;
  std::span<const std::uint64_t> packed;
};

// The device side of the inexact search without the kernel: the BWT, a batch of reads, the
// per-length maximum differences, the threads' stacks and the outputs; launch() runs any build of
// the kernel (the GPU backend's, a GI candidate) over the uploaded batch.
class InexactDevice {
 public:
  // stack_cap: the largest STACK_CAP of the kernels to be run; threads_per_sm: persistent threads
  // per SM (0: 512), limited by a stack budget of min(kAlnStackBudget, a third of the free memory).
  // whole_budget: the budget is allocated even where the threads need less (the later passes' warps
  // share it: GpuAligner with later passes); else just the threads'. share: the BWT already on the
  // device and this device's stack budget (AlnDeviceShare; empty: its own BWT, the default budget).
  InexactDevice(const BwtIndex& idx, const AlnOptions& opt, int device, int stack_cap, int max_len, int threads_per_sm,
                bool whole_budget = false, const AlnDeviceShare& share = {});
  ~InexactDevice();
  InexactDevice(const InexactDevice&) = delete;
  InexactDevice& operator=(const InexactDevice&) = delete;
  // stage: waits for s (the previous batch), packs the reads into pinned memory (threads: 0 = all
  // cores, small batches on one); copy_up: enqueues the staged batch's copies to the device.
  // batch_max_len: the longest read of the whole batch when `reads` are some of its reads (a later
  // pass: bwa limits the gap opens by the batch's longest read); -1: the longest of `reads`.
  void stage(const ReadCodes& reads, int aln_cap, int threads, cudaStream_t s, int batch_max_len = -1);
  void copy_up(cudaStream_t s);
  void upload(const ReadCodes& reads, int aln_cap, cudaStream_t s) {  // both; async, reads may go at once
    stage(reads, aln_cap, 0, s);
    copy_up(s);
  }
  void poison(cudaStream_t s);                                        // n_out := 0xa5a5a5a5
  // Enqueues the kernel (built with STACK_CAP = stack_cap, entries of entry_bytes) with block_w
  // threads per block over at most `threads` persistent threads, as many as the stacks allow (whole
  // blocks where one fits; throws when not one thread's stack fits). Returns the threads launched.
  std::uint32_t launch(cudaKernel_t k, int block_w, int stack_cap, std::uint32_t threads, cudaStream_t s,
                       int entry_bytes = 16);
  // Enqueues the warp-per-read kernel of the later passes (core/aln_warp.hpp) with stacks of
  // stack_cap entries, as many warps as the stack memory holds (at most one a read). Returns the
  // warps launched (0: not one warp's memory fits).
  std::uint32_t launch_warps(std::uint64_t stack_cap, cudaStream_t s);
  void download(std::vector<std::uint32_t>& n_out, std::vector<std::uint64_t>& aln_out, cudaStream_t s);  // syncs
  // After a launch: enqueues the compaction of the output on the device (AlnCompactor).
  void compact(cudaStream_t s);
  // After compact: downloads n_out and the packed entries into pinned memory; syncs.
  KernelHits download_packed(cudaStream_t s);
  std::uint32_t max_threads() const { return n_threads_; }  // for stack_cap
  std::uint32_t threads_for(int stack_cap, int threads_per_sm) const;  // within the same stack memory
  // Threads whose stacks of stack_cap entries of entry_bytes fit the stack memory.
  std::uint64_t stack_fit(int stack_cap, int entry_bytes) const {
    return stack_bytes_ / (static_cast<std::uint64_t>(stack_cap) * static_cast<std::uint64_t>(entry_bytes));
  }
  std::uint64_t warp_fit(std::uint64_t stack_cap) const;  // warps of launch_warps that fit
  std::size_t output_bytes() const { return cap_alns_ * 8; }  // the room of the raw output now
  std::size_t size() const { return n_; }
  int sms() const { return sms_; }
  const DeviceBwt& bwt() const { return *bwt_; }  // for other kernels over the same index (aln_positions)

 private:
  void grow(std::size_t words, std::size_t reads, int aln_cap);
  AlnOptions opt_;
  std::shared_ptr<const DeviceBwt> bwt_;
  AlnCompactor compactor_;  // loaded into the device bwt_ selected
  int sms_ = 0;
  std::uint32_t n_threads_ = 0;
  std::size_t stack_bytes_ = 0;
  void* stack_ = nullptr;
  int* max_diff_ = nullptr;
  std::uint32_t* counter_ = nullptr;
  std::uint32_t *words_ = nullptr, *lens_ = nullptr, *n_out_ = nullptr;
  std::uint64_t* aln_out_ = nullptr;
  std::size_t cap_words_ = 0, cap_reads_ = 0, cap_alns_ = 0;
  std::uint32_t stride_ = 1;     // words per read of the staged batch
  std::size_t n_words_ = 0;      // its packed words
  PinnedBuffer host_words_, host_lens_, host_n_out_, host_total_, host_packed_;
  std::uint64_t *packed_ = nullptr, *total_ = nullptr;
  std::size_t cap_packed_ = 0;
  AlnKernelParams params_{};
  std::size_t n_ = 0;
  int aln_cap_ = 0;
};

class AlnPasses;  // core/aln_gpu_pass.hpp

class GpuAligner {
 public:
  GpuAligner(const BwtIndex& idx, const AlnOptions& opt, int device, const InexactKernelConfig& cfg = {},
             const std::string& source = {}, const AlnDeviceShare& share = {});
  ~GpuAligner();
  GpuAligner(const GpuAligner&) = delete;
  GpuAligner& operator=(const GpuAligner&) = delete;
  // reads: codes with the searched (trimmed) lengths. cpu_threads: for packing the reads and for
  // the reads handed back by every pass.
  AlnBatch search(const ReadCodes& reads, int cpu_threads = 0, GpuAlnTimes* times = nullptr);
  // The kernel's raw output (n_out poisoned before the launch), for tests and the GI problem.
  void run(const ReadCodes& reads, std::vector<std::uint32_t>& n_out, std::vector<std::uint64_t>& aln_out,
           GpuAlnTimes* times = nullptr);
  // The kernel's output compacted on the device (what search merges; n_out poisoned before the
  // launch). cpu_threads: for packing the reads. Valid until the next run of this aligner.
  KernelHits run_packed(const ReadCodes& reads, int cpu_threads = 0, GpuAlnTimes* times = nullptr);
  const InexactKernelConfig& config() const { return cfg_; }
  const InexactDevice& device() const { return dev_; }
  std::uint32_t threads() const { return dev_.max_threads(); }

 private:
  const BwtIndex& idx_;
  AlnOptions opt_;
  InexactKernelConfig cfg_;
  bool supported_ = true;  // options fit the kernel's packed entries
  InexactDevice dev_;
  CudaLibrary lib_;
  cudaKernel_t kernel_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev_[5] = {};
  std::unique_ptr<AlnPasses> passes_;  // null when cfg.later_passes is 0
};

}  // namespace evk::barracuda_exact
#endif
