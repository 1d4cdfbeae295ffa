// SGM path aggregation, second kernel (support kernel; the evolvable seed stays
// kernels/original/stereo/sgm_aggregate.cu, selectable beside this one: SgmTuning::agg, bench_stereo_sgm --sgm-agg).
// Same recurrence, same work split, same output as the seed, bit for bit:
//   L_r(p, k) = C(p, k) + min(L_r(p-r, k), L_r(p-r, k±1) + P1, m + P2) - m, m = min_k L_r(p-r, k),
// one volume out[dir][y][x][k < Dp] per direction (8-bit when cost_max + P2 <= 255, else 16-bit),
// census costs popcount(cL(x) ^ cR(x - d)) computed on the fly. What differs is how the work is
// issued (the seed's direct loads spend most of a step on L1 wavefronts: K scalar loads per lane
// and step, each touching ~5 cache lines per warp for vertical lines and ~16 for horizontal ones):
//   - the direction is a template parameter (one launch still runs every direction, blockIdx.y);
//   - vertical and diagonal lines: the block's right-census row segment is prefetched one step
//     ahead into registers, stored into shared memory in four phase copies (sgm_agg2.h) after the
//     step, one barrier per step; each lane then reads its K codes as K/4 aligned 16-byte loads
//     (conflict-free by the chunk skew) instead of K scalar global loads. Lanes of a diagonal
//     line that wrapped around the right edge (one block per step) read directly;
//   - horizontal lines: a sliding register window, one shuffle and one prefetched load per step;
//   - the K disparities of a lane are held as pairs (k, k + K/2) instead of (k, k + 1), so the
//     neighbours k - 1 and k + 1 of pair i are pairs i - 1 and i + 1 (no byte permutes except at
//     the two ends); the store regroups the halves into disparity order;
//   - the line minimum by three-input DPX minima (__vimin3_s16x2);
//   - the path volumes written with streaming (evict-first) stores, so the census rows every block
//     re-reads at every step stay in L2 while gigabytes of path costs pass through it.
// Values, padding (BIG for k >= D and idle lanes) and ranges are the seed's (see its header):
// every value stays below 2^15 and t + C - m never carries between the halves of a pair.
//
// Entries sgm_aggregate2_k<K>_<u8|u16>, the seed's signature (the stored-volume argument unused:
// census costs only). Launch: grid (ceil(max(W, H) / (128 / Gs)), number of directions), 128
// threads, sgm_agg2::staged_bytes(Dp, Gs, K) bytes of dynamic shared memory.
#include "core/src/sgm/sgm_agg2.h"

#define A2_BIG 0x4000u
#define A2_BIG2 0x40004000u
#define A2_FULL 0xffffffffu

#ifndef EVK_DYN_SMEM
#define EVK_DYN_SMEM(type, name) extern __shared__ type name[]
#endif

// Costs of one cell: pair i = (k = lane K + i, k + K/2) of the lane, code[j] = right code of
// disparity index lane K + j.
template <int K>
__device__ __forceinline__ void a2_costs(const unsigned cl, const unsigned* code, unsigned* cost) {
#pragma unroll
  for (int i = 0; i < K / 2; ++i)
    cost[i] = (unsigned)__popc(cl ^ code[i]) | ((unsigned)__popc(cl ^ code[i + K / 2]) << 16);
}

// One step of the recurrence: L (previous cell's path costs, pairs (k, k + K/2)) becomes this
// cell's; returns this cell's line minimum (all lanes of the segment).
template <int K>
__device__ __forceinline__ int a2_step(unsigned* L, const unsigned* cost, const int m, const unsigned p1x2, const int P1,
                                       const int P2, const int lane, const int Gs) {
  constexpr int NP = K / 2;
  unsigned up = __shfl_up_sync(A2_FULL, L[NP - 1], 1, Gs);  // previous lane: its k = lane K - 1 in the high half
  unsigned dn = __shfl_down_sync(A2_FULL, L[0], 1, Gs);     // next lane: its k = lane K + K in the low half
  if (lane == 0) up = A2_BIG2;
  if (lane == Gs - 1) dn = A2_BIG2;
  const unsigned thr = (unsigned)(m + P2 - P1) * 0x10001u;
  const unsigned mm = (unsigned)m * 0x10001u;
  unsigned n[NP];
#pragma unroll
  for (int i = 0; i < NP; ++i) {
    // L(k - 1): pair i - 1, or for pair 0 (k = lane K, lane K + K/2) the previous lane's last k and
    // this lane's k = lane K + K/2 - 1 (low half of pair NP - 1)
    const unsigned lo = i == 0 ? __byte_perm(up, L[NP - 1], 0x5432) : L[i - 1];
    // L(k + 1): pair i + 1, or for pair NP - 1 this lane's k = lane K + K/2 (high half of pair 0)
    // and the next lane's first k
    const unsigned hi = i == NP - 1 ? __byte_perm(L[0], dn, 0x5432) : L[i + 1];
    const unsigned u = __vimin3_s16x2(lo, hi, thr);  // min(L(k-1), L(k+1), m + P2 - P1)
    const unsigned t = __viaddmin_s16x2(u, p1x2, L[i]);  // min(L(k), that + P1)
    n[i] = t + cost[i] - mm;                        // per half C + t - m, no carries
  }
  unsigned a = n[0];
  int i = 1;
#pragma unroll
  for (; i + 1 < NP; i += 2) a = __vimin3_s16x2(a, n[i], n[i + 1]);
  if (i < NP) a = __vmins2(a, n[i]);
  int mi = min((int)(a & 0xffffu), (int)(a >> 16));
  for (int o = Gs / 2; o > 0; o /= 2) mi = min(mi, __shfl_xor_sync(A2_FULL, mi, o, Gs));
#pragma unroll
  for (int j = 0; j < NP; ++j) L[j] = n[j];
  return mi;
}

// Stores the lane's K values in disparity order. Streaming stores (evict-first): the path volumes
// (GBs) are read again only by the wta, long after, while the census codes (~17 MB at 1080p) are
// re-read by every block at every step and should stay in L2.
template <int K>
__device__ __forceinline__ void a2_store(unsigned char* __restrict__ dst, const unsigned* n) {
  constexpr int NP = K / 2, NG = NP / 4;
  unsigned w[K / 4];
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    const unsigned a = __byte_perm(n[4 * g], n[4 * g + 1], 0x6240);      // lo i, lo i+1, hi i, hi i+1 (low bytes)
    const unsigned b = __byte_perm(n[4 * g + 2], n[4 * g + 3], 0x6240);  // the same for i+2, i+3
    w[g] = __byte_perm(a, b, 0x5410);                                    // k = 4g .. 4g+3
    w[NG + g] = __byte_perm(a, b, 0x7632);                               // k = K/2 + 4g ..
  }
  if (K == 8) {
    __stcs((uint2*)dst, make_uint2(w[0], w[1]));
  } else {
#pragma unroll
    for (int v = 0; v < K / 16; ++v) __stcs((uint4*)dst + v, make_uint4(w[4 * v], w[4 * v + 1], w[4 * v + 2], w[4 * v + 3]));
  }
}
template <int K>
__device__ __forceinline__ void a2_store(unsigned short* __restrict__ dst, const unsigned* n) {
  constexpr int NP = K / 2;
  unsigned w[NP];
#pragma unroll
  for (int h = 0; h < NP / 2; ++h) {
    w[h] = __byte_perm(n[2 * h], n[2 * h + 1], 0x5410);           // k = 2h, 2h + 1
    w[NP / 2 + h] = __byte_perm(n[2 * h], n[2 * h + 1], 0x7632);  // k = K/2 + 2h, + 1
  }
#pragma unroll
  for (int v = 0; v < K / 8; ++v) __stcs((uint4*)dst + v, make_uint4(w[4 * v], w[4 * v + 1], w[4 * v + 2], w[4 * v + 3]));
}

// The padding of the lane's pairs: BIG in each half whose k >= D.
template <int K>
__device__ __forceinline__ void a2_padding(const int lane, const int D, unsigned* padc) {
  constexpr int NP = K / 2;
#pragma unroll
  for (int i = 0; i < NP; ++i) {
    const int k = lane * K + i;
    padc[i] = (k >= D ? A2_BIG : 0u) | (k + NP >= D ? (A2_BIG << 16) : 0u);
  }
}

// Horizontal lines: the lane's window of right codes one step on in direction DX, the entering code
// from the neighbouring lane, or in_next for the loader lane.
template <int K, int DX>
__device__ __forceinline__ void a2_shift(unsigned* code, const unsigned in_next, const bool loader, const int Gs) {
  if (DX > 0) {
    unsigned in = __shfl_up_sync(A2_FULL, code[K - 1], 1, Gs);
    if (loader) in = in_next;
#pragma unroll
    for (int j = K - 1; j > 0; --j) code[j] = code[j - 1];
    code[0] = in;
  } else {
    unsigned in = __shfl_down_sync(A2_FULL, code[0], 1, Gs);
    if (loader) in = in_next;
#pragma unroll
    for (int j = 0; j < K - 1; ++j) code[j] = code[j + 1];
    code[K - 1] = in;
  }
}

// Vertical and diagonal lines: the block's right-census segment of row yy whose lines sit at b, b + 1,
// .. (RMAX words a thread, 0 outside the row) into pre, the prefetch registers.
template <int RMAX>
__device__ __forceinline__ void a2_fetch(unsigned* pre, const unsigned* __restrict__ census_right, const int right_pitch,
                                         const int right_offset, const int yy, const int b, const int dmin, const int Dp,
                                         const int seg) {
  const unsigned* row = census_right + (size_t)yy * right_pitch + right_offset;
  const int col0 = b - dmin - Dp + 1;
#pragma unroll
  for (int r = 0; r < RMAX; ++r) {
    const int i = (int)threadIdx.x + r * sgm_agg2::kThreads;
    const int cc = col0 + i;
    pre[r] = (i < seg && cc >= -right_offset && cc < right_pitch - right_offset) ? __ldg(row + cc) : 0u;
  }
}

// Vertical and diagonal lines: the prefetched segment into the four phase copies at buf (sgm_agg2.h).
template <int K, int RMAX>
__device__ __forceinline__ void a2_put(unsigned* buf, const unsigned* pre, const int seg, const int cw) {
#pragma unroll
  for (int r = 0; r < RMAX; ++r) {
    const int i = (int)threadIdx.x + r * sgm_agg2::kThreads;
    if (i < seg) {
#pragma unroll
      for (int p = 0; p < 4; ++p) {
        const int q = i - p + 4;
        buf[p * cw + sgm_agg2::chunk_pos(q >> 2, K) + (q & 3)] = pre[r];
      }
    }
  }
}

// Vertical and diagonal lines: the lane's K right codes of step s from the staged copy of phase ph
// (K/4 aligned 16-byte loads), or for a lane whose line wrapped around the right edge directly from
// the census row y.
template <int K>
__device__ __forceinline__ void a2_staged_codes(unsigned* code, const bool wrapped, const unsigned* smem, const int s,
                                                const int cw, const int ph, const int c0,
                                                const unsigned* __restrict__ census_right, const int right_pitch,
                                                const int right_offset, const int y, const int x, const int dmin,
                                                const int cost_lane) {
  if (!wrapped) {
    const unsigned* b = smem + (s & 1) * 4 * cw + ph * cw;
#pragma unroll
    for (int c = 0; c < K / 4; ++c) {
      const uint4 v = *(const uint4*)(b + sgm_agg2::chunk_pos(c0 + c, K));
      // elements e + 4c .. e + 4c + 3 = disparity indices lane K + K - 1 - 4c .. - 3
      code[K - 1 - 4 * c] = v.x;
      code[K - 2 - 4 * c] = v.y;
      code[K - 3 - 4 * c] = v.z;
      code[K - 4 - 4 * c] = v.w;
    }
  } else {
    const unsigned* row = census_right + (size_t)y * right_pitch + right_offset;
#pragma unroll
    for (int j = 0; j < K; ++j) code[j] = __ldg(row + x - dmin - cost_lane * K - j);
  }
}

template <int K, class StoreT, int DX, int DY>
__device__ __forceinline__ void a2_direction(const unsigned* __restrict__ census_left,
                                             const unsigned* __restrict__ census_right, const int right_pitch,
                                             const int right_offset, StoreT* __restrict__ vol, const int W,
                                             const int H, const int dmin, const int D, const int Dp, const int G,
                                             const int Gs, const int P1, const int P2, unsigned* smem) {
  constexpr int NP = K / 2;
  unsigned L[NP], cost[NP], code[K];  // the lane's path costs, costs and right codes of a cell
  int m = 0;
  const int lines = sgm_agg2::kThreads / Gs;
  const int nlines = DY == 0 ? H : W;
  const int steps = DY == 0 ? W : H;
  const int line0 = (int)blockIdx.x * lines;
  if (line0 >= nlines) return;  // the whole block: before any barrier
  const int lane = (int)threadIdx.x % Gs;
  const int t_req = (int)threadIdx.x / Gs;
  const bool store = line0 + t_req < nlines && lane < G;
  const int tl = line0 + t_req < nlines ? t_req : nlines - 1 - line0;  // surplus segments shadow the last line
  const int line = line0 + tl;
  const int cost_lane = lane < G ? lane : G - 1;  // idle lanes read in-range addresses
  unsigned padc[NP];
  a2_padding<K>(lane, D, padc);
  const bool padded = Dp != D || G != Gs;
  const unsigned p1x2 = (unsigned)P1 * 0x10001u;
  if (DY == 0) {
    // ---- horizontal lines: a sliding window of right codes ----
    const int y = line;
    int x = DX > 0 ? 0 : W - 1;
    const unsigned* row = census_right + (size_t)y * right_pitch + right_offset;
    const unsigned* lrow = census_left + (size_t)y * W;
    StoreT* dst = vol + ((size_t)y * W + x) * Dp + lane * K;
#pragma unroll
    for (int j = 0; j < K; ++j) code[j] = __ldg(row + x - dmin - cost_lane * K - j);
    unsigned cl = __ldg(lrow + x);
    // the lane that loads the entering code: the first for ->, the last active one for <-
    const bool loader = DX > 0 ? lane == 0 : lane == G - 1;
    for (int s = 0; s < steps; ++s) {
      const bool more = s + 1 < steps;
      unsigned cl_next = 0u, in_next = 0u;
      if (more) {  // step s + 1's left code and entering right code, in flight during this step
        cl_next = __ldg(lrow + x + DX);
        if (loader) in_next = __ldg(row + x + DX - dmin - (DX > 0 ? 0 : Dp - 1));
      }
      if (s == 0) {
#pragma unroll
        for (int i = 0; i < NP; ++i) L[i] = padc[i];
        m = 0;
      }
      a2_costs<K>(cl, code, cost);
      if (padded) {
#pragma unroll
        for (int i = 0; i < NP; ++i) cost[i] += padc[i];
      }
      m = a2_step<K>(L, cost, m, p1x2, P1, P2, lane, Gs);
      if (store) a2_store<K>(dst, L);
      if (more) {
        a2_shift<K, DX>(code, in_next, loader, Gs);
        cl = cl_next;
        x += DX;
        dst += DX > 0 ? Dp : -Dp;
      }
    }
  } else {
    // ---- vertical and diagonal lines: the row segment staged in shared memory ----
    constexpr int RMAX = (32 * K + sgm_agg2::kThreads - 1 + sgm_agg2::kThreads - 1) / sgm_agg2::kThreads;
    const int seg = sgm_agg2::segment(Dp, Gs);
    const int cw = sgm_agg2::copy_words(seg, K);
    const int e = Dp - K + tl - cost_lane * K;  // segment element of this lane's k = lane K + K - 1
    const int ph = e & 3;
    const int c0 = (e - ph + 4) >> 2;
    // segment base: the block's lines sit at x = base + t (mod W) on the step's row
    int base = line0;
    unsigned pre[RMAX];
    int y = DY > 0 ? 0 : H - 1;
    a2_fetch<RMAX>(pre, census_right, right_pitch, right_offset, y, base, dmin, Dp, seg);
    a2_put<K, RMAX>(smem, pre, seg, cw);
    bool wrapped = DX != 0 && base + tl >= W;
    int x = wrapped ? base + tl - W : base + tl;
    unsigned cl = __ldg(census_left + (size_t)y * W + x);
    __syncthreads();
    for (int s = 0; s < steps; ++s) {
      const bool more = s + 1 < steps;
      int next_base = base;
      if (DX != 0) {
        next_base += DX;
        if (next_base < 0) next_base += W;
        if (next_base >= W) next_base -= W;
      }
      const bool next_wrapped = DX != 0 && next_base + tl >= W;
      const int next_x = next_wrapped ? next_base + tl - W : next_base + tl;
      unsigned cl_next = 0u;
      if (more) {  // step s + 1's segment and left code, in flight during this step
        a2_fetch<RMAX>(pre, census_right, right_pitch, right_offset, y + DY, next_base, dmin, Dp, seg);
        cl_next = __ldg(census_left + (size_t)(y + DY) * W + next_x);
      }
      a2_staged_codes<K>(code, wrapped, smem, s, cw, ph, c0, census_right, right_pitch, right_offset, y, x, dmin,
                         cost_lane);
      const bool fresh = s == 0 || (DX > 0 && x == 0) || (DX < 0 && x == W - 1);
      if (fresh) {
#pragma unroll
        for (int i = 0; i < NP; ++i) L[i] = padc[i];
        m = 0;
      }
      a2_costs<K>(cl, code, cost);
      if (padded) {
#pragma unroll
        for (int i = 0; i < NP; ++i) cost[i] += padc[i];
      }
      m = a2_step<K>(L, cost, m, p1x2, P1, P2, lane, Gs);
      if (store) a2_store<K>(vol + ((size_t)y * W + x) * Dp + lane * K, L);
      if (more) a2_put<K, RMAX>(smem + ((s + 1) & 1) * 4 * cw, pre, seg, cw);
      __syncthreads();  // every thread runs every step: block-uniform
      base = next_base;
      wrapped = next_wrapped;
      x = next_x;
      cl = cl_next;
      y += DY;
    }
  }
}

template <int K, class StoreT>
__device__ __forceinline__ void a2_body(const unsigned* __restrict__ census_left,
                                        const unsigned* __restrict__ census_right, const int right_pitch,
                                        const int right_offset, StoreT* __restrict__ out, const int W, const int H,
                                        const int dmin, const int D, const int Dp, const int G, const int Gs,
                                        const int P1, const int P2, const int dir0, unsigned* smem) {
  StoreT* vol = out + (size_t)blockIdx.y * H * W * Dp;
  switch (dir0 + (int)blockIdx.y) {
    case 0: a2_direction<K, StoreT, 1, 0>(census_left, census_right, right_pitch, right_offset, vol, W, H, dmin, D, Dp, G, Gs, P1, P2, smem); break;
    case 1: a2_direction<K, StoreT, -1, 0>(census_left, census_right, right_pitch, right_offset, vol, W, H, dmin, D, Dp, G, Gs, P1, P2, smem); break;
    case 2: a2_direction<K, StoreT, 0, 1>(census_left, census_right, right_pitch, right_offset, vol, W, H, dmin, D, Dp, G, Gs, P1, P2, smem); break;
    case 3: a2_direction<K, StoreT, 0, -1>(census_left, census_right, right_pitch, right_offset, vol, W, H, dmin, D, Dp, G, Gs, P1, P2, smem); break;
    case 4: a2_direction<K, StoreT, 1, 1>(census_left, census_right, right_pitch, right_offset, vol, W, H, dmin, D, Dp, G, Gs, P1, P2, smem); break;
    case 5: a2_direction<K, StoreT, -1, 1>(census_left, census_right, right_pitch, right_offset, vol, W, H, dmin, D, Dp, G, Gs, P1, P2, smem); break;
    case 6: a2_direction<K, StoreT, 1, -1>(census_left, census_right, right_pitch, right_offset, vol, W, H, dmin, D, Dp, G, Gs, P1, P2, smem); break;
    default: a2_direction<K, StoreT, -1, -1>(census_left, census_right, right_pitch, right_offset, vol, W, H, dmin, D, Dp, G, Gs, P1, P2, smem); break;
  }
}

// K <= 16: at most 80 registers (6 blocks of 128 threads per SM); K 32: 128 (4 blocks).
#define SGM_AGG2_ENTRY(NAME, K, STORE, MINB)                                                                      \
  extern "C" __global__ void __launch_bounds__(sgm_agg2::kThreads, MINB)                                         \
      NAME(const unsigned* __restrict__ census_left, const unsigned* __restrict__ census_right,                 \
           const int right_pitch, const int right_offset, const unsigned char* __restrict__ volume,              \
           STORE* __restrict__ out, const int W, const int H, const int dmin, const int D, const int Dp,         \
           const int G, const int Gs, const int P1, const int P2, const int dir0) {                              \
    EVK_DYN_SMEM(uint4, a2_smem4);                                                                               \
    (void)volume;                                                                                                \
    a2_body<K, STORE>(census_left, census_right, right_pitch, right_offset, out, W, H, dmin, D, Dp, G, Gs, P1,  \
                      P2, dir0, (unsigned*)a2_smem4);                                                            \
  }

SGM_AGG2_ENTRY(sgm_aggregate2_k8_u8, 8, unsigned char, 6)
SGM_AGG2_ENTRY(sgm_aggregate2_k16_u8, 16, unsigned char, 6)
SGM_AGG2_ENTRY(sgm_aggregate2_k32_u8, 32, unsigned char, 4)
SGM_AGG2_ENTRY(sgm_aggregate2_k8_u16, 8, unsigned short, 6)
SGM_AGG2_ENTRY(sgm_aggregate2_k16_u16, 16, unsigned short, 6)
SGM_AGG2_ENTRY(sgm_aggregate2_k32_u16, 32, unsigned short, 4)
