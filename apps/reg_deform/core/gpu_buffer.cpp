#include "core/gpu_buffer.hpp"
#if defined(EVK_HAVE_CUDA)
#include <cstdint>

namespace evk::reg_deform::gpu {

// ---- buffers ----------------------------------------------------------------------------------
template <class T>
void Buffer<T>::resize(std::size_t n) {
  if (n == n_) return;
  release();
  if (n) EVK_CUDA(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
  n_ = n;
}
template <class T>
void Buffer<T>::upload(const T* src, std::size_t n, cudaStream_t s) {
  if (n > n_) resize(n);
  if (n) EVK_CUDA(cudaMemcpyAsync(p_, src, n * sizeof(T), cudaMemcpyHostToDevice, s));
}
template <class T>
void Buffer<T>::download(T* dst, std::size_t n, cudaStream_t s) const {
  if (n) EVK_CUDA(cudaMemcpyAsync(dst, p_, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  EVK_CUDA(cudaStreamSynchronize(s));
}
template <class T>
void Buffer<T>::release() {
  if (p_) cudaFree(p_);
  p_ = nullptr;
  n_ = 0;
}
template class Buffer<float>;
template class Buffer<float4>;
template class Buffer<std::uint32_t>;
template class Buffer<std::uint8_t>;
template class Buffer<double>;
template class Buffer<int>;

}  // namespace evk::reg_deform::gpu
#endif
