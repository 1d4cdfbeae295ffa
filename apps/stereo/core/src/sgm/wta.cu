// SGM stages wta + refine on the GPU (support kernel): sums the direction volumes of
// sgm_aggregate.cu (S fits 16 bits), takes the smallest k of minimal S, applies the uniqueness
// ratio and the sub-pixel fit, and writes the left map in 1/16 pixel; optionally the right image's
// map (smallest k of minimal S(xr + dmin + k, k)) through a per-row shared-memory table of packed
// (S << 16 | k) keys and atomicMin. Bit-identical to wta_cpu + refine_cpu + right_map.
//
// One block of WTA_THREADS per image row; a segment of Gs lanes per cell, K disparities per lane
// (the layout of the aggregation volumes: out[path][y][x][k], k < Dp = G K).
// Dynamic shared memory (sgm_wta_smem): the right map's keys (W words, rounded up to 4) when
// `right`, then with sub-pixel WTA_THREADS x K/2 words where each cell's sums are stored, so the
// lane owning best reads S(best - 1) and S(best + 1) directly (was: a select chain over every pair
// of every lane, twice: 41% more instructions at 128/4).
#include "sgm_math.h"

#define WTA_THREADS 256
#define FULL_MASK 0xffffffffu
#define INVALID_Q (-32768)

#ifndef EVK_DYN_SMEM
#define EVK_DYN_SMEM(type, name) extern __shared__ type name[]
#endif

template <int K, class StoreT>
__device__ __forceinline__ void add_line(unsigned* S, const StoreT* __restrict__ src);

template <int K>
__device__ __forceinline__ void add_bytes(unsigned* S, const unsigned* w) {
#pragma unroll
  for (int i = 0; i < K / 4; ++i) {
    S[2 * i] += __byte_perm(w[i], 0u, 0x4140);
    S[2 * i + 1] += __byte_perm(w[i], 0u, 0x4342);
  }
}

template <>
__device__ __forceinline__ void add_line<8, unsigned char>(unsigned* S, const unsigned char* __restrict__ src) {
  const uint2 v = __ldg((const uint2*)src);
  const unsigned w[2] = {v.x, v.y};
  add_bytes<8>(S, w);
}
template <>
__device__ __forceinline__ void add_line<16, unsigned char>(unsigned* S, const unsigned char* __restrict__ src) {
  const uint4 v = __ldg((const uint4*)src);
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
  add_bytes<16>(S, w);
}
template <>
__device__ __forceinline__ void add_line<32, unsigned char>(unsigned* S, const unsigned char* __restrict__ src) {
  const uint4 a = __ldg((const uint4*)src), b = __ldg((const uint4*)src + 1);
  const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  add_bytes<32>(S, w);
}
template <int K>
__device__ __forceinline__ void add_words(unsigned* S, const unsigned short* __restrict__ src) {
  // A padded half may overflow its 16 bits; padding sits above the real indices, so the carry
  // leaves the word and never reaches a real half. Padded halves are overwritten afterwards.
#pragma unroll
  for (int i = 0; i < K / 8; ++i) {
    const uint4 v = __ldg((const uint4*)src + i);
    S[4 * i] += v.x;
    S[4 * i + 1] += v.y;
    S[4 * i + 2] += v.z;
    S[4 * i + 3] += v.w;
  }
}
template <>
__device__ __forceinline__ void add_line<8, unsigned short>(unsigned* S, const unsigned short* __restrict__ src) {
  add_words<8>(S, src);
}
template <>
__device__ __forceinline__ void add_line<16, unsigned short>(unsigned* S, const unsigned short* __restrict__ src) {
  add_words<16>(S, src);
}
template <>
__device__ __forceinline__ void add_line<32, unsigned short>(unsigned* S, const unsigned short* __restrict__ src) {
  add_words<32>(S, src);
}

template <int K, class StoreT, int P>
__device__ __forceinline__ void add_paths(unsigned* S, const StoreT* __restrict__ src, const size_t plane) {
#pragma unroll
  for (int p = 0; p < P; ++p) add_line<K, StoreT>(S, src + p * plane);
}

template <int K, class StoreT, bool UNROLL>
__device__ __forceinline__ void wta_body(const StoreT* __restrict__ vol, const int paths, const int W, const int H,
                                         const int dmin, const int D, const int Dp, const int G, const int Gs,
                                         const int uniqueness, const int subpixel, short* __restrict__ left,
                                         short* __restrict__ right) {
  EVK_DYN_SMEM(unsigned, rkey);
  unsigned* spx = rkey + (right != 0 ? ((W + 3) & ~3) : 0);  // sub-pixel: the cells' sums
  const int y = blockIdx.x;
  const int lane = threadIdx.x % Gs;
  const int cells = WTA_THREADS / Gs;
  const bool want_right = right != 0;
  if (want_right) {
    for (int i = threadIdx.x; i < W; i += WTA_THREADS) rkey[i] = 0xffffffffu;
    __syncthreads();
  }
  unsigned padm[K / 2];
#pragma unroll
  for (int i = 0; i < K / 2; ++i) {
    const int k = lane * K + 2 * i;
    padm[i] = (k >= D ? 0xffffu : 0u) | (k + 1 >= D ? 0xffff0000u : 0u);
  }
  const bool padded = Dp != D || G != Gs;
  const int data_lane = lane < G ? lane : G - 1;
  const size_t plane = (size_t)H * W * Dp;
  for (int x0 = 0; x0 < W; x0 += cells) {
    const int xq = x0 + (int)threadIdx.x / Gs;
    const bool inside = xq < W;
    const int x = inside ? xq : W - 1;
    unsigned S[K / 2];
#pragma unroll
    for (int i = 0; i < K / 2; ++i) S[i] = 0;
    const StoreT* src = vol + ((size_t)y * W + x) * Dp + data_lane * K;
    // sgm_wta2_*: 4 or 8 paths unrolled, every path's loads independent and in flight at once;
    // sgm_wta_*: a loop bounded by `paths` (fewer registers: more blocks per SM)
    if (UNROLL && paths == 8) {
      add_paths<K, StoreT, 8>(S, src, plane);
    } else if (UNROLL && paths == 4) {
      add_paths<K, StoreT, 4>(S, src, plane);
    } else {
      for (int p = 0; p < paths; ++p) add_line<K, StoreT>(S, src + p * plane);
    }
    if (padded) {
#pragma unroll
      for (int i = 0; i < K / 2; ++i) S[i] |= padm[i];
    }
    // minimum, then its smallest index
    unsigned mn2 = S[0];
#pragma unroll
    for (int i = 1; i < K / 2; ++i) mn2 = __vminu2(mn2, S[i]);
    int smin = min((int)(mn2 & 0xffffu), (int)(mn2 >> 16));
    for (int o = Gs / 2; o > 0; o /= 2) smin = min(smin, __shfl_xor_sync(FULL_MASK, smin, o, Gs));
    int local = 1 << 20;
#pragma unroll
    for (int i = K / 2 - 1; i >= 0; --i) {
      if ((int)(S[i] >> 16) == smin) local = 2 * i + 1;
      if ((int)(S[i] & 0xffffu) == smin) local = 2 * i;
    }
    int best = lane * K + local;
    for (int o = Gs / 2; o > 0; o /= 2) best = min(best, __shfl_xor_sync(FULL_MASK, best, o, Gs));
    // uniqueness: the smallest S with |k - best| > 1 (0xffff: none)
    bool valid = true;
    if (uniqueness > 0) {
      int second = 0xffff;
#pragma unroll
      for (int i = 0; i < K / 2; ++i) {
        const int k = lane * K + 2 * i;
        if (k < best - 1 || k > best + 1) second = min(second, (int)(S[i] & 0xffffu));
        if (k + 1 < best - 1 || k + 1 > best + 1) second = min(second, (int)(S[i] >> 16));
      }
      for (int o = Gs / 2; o > 0; o /= 2) second = min(second, __shfl_xor_sync(FULL_MASK, second, o, Gs));
      valid = !(second != 0xffff && second * 100 < smin * (100 + uniqueness));
    }
    int off = 0;
    if (subpixel != sgm_math::kSubNone) {
      // the cell's Gs K halves in k order (a segment lies inside one warp)
      unsigned* cell = spx + ((int)threadIdx.x / Gs) * Gs * (K / 2);
#pragma unroll
      for (int i = 0; i < K / 2; i += 2) *(uint2*)(cell + lane * (K / 2) + i) = make_uint2(S[i], S[i + 1]);
      __syncwarp();
      const unsigned short* h = (const unsigned short*)cell;
      const int kp = best > 0 ? best - 1 : best, kn = best + 1 < D ? best + 1 : best;
      const int sp = h[kp], sn = h[kn];
      if (best > 0 && best + 1 < D) off = sgm_math::subpixel_offset(sp, smin, sn, subpixel);
      __syncwarp();  // read before the next cell's sums overwrite them
    }
    if (inside && lane == 0) left[(size_t)y * W + x] = valid ? (short)((dmin + best) * 16 + off) : (short)INVALID_Q;
    if (want_right && inside && lane < G) {
#pragma unroll
      for (int i = 0; i < K / 2; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int k = lane * K + 2 * i + h;
          const int xr = x - dmin - k;
          if (k < D && xr >= 0 && xr < W) atomicMin(&rkey[xr], ((h ? S[i] >> 16 : S[i] & 0xffffu) << 16) | (unsigned)k);
        }
      }
    }
  }
  if (want_right) {
    __syncthreads();
    for (int i = threadIdx.x; i < W; i += WTA_THREADS) {
      const unsigned key = rkey[i];
      right[(size_t)y * W + i] = key == 0xffffffffu ? (short)INVALID_Q : (short)((dmin + (int)(key & 0xffffu)) * 16);
    }
  }
}

#define SGM_WTA_ENTRY(NAME, K, STORE, UNROLL)                                                                    \
  extern "C" __global__ void __launch_bounds__(WTA_THREADS)                                                     \
      NAME(const STORE* __restrict__ vol, const int paths, const int W, const int H, const int dmin, const int D, \
           const int Dp, const int G, const int Gs, const int uniqueness, const int subpixel,                    \
           short* __restrict__ left, short* __restrict__ right) {                                               \
    wta_body<K, STORE, UNROLL>(vol, paths, W, H, dmin, D, Dp, G, Gs, uniqueness, subpixel, left, right);        \
  }

SGM_WTA_ENTRY(sgm_wta_k8_u8, 8, unsigned char, false)
SGM_WTA_ENTRY(sgm_wta_k16_u8, 16, unsigned char, false)
SGM_WTA_ENTRY(sgm_wta_k32_u8, 32, unsigned char, false)
SGM_WTA_ENTRY(sgm_wta_k8_u16, 8, unsigned short, false)
SGM_WTA_ENTRY(sgm_wta_k16_u16, 16, unsigned short, false)
SGM_WTA_ENTRY(sgm_wta_k32_u16, 32, unsigned short, false)
SGM_WTA_ENTRY(sgm_wta2_k8_u8, 8, unsigned char, true)
SGM_WTA_ENTRY(sgm_wta2_k16_u8, 16, unsigned char, true)
SGM_WTA_ENTRY(sgm_wta2_k32_u8, 32, unsigned char, true)
SGM_WTA_ENTRY(sgm_wta2_k8_u16, 8, unsigned short, true)
SGM_WTA_ENTRY(sgm_wta2_k16_u16, 16, unsigned short, true)
SGM_WTA_ENTRY(sgm_wta2_k32_u16, 32, unsigned short, true)
