// Included inside a namespace before the kernel source: CUDA's built-ins as host C++.
struct uint4 {
  unsigned x, y, z, w;
};
struct HostDim {
  unsigned x;
};
inline HostDim blockIdx{0}, threadIdx{0};
template <class T>
inline T __ldg(const T* p) {
  return *p;
}
inline int __popc(unsigned x) { return __builtin_popcount(x); }
// real atomics, so that emulated warps may run on several host threads
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long cmp, unsigned long long v) {
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(x)
