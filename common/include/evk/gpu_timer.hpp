// Honest GPU timing: CUDA events around each repeat, warm-up runs first, L2 flushed before every
// repeat (a memset over twice the L2), median and spread reported.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <functional>

#include "evk/stats.hpp"

namespace evk {

struct TimingOptions {
  int warmup = 3;
  int repeats = 21;
  bool flush_l2 = true;
  double max_seconds = 10;  // stop repeating once this much wall time has been spent (>= 3 repeats)
};

class L2Flusher {
 public:
  L2Flusher();  // sized from the current device's L2
  ~L2Flusher();
  void flush(cudaStream_t stream);

 private:
  void* buf_ = nullptr;
  size_t bytes_ = 0;
};

// Times fn(stream) on `stream`. fn must only enqueue work (no host synchronisation).
TimingStats time_gpu(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream = nullptr,
                     const TimingOptions& opt = {});

}  // namespace evk
#endif
