// A small CUDA emulator for tests: compiles kernel sources (.cu) as C++ and runs each CUDA thread
// as a fiber on the CPU, so the GPU stages are checked against their CPU references on machines
// without a GPU (CI). Strict where CUDA is undefined: a warp collective whose mask names a lane that
// exited or waits elsewhere, a shuffle from a lane outside the mask, and deadlocks all fail the
// launch. Threads between two barriers run in a seeded random order, so a missing __syncthreads()
// shows up as a wrong answer more often than on a real GPU. Not a timing model.
//
// Include this header before a kernel source; launch with emu::launch(grid, block, smem, body).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <math.h>  // floorf and the other float functions device code calls unqualified
#include <string>

#define EVK_CUDA_EMU 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __shared__ static
// Dynamic shared memory in kernels is declared through this macro (see the kernel files).
#define EVK_DYN_SMEM(type, name) type* name = reinterpret_cast<type*>(::emu::dyn_smem())

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
struct alignas(4) ushort2 {
  unsigned short x, y;
};
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return uint4{a, b, c, d}; }
inline uint2 make_uint2(unsigned a, unsigned b) { return uint2{a, b}; }

namespace emu {
struct ThreadCtx {
  dim3 tid;
  int linear = 0;
};
ThreadCtx* current();
extern dim3 g_block_idx, g_block_dim, g_grid_dim;
unsigned char* dyn_smem();

// Runs body once per thread of every block (blocks one after another). Throws std::runtime_error
// when a launch is malformed or a kernel breaks the collective rules above. seed: thread order.
void launch(dim3 grid, dim3 block, std::size_t smem, const std::function<void()>& body, std::uint64_t seed = 1);

enum Collective { kSyncWarp, kShflIdx, kShflUp, kShflDown, kShflXor, kBallot, kAny, kAll, kReduceMin };
std::uint64_t warp_collective(Collective kind, unsigned mask, std::uint64_t value, int param, int width);
void syncthreads();
[[noreturn]] void fail(const std::string& why);  // from kernel code: aborts the launch

template <class T>
std::uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8, "shuffle of a type wider than 8 bytes");
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
T from_bits(std::uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}
}  // namespace emu

#define threadIdx (::emu::current()->tid)
#define blockIdx (::emu::g_block_idx)
#define blockDim (::emu::g_block_dim)
#define gridDim (::emu::g_grid_dim)
#define warpSize 32

inline void __syncthreads() { emu::syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { emu::warp_collective(emu::kSyncWarp, mask, 0, 0, 32); }
inline void __threadfence() {}
inline void __threadfence_block() {}
template <class T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  return emu::from_bits<T>(emu::warp_collective(emu::kShflIdx, mask, emu::to_bits(v), src, width));
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return emu::from_bits<T>(emu::warp_collective(emu::kShflUp, mask, emu::to_bits(v), static_cast<int>(delta), width));
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return emu::from_bits<T>(emu::warp_collective(emu::kShflDown, mask, emu::to_bits(v), static_cast<int>(delta), width));
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  return emu::from_bits<T>(emu::warp_collective(emu::kShflXor, mask, emu::to_bits(v), lane_mask, width));
}
inline unsigned __ballot_sync(unsigned mask, int p) {
  return static_cast<unsigned>(emu::warp_collective(emu::kBallot, mask, p != 0, 0, 32));
}
inline int __any_sync(unsigned mask, int p) { return static_cast<int>(emu::warp_collective(emu::kAny, mask, p != 0, 0, 32)); }
// redux.sync (sm_80+): the minimum of the 32-bit unsigned values of the lanes in mask.
inline unsigned __reduce_min_sync(unsigned mask, unsigned v) {
  return static_cast<unsigned>(emu::warp_collective(emu::kReduceMin, mask, v, 0, 32));
}
inline int __all_sync(unsigned mask, int p) { return static_cast<int>(emu::warp_collective(emu::kAll, mask, p != 0, 0, 32)); }

// Integer intrinsics (host definitions of the device functions the kernels use).
template <class T>
inline T min(T a, T b) { return b < a ? b : a; }
template <class T>
inline T max(T a, T b) { return a < b ? b : a; }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(unsigned v) { return v ? __builtin_clz(v) : 32; }
inline int __ffs(unsigned v) { return __builtin_ffs(static_cast<int>(v)); }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const std::uint64_t b = (static_cast<std::uint64_t>(y) << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) {
    const unsigned sel = (s >> (4 * i)) & 7u;  // the sign-replicate mode (bit 3) is not used
    r |= static_cast<unsigned>((b >> (8 * sel)) & 0xffu) << (8 * i);
  }
  return r;
}
namespace emu {
inline short lo16(unsigned v) { return static_cast<short>(v & 0xffffu); }
inline short hi16(unsigned v) { return static_cast<short>(v >> 16); }
inline unsigned pack16(int lo, int hi) {
  return (static_cast<unsigned>(lo) & 0xffffu) | ((static_cast<unsigned>(hi) & 0xffffu) << 16);
}
}  // namespace emu
inline unsigned __vmins2(unsigned a, unsigned b) {
  return emu::pack16(min<int>(emu::lo16(a), emu::lo16(b)), min<int>(emu::hi16(a), emu::hi16(b)));
}
inline unsigned __vminu2(unsigned a, unsigned b) {
  return emu::pack16(min<unsigned>(a & 0xffffu, b & 0xffffu), min<unsigned>(a >> 16, b >> 16));
}
inline unsigned __vadd2(unsigned a, unsigned b) { return emu::pack16((a & 0xffffu) + (b & 0xffffu), (a >> 16) + (b >> 16)); }
inline unsigned __vsub2(unsigned a, unsigned b) { return emu::pack16((a & 0xffffu) - (b & 0xffffu), (a >> 16) - (b >> 16)); }
inline unsigned __vimin3_s16x2(unsigned a, unsigned b, unsigned c) { return __vmins2(__vmins2(a, b), c); }
inline unsigned __viaddmin_s16x2(unsigned a, unsigned b, unsigned c) { return __vmins2(__vadd2(a, b), c); }
inline unsigned __vimin3_u16x2(unsigned a, unsigned b, unsigned c) { return __vminu2(__vminu2(a, b), c); }
inline unsigned __vcmpeq2(unsigned a, unsigned b) {
  return ((a & 0xffffu) == (b & 0xffffu) ? 0xffffu : 0u) | ((a >> 16) == (b >> 16) ? 0xffff0000u : 0u);
}
// Byte-wise |a - b| (unsigned) and the unsigned 4-way byte dot product with accumulate (CUDA's
// __vabsdiffu4 and __dp4a(unsigned, unsigned, unsigned)), written from their definitions.
inline unsigned __vabsdiffu4(unsigned a, unsigned b) {
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) {
    const int x = static_cast<int>((a >> (8 * i)) & 0xffu), y = static_cast<int>((b >> (8 * i)) & 0xffu);
    r |= static_cast<unsigned>(x > y ? x - y : y - x) << (8 * i);
  }
  return r;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
  return c;
}
template <class T>
inline T __ldg(const T* p) { return *p; }
template <class T>
inline void __stcs(T* p, T v) { *p = v; }  // a streaming store: a plain store to the emulator
template <class T>
inline T atomicMin(T* p, T v) {
  const T o = *p;
  if (v < o) *p = v;
  return o;
}
template <class T>
inline T atomicAdd(T* p, T v) {
  const T o = *p;
  *p = o + v;
  return o;
}
