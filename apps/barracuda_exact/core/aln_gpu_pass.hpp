// The later passes of the GPU inexact search: the reads the first pass hands back (its stack or hit
// list full) searched again by the wide kernel (core/aln_wide.hpp) with larger limits, each pass
// over the reads the one before handed back, on the same device buffers: the first pass's stack
// memory holds fewer, larger stacks (stack_cap x 32 bytes a thread: 8,192 threads of 512 KiB,
// 512 of 8 MiB, 64 of 61 MiB in 4 GiB). Reads still handed back after the last pass, longer than
// MAX_LEN, or of a pass whose stacks do not fit one block are left to the CPU (the merge).
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/aln_gpu.hpp"
#include "core/aln_wide.hpp"
#include "evk/kernel_image.hpp"

namespace evk::barracuda_exact {

// The wide kernel built into the tool for a pass's limits and MAX_LEN (the default passes at
// MAX_LEN 256), else null (NVRTC compiles it).
const KernelImage* embedded_wide_kernel(const AlnPassLimits& l, int max_len);

class AlnPasses {
 public:
  // The passes after a first pass built with `first` (aln_pass_limits); cc: the device's, for NVRTC.
  // The kernels are compiled (NVRTC, disk cache) when a pass first has reads.
  AlnPasses(const AlnOptions& opt, const InexactKernelConfig& first, int cc);
  // Runs the passes over the batch's reads handed back so far (n_out == kHandedBack, at most MAX_LEN
  // bases) on dev (its staged batch is replaced) and splices their answers into (n_out, packed)
  // (splice_pass_output). Returns the largest ALN_CAP of the output, for merge_kernel_output_packed.
  // A kernel that fails to load (no NVRTC) switches the passes off (error()).
  int run(InexactDevice& dev, const ReadCodes& reads, std::vector<std::uint32_t>& n_out,
          std::vector<std::uint64_t>& packed, cudaStream_t s, int cpu_threads, GpuAlnTimes* times);
  const std::vector<AlnPassLimits>& limits() const { return limits_; }
  const std::string& error() const { return error_; }

 private:
  struct Pass {
    AlnPassLimits lim;
    CudaLibrary lib;
    cudaKernel_t kernel = nullptr;
  };
  bool load(Pass& p);
  // One pass over ids; its n_out per id and its answered reads' entries in id order.
  void run_pass(Pass& p, InexactDevice& dev, const ReadCodes& reads, std::span<const std::uint32_t> ids, int batch_max_len,
                cudaStream_t s, int cpu_threads, std::vector<std::uint32_t>& n_out, std::vector<std::uint64_t>& packed,
                AlnPassTimes& t);
  std::vector<AlnPassLimits> limits_;
  std::vector<Pass> passes_;
  int first_aln_cap_ = 0, max_len_ = 0, cc_ = 0;
  std::string error_;
};

}  // namespace evk::barracuda_exact
#endif
