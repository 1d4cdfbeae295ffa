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
// The right map's keys (S << 16 | k) by one PRMT each, with no range checks, where all of a lane's
// indices are real and their xr inside the row (H100, wta stage at the default
// setting: 64/4 0.257 -> 0.219 ms, 128/4 0.515 -> 0.439, 256/4 1.054 -> 1.020, 128/8 0.781 -> 0.747).
// sgm_wta3_* (8-bit volumes): the minimum and its smallest index from one minimum over 16-bit keys
// S << 5 | (index in the lane) (S < 2^11: at most 8 paths of values <= 255), then one butterfly
// over S << 10 | k. With 4 paths (sgm_wta2/3) the next cell's entries are loaded while this cell is
// reduced. With launch bounds (below) wta 3 was the fastest at every benchmarked setting on the
// H100 (default setting, wta 2 / 3: 128/4 0.408 / 0.399 ms, 128/8 0.799 / 0.732, 256/4 0.869 /
// 0.803, 256/8 1.637 / 1.453; 8 paths at 2.9 TB/s, the DRAM's pace), so the policy takes it.
// (Also tried: the uniqueness rival from the cell sums staged in shared memory with best - 1 ..
// best + 1 overwritten; never the fastest, taken out.)
#include "core/src/sgm/sgm_math.h"

#define WTA_THREADS 256
#define FULL_MASK 0xffffffffu
#define INVALID_Q (-32768)

#ifndef EVK_DYN_SMEM
#define EVK_DYN_SMEM(type, name) extern __shared__ type name[]
#endif

template <int K>
__device__ __forceinline__ void add_bytes(unsigned* S, const unsigned* w) {
#pragma unroll
  for (int i = 0; i < K / 4; ++i) {
    S[2 * i] += __byte_perm(w[i], 0u, 0x4140);
    S[2 * i + 1] += __byte_perm(w[i], 0u, 0x4342);
  }
}

// One cell's K entries of one path as raw words (16-byte loads; 8 bytes at K 8 on 8-bit volumes).
template <int K, class StoreT>
struct WtaRaw {
  static constexpr int kBytes = K * (int)sizeof(StoreT);
  uint4 v[(kBytes + 15) / 16];
};
template <int K, class StoreT>
__device__ __forceinline__ void load_raw(WtaRaw<K, StoreT>& r, const StoreT* __restrict__ src) {
  if (WtaRaw<K, StoreT>::kBytes == 8) {
    const uint2 t = __ldg((const uint2*)src);
    r.v[0] = make_uint4(t.x, t.y, 0u, 0u);
  } else {
#pragma unroll
    for (int i = 0; i < WtaRaw<K, StoreT>::kBytes / 16; ++i) r.v[i] = __ldg((const uint4*)src + i);
  }
}
__device__ __forceinline__ unsigned raw_word(const uint4& v, int c) {
  return c == 0 ? v.x : (c == 1 ? v.y : (c == 2 ? v.z : v.w));
}
// S (pairs of 16-bit sums, k order) += the entries. 16-bit volumes: a padded half may overflow its
// 16 bits; padding sits above the real indices, so the carry leaves the word and never reaches a
// real half. Padded halves are overwritten afterwards.
template <int K, class StoreT>
__device__ __forceinline__ void add_raw(unsigned* S, const WtaRaw<K, StoreT>& r) {
  if (sizeof(StoreT) == 1) {
    unsigned w[K / 4];
#pragma unroll
    for (int i = 0; i < K / 4; ++i) w[i] = raw_word(r.v[i / 4], i % 4);
    add_bytes<K>(S, w);
  } else {
#pragma unroll
    for (int i = 0; i < K / 2; ++i) S[i] += raw_word(r.v[i / 4], i % 4);
  }
}
template <int K, class StoreT>
__device__ __forceinline__ void add_line(unsigned* S, const StoreT* __restrict__ src) {
  WtaRaw<K, StoreT> r;
  load_raw<K, StoreT>(r, src);
  add_raw<K, StoreT>(S, r);
}

template <int K, class StoreT, int P>
__device__ __forceinline__ void add_paths(unsigned* S, const StoreT* __restrict__ src, const size_t plane) {
#pragma unroll
  for (int p = 0; p < P; ++p) add_line<K, StoreT>(S, src + p * plane);
}

// Uniqueness: false where the smallest S with |k - best| > 1 over the segment is within `uniqueness`
// percent of smin.
template <int K>
__device__ __forceinline__ bool wta_unique(const unsigned* S, const int lane, const int Gs, const int best, const int smin,
                                           const int uniqueness) {
  int second = 0xffff;
#pragma unroll
  for (int i = 0; i < K / 2; ++i) {
    const int k = lane * K + 2 * i;
    if (k < best - 1 || k > best + 1) second = min(second, (int)(S[i] & 0xffffu));
    if (k + 1 < best - 1 || k + 1 > best + 1) second = min(second, (int)(S[i] >> 16));
  }
  for (int o = Gs / 2; o > 0; o /= 2) second = min(second, __shfl_xor_sync(FULL_MASK, second, o, Gs));
  return !(second != 0xffff && second * 100 < smin * (100 + uniqueness));
}

// The right map's keys (S << 16 | k) of the lane's indices, by atomicMin into the row's table rkey.
template <int K>
__device__ __forceinline__ void wta_right_keys(const unsigned* S, unsigned* rkey, const int x, const int dmin, const int D,
                                               const int W, const int lane) {
  const int k0 = lane * K;
  const int xr0 = x - dmin - k0;  // xr of the lane's index j: xr0 - j
  if (k0 + K <= D && xr0 - (K - 1) >= 0 && xr0 < W) {
    // the lane's K indices all real and all inside: keys (S << 16 | k) by one PRMT each
    const unsigned kk0 = ((unsigned)(k0 + 1) << 16) | (unsigned)k0;
#pragma unroll
    for (int i = 0; i < K / 2; ++i) {
      const unsigned kk = kk0 + (unsigned)i * 0x20002u;
      atomicMin(rkey + sgm_math::wta_rkey_pos(xr0 - 2 * i), __byte_perm(S[i], kk, 0x1054));
      atomicMin(rkey + sgm_math::wta_rkey_pos(xr0 - 2 * i - 1), __byte_perm(S[i], kk, 0x3276));
    }
  } else {
#pragma unroll
    for (int i = 0; i < K / 2; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int k = k0 + 2 * i + h;
        const int xr = x - dmin - k;
        if (k < D && xr >= 0 && xr < W)
          atomicMin(&rkey[sgm_math::wta_rkey_pos(xr)], ((h ? S[i] >> 16 : S[i] & 0xffffu) << 16) | (unsigned)k);
      }
    }
  }
}

// The right map's table of the row (rkey, sgm_math::wta_rkey_words(W) words): every key "none", then
// the block's barrier.
__device__ __forceinline__ void wta_right_begin(unsigned* rkey, const int W) {
  for (int i = threadIdx.x; i < sgm_math::wta_rkey_words(W); i += WTA_THREADS) rkey[i] = 0xffffffffu;
  __syncthreads();
}

// After the row's cells: the right map's row y from the table (the smallest key's k, or invalid).
__device__ __forceinline__ void wta_right_end(const unsigned* rkey, short* __restrict__ right, const int y, const int W,
                                              const int dmin) {
  __syncthreads();
  for (int i = threadIdx.x; i < W; i += WTA_THREADS) {
    const unsigned key = rkey[sgm_math::wta_rkey_pos(i)];
    right[(size_t)y * W + i] = key == 0xffffffffu ? (short)INVALID_Q : (short)((dmin + (int)(key & 0xffffu)) * 16);
  }
}

// V: 0 the sgm_wta / sgm_wta2 logic; 1 (sgm_wta3) on 8-bit volumes the minimum and its index by keys.
template <int K, class StoreT, bool UNROLL, int V>
__device__ __forceinline__ void wta_body(const StoreT* __restrict__ vol, const int paths, const int W, const int H,
                                         const int dmin, const int D, const int Dp, const int G, const int Gs,
                                         const int uniqueness, const int subpixel, short* __restrict__ left,
                                         short* __restrict__ right, const int y0) {
  EVK_DYN_SMEM(unsigned, rkey);
  constexpr bool KEYS = V != 0 && sizeof(StoreT) == 1;
  unsigned* spx = rkey + (right != 0 ? sgm_math::wta_rkey_words(W) : 0);  // sub-pixel: the cells' sums
  const int y = blockIdx.x + y0;  // one block per row, from row y0
  const int lane = threadIdx.x % Gs;
  const int cells = WTA_THREADS / Gs;
  const bool want_right = right != 0;
  if (want_right) wta_right_begin(rkey, W);
  unsigned padm[K / 2];
#pragma unroll
  for (int i = 0; i < K / 2; ++i) {
    const int k = lane * K + 2 * i;
    padm[i] = (k >= D ? 0xffffu : 0u) | (k + 1 >= D ? 0xffff0000u : 0u);
  }
  const bool padded = Dp != D || G != Gs;
  const int data_lane = lane < G ? lane : G - 1;
  const size_t plane = (size_t)H * W * Dp;
  // 4 paths unrolled: the next cell's entries are loaded while this cell is reduced (8 paths: no,
  // those registers cost more occupancy than the overlap gains)
  const bool ahead = UNROLL && paths == 4;
  WtaRaw<K, StoreT> raw[4];
  if (ahead) {
    const int xf = min((int)threadIdx.x / Gs, W - 1);
    const StoreT* s0 = vol + ((size_t)y * W + xf) * Dp + data_lane * K;
#pragma unroll
    for (int p = 0; p < 4; ++p) load_raw<K, StoreT>(raw[p], s0 + p * plane);
  }
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
    } else if (ahead) {
#pragma unroll
      for (int p = 0; p < 4; ++p) add_raw<K, StoreT>(S, raw[p]);
      // the next cell of this lane (clamped: the last iteration reloads one it had)
      const StoreT* s1 = vol + ((size_t)y * W + min(xq + cells, W - 1)) * Dp + data_lane * K;
#pragma unroll
      for (int p = 0; p < 4; ++p) load_raw<K, StoreT>(raw[p], s1 + p * plane);
    } else {
      for (int p = 0; p < paths; ++p) add_line<K, StoreT>(S, src + p * plane);
    }
    int smin, best;
    if (KEYS) {
      // 8-bit volumes: S < 2^11 (at most 8 paths of values <= 255), so one min over 16-bit keys
      // S << 5 | (index in the lane) per half gives the minimum and its smallest index at once
      // (padding: keys 0xffff); then the lane's key as S << 10 | k (k < 1024), one butterfly
      unsigned mk = 0xffffffffu;
#pragma unroll
      for (int i = 0; i < K / 2; ++i) {
        unsigned key = S[i] * 32u + (unsigned)(((2 * i + 1) << 16) | (2 * i));
        if (padded) key |= padm[i];
        mk = __vminu2(mk, key);
      }
      const unsigned lk = min(mk & 0xffffu, mk >> 16);
      int gk = (int)((lk >> 5) << 10) + lane * K + (int)(lk & 31u);
      for (int o = Gs / 2; o > 0; o /= 2) gk = min(gk, __shfl_xor_sync(FULL_MASK, gk, o, Gs));
      smin = gk >> 10;
      best = gk & 1023;
      if (padded) {
#pragma unroll
        for (int i = 0; i < K / 2; ++i) S[i] |= padm[i];
      }
    } else {
      if (padded) {
#pragma unroll
        for (int i = 0; i < K / 2; ++i) S[i] |= padm[i];
      }
      // minimum, then its smallest index
      unsigned mn2 = S[0];
#pragma unroll
      for (int i = 1; i < K / 2; ++i) mn2 = __vminu2(mn2, S[i]);
      smin = min((int)(mn2 & 0xffffu), (int)(mn2 >> 16));
      for (int o = Gs / 2; o > 0; o /= 2) smin = min(smin, __shfl_xor_sync(FULL_MASK, smin, o, Gs));
      int local = 1 << 20;
#pragma unroll
      for (int i = K / 2 - 1; i >= 0; --i) {
        if ((int)(S[i] >> 16) == smin) local = 2 * i + 1;
        if ((int)(S[i] & 0xffffu) == smin) local = 2 * i;
      }
      best = lane * K + local;
      for (int o = Gs / 2; o > 0; o /= 2) best = min(best, __shfl_xor_sync(FULL_MASK, best, o, Gs));
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
      if (best > 0 && best + 1 < D) off = sgm_math::subpixel_offset32(sp, smin, sn, subpixel);
      __syncwarp();  // read before the next cell's sums overwrite them
    }
    // uniqueness: the smallest S with |k - best| > 1 (0xffff: none)
    bool valid = true;
    if (uniqueness > 0) valid = wta_unique<K>(S, lane, Gs, best, smin, uniqueness);
    if (inside && lane == 0) left[(size_t)y * W + x] = valid ? (short)((dmin + best) * 16 + off) : (short)INVALID_Q;
    if (want_right && inside && lane < G) wta_right_keys<K>(S, rkey, x, dmin, D, W, lane);
  }
  if (want_right) wta_right_end(rkey, right, y, W, dmin);
}

// Launch bounds: 8-bit volumes 4 blocks of 256 threads per SM (2 at K 32), 16-bit ones 3, 2 or 1 (K 8,
// 16, 32): without a minimum ptxas 13.0 gave sgm_wta3_k16_u8 48 registers and 28 bytes of spills
// once the next cell's loads were held ahead; with these none spills.
#define SGM_WTA_ENTRY(NAME, K, STORE, UNROLL, V)                                                                 \
  extern "C" __global__ void __launch_bounds__(WTA_THREADS, sizeof(STORE) == 1 ? ((K) >= 32 ? 2 : 4) : ((K) >= 32 ? 1 : ((K) >= 16 ? 2 : 3))) \
      NAME(const STORE* __restrict__ vol, const int paths, const int W, const int H, const int dmin, const int D, \
           const int Dp, const int G, const int Gs, const int uniqueness, const int subpixel,                    \
           short* __restrict__ left, short* __restrict__ right, const int y0) {                                 \
    wta_body<K, STORE, UNROLL, V>(vol, paths, W, H, dmin, D, Dp, G, Gs, uniqueness, subpixel, left, right, y0); \
  }

#define SGM_WTA_ENTRIES(PREFIX, UNROLL, V)                              \
  SGM_WTA_ENTRY(PREFIX##_k8_u8, 8, unsigned char, UNROLL, V)            \
  SGM_WTA_ENTRY(PREFIX##_k16_u8, 16, unsigned char, UNROLL, V)          \
  SGM_WTA_ENTRY(PREFIX##_k32_u8, 32, unsigned char, UNROLL, V)          \
  SGM_WTA_ENTRY(PREFIX##_k8_u16, 8, unsigned short, UNROLL, V)          \
  SGM_WTA_ENTRY(PREFIX##_k16_u16, 16, unsigned short, UNROLL, V)        \
  SGM_WTA_ENTRY(PREFIX##_k32_u16, 32, unsigned short, UNROLL, V)

SGM_WTA_ENTRIES(sgm_wta, false, 0)
SGM_WTA_ENTRIES(sgm_wta2, true, 0)
SGM_WTA_ENTRIES(sgm_wta3, true, 1)
