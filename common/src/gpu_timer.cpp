#include "evk/gpu_timer.hpp"

#if defined(EVK_HAVE_CUDA)
#include <chrono>
#include <vector>

#include "evk/cuda_check.hpp"

namespace evk {

L2Flusher::L2Flusher() {
  int dev = 0, l2 = 0;
  EVK_CUDA(cudaGetDevice(&dev));
  EVK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  bytes_ = static_cast<size_t>(l2) * 2;
  if (bytes_ == 0) bytes_ = 1 << 20;
  EVK_CUDA(cudaMalloc(&buf_, bytes_));
}

L2Flusher::~L2Flusher() {
  if (buf_) cudaFree(buf_);
}

void L2Flusher::flush(cudaStream_t s) { EVK_CUDA(cudaMemsetAsync(buf_, 0x5a, bytes_, s)); }

TimingStats time_gpu(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream, const TimingOptions& opt) {
  L2Flusher flusher;
  cudaEvent_t a, b;
  EVK_CUDA(cudaEventCreate(&a));
  EVK_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < opt.warmup; ++i) fn(stream);
  EVK_CUDA_LAST();
  EVK_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < opt.repeats; ++i) {
    if (opt.flush_l2) flusher.flush(stream);
    EVK_CUDA(cudaEventRecord(a, stream));
    fn(stream);
    EVK_CUDA(cudaEventRecord(b, stream));
    EVK_CUDA(cudaEventSynchronize(b));
    EVK_CUDA_LAST();
    float t = 0;
    EVK_CUDA(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i >= 2 && el > opt.max_seconds) break;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return summarize(ms);
}

}  // namespace evk
#endif
