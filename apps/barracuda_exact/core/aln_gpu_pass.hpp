// The later passes of the GPU inexact search: the reads the first pass hands back (its stack or hit
// list full) searched again with one warp per read (core/aln_warp.hpp) and larger limits, each pass
// over the reads the one before handed back, on the same device buffers: the first pass's stack
// memory holds the warps' stacks (16,383 entries: about 0.7 MiB a warp; 262,143: 8.3 MiB; bwa's
// queue limit -m: 64 MiB at -m 2000000). Reads still handed back after the last pass, longer than
// MAX_LEN, or of a pass whose stacks do not fit one warp are left to the CPU (the merge).
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <vector>

#include "core/aln_gpu.hpp"
#include "core/aln_passes.hpp"

namespace evk::barracuda_exact {

class AlnPasses {
 public:
  // The passes after a first pass built with `first` (aln_pass_limits).
  AlnPasses(const AlnOptions& opt, const InexactKernelConfig& first);
  // Runs the passes over the batch's reads handed back so far (n_out == kHandedBack, at most MAX_LEN
  // bases) on dev (its staged batch is replaced) and splices their answers into (n_out, packed)
  // (splice_pass_output). Returns the largest ALN_CAP of the output, for merge_kernel_output_packed.
  int run(InexactDevice& dev, const ReadCodes& reads, std::vector<std::uint32_t>& n_out,
          std::vector<std::uint64_t>& packed, cudaStream_t s, int cpu_threads, GpuAlnTimes* times);
  const std::vector<AlnPassLimits>& limits() const { return limits_; }

 private:
  // One pass over ids; its n_out per id and its answered reads' entries in id order.
  void run_pass(const AlnPassLimits& p, InexactDevice& dev, const ReadCodes& reads, std::span<const std::uint32_t> ids, int batch_max_len,
                cudaStream_t s, int cpu_threads, std::vector<std::uint32_t>& n_out, std::vector<std::uint64_t>& packed,
                AlnPassTimes& t);
  std::vector<AlnPassLimits> limits_;
  int first_aln_cap_ = 0, max_len_ = 0;
};

}  // namespace evk::barracuda_exact
#endif
