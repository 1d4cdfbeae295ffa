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
inline unsigned atomicAdd(unsigned* p, unsigned v) {
  const unsigned o = *p;
  *p += v;
  return o;
}
inline unsigned atomicMin(unsigned* p, unsigned v) {
  const unsigned o = *p;
  if (v < o) *p = v;
  return o;
}
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(x)
