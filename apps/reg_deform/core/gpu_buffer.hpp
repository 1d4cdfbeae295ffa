// Device memory for reg_deform's GPU backend: a typed allocation, linear textures over it, and
// the small launch helpers every GPU file uses.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstddef>

#include "evk/cuda_check.hpp"

namespace evk::reg_deform::gpu {

// A typed device allocation.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) { resize(n); }
  ~Buffer() { release(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_, n_ = o.n_;
      o.p_ = nullptr, o.n_ = 0;
    }
    return *this;
  }
  void resize(std::size_t n);  // discards contents
  void upload(const T* src, std::size_t n, cudaStream_t s = nullptr);
  void download(T* dst, std::size_t n, cudaStream_t s = nullptr) const;
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  void release();

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

inline unsigned blocks_for(std::size_t n, unsigned bs) { return static_cast<unsigned>((n + bs - 1) / bs); }

// A texture object over n elements of linear device memory.
template <class T>
inline cudaTextureObject_t linear_texture(T* ptr, std::size_t n) {
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeLinear;
  res.res.linear.devPtr = ptr;
  res.res.linear.desc = cudaCreateChannelDesc<T>();
  res.res.linear.sizeInBytes = n * sizeof(T);
  cudaTextureDesc td{};
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t t = 0;
  EVK_CUDA(cudaCreateTextureObject(&t, &res, &td, nullptr));
  return t;
}

}  // namespace evk::reg_deform::gpu
#endif
