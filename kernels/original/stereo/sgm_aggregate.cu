// SGM path aggregation (semi-global matching, Hirschmueller 2008) for one or more directions r:
//   L_r(p, k) = C(p, k) + min(L_r(p-r, k), L_r(p-r, k-1) + P1, L_r(p-r, k+1) + P1, m + P2) - m,
//   m = min_k L_r(p-r, k); L_r(p, k) = C(p, k) where p - r is outside the image.
// Bit-identical to evk::stereo::aggregate_cpu (apps/stereo/core/src/sgm/aggregate.cpp), which sums
// the directions; here each direction writes its own volume out[dir][y][x][k] (k < Dp), summed by
// the winner-take-all stage.
//
// Work split: one line of cells per segment of Gs lanes (Gs a power of two, G <= Gs of them
// active), K consecutive disparities per lane held as K/2 pairs of signed 16-bit values, so the
// min-plus step runs on Hopper's DPX instructions (__vimin3_s16x2, __viaddmin_s16x2; CUDA emulates
// them on older GPUs). Lines: rows for horizontal directions; W lines of H steps otherwise, a
// diagonal line j visiting x = (j + dx s) mod W at step s and restarting where p - r leaves the
// image (every cell once per direction, every line the same length).
//
// Padding: disparity indices k >= D (up to Dp = G K, and all of an idle lane's) get cost BIG, so
// they never win a minimum and never feed a real neighbour (BIG > 2 (cost_max + P2)).
// Ranges (host-checked): cost_max + P2 <= 8191, P1 <= P2; every value stays below 2^15, and
// t + C - m never carries or borrows between the two halves of a pair.
//
// Self-contained (no includes): the GI engine compiles this text with NVRTC.
#define AGG_THREADS 128
#define BIG 0x4000u
#define BIG2 0x40004000u
#define FULL_MASK 0xffffffffu

template <int K>
__device__ __forceinline__ void census_costs(const unsigned* __restrict__ census_left,
                                             const unsigned* __restrict__ census_right, const int right_pitch,
                                             const int right_offset, const int W, const int x, const int y,
                                             const int dmin, const int lane, unsigned* cost) {
  const unsigned cl = __ldg(census_left + (size_t)y * W + x);
  // right census of x - d for d = dmin + lane K + j, j = 0..K-1: K consecutive codes ending at base
  const unsigned* base = census_right + (size_t)y * right_pitch + right_offset + x - dmin - lane * K;
  unsigned c[K];
#pragma unroll
  for (int j = 0; j < K; ++j) c[j] = __popc(cl ^ __ldg(base - j));
#pragma unroll
  for (int i = 0; i < K / 2; ++i) cost[i] = c[2 * i] | (c[2 * i + 1] << 16);
}

template <int K>
__device__ __forceinline__ void volume_costs(const unsigned char* __restrict__ volume, const int W, const int Dp,
                                             const int x, const int y, const int lane, unsigned* cost) {
  const unsigned* p = (const unsigned*)(volume + ((size_t)y * W + x) * Dp + lane * K);
  unsigned w[K / 4];
  if (K % 16 == 0) {
#pragma unroll
    for (int i = 0; i < K / 16; ++i) {
      const uint4 v = __ldg((const uint4*)p + i);
      w[4 * i] = v.x;
      w[4 * i + 1] = v.y;
      w[4 * i + 2] = v.z;
      w[4 * i + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < K / 8; ++i) {
      const uint2 v = __ldg((const uint2*)p + i);
      w[2 * i] = v.x;
      w[2 * i + 1] = v.y;
    }
  }
#pragma unroll
  for (int i = 0; i < K / 4; ++i) {
    cost[2 * i] = __byte_perm(w[i], 0u, 0x4140);      // bytes 0, 1 -> two 16-bit halves
    cost[2 * i + 1] = __byte_perm(w[i], 0u, 0x4342);  // bytes 2, 3
  }
}

template <int K, class StoreT>
__device__ __forceinline__ void store_line(StoreT* __restrict__ dst, const unsigned* v);

template <>
__device__ __forceinline__ void store_line<8, unsigned char>(unsigned char* __restrict__ dst, const unsigned* v) {
  *(uint2*)dst = make_uint2(__byte_perm(v[0], v[1], 0x6420), __byte_perm(v[2], v[3], 0x6420));
}
template <>
__device__ __forceinline__ void store_line<16, unsigned char>(unsigned char* __restrict__ dst, const unsigned* v) {
  *(uint4*)dst = make_uint4(__byte_perm(v[0], v[1], 0x6420), __byte_perm(v[2], v[3], 0x6420),
                            __byte_perm(v[4], v[5], 0x6420), __byte_perm(v[6], v[7], 0x6420));
}
template <>
__device__ __forceinline__ void store_line<32, unsigned char>(unsigned char* __restrict__ dst, const unsigned* v) {
#pragma unroll
  for (int i = 0; i < 2; ++i)
    ((uint4*)dst)[i] = make_uint4(__byte_perm(v[8 * i], v[8 * i + 1], 0x6420), __byte_perm(v[8 * i + 2], v[8 * i + 3], 0x6420),
                                  __byte_perm(v[8 * i + 4], v[8 * i + 5], 0x6420), __byte_perm(v[8 * i + 6], v[8 * i + 7], 0x6420));
}
template <>
__device__ __forceinline__ void store_line<8, unsigned short>(unsigned short* __restrict__ dst, const unsigned* v) {
  *(uint4*)dst = make_uint4(v[0], v[1], v[2], v[3]);
}
template <>
__device__ __forceinline__ void store_line<16, unsigned short>(unsigned short* __restrict__ dst, const unsigned* v) {
#pragma unroll
  for (int i = 0; i < 2; ++i) ((uint4*)dst)[i] = make_uint4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
}
template <>
__device__ __forceinline__ void store_line<32, unsigned short>(unsigned short* __restrict__ dst, const unsigned* v) {
#pragma unroll
  for (int i = 0; i < 4; ++i) ((uint4*)dst)[i] = make_uint4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
}

// Position of entry i of a staged right-census row in shared memory: 5 words of padding per 32
// keep the lanes' reads at most 2-way bank conflicted for every lane width and K.
__device__ __forceinline__ int staged_pos(const int i) { return i + 5 * (i >> 5); }

// MODE: COSTS_DIRECT  census, each lane loads its K right codes (L1/L2)
//       COSTS_STAGED  census; vertical and diagonal lines: the block stages the right-census row
//                     segment in shared memory (double-buffered, one barrier per step); horizontal
//                     lines: a sliding window in registers, one new code per segment and step
//       COSTS_VOLUME  a stored cost volume [y][x][k < Dp] (sad, ssd)
#define COSTS_DIRECT 0
#define COSTS_STAGED 1
#define COSTS_VOLUME 2

template <int K, class StoreT, int MODE>
__device__ __forceinline__ void aggregate_body(const unsigned* __restrict__ census_left,
                                               const unsigned* __restrict__ census_right, const int right_pitch,
                                               const int right_offset, const unsigned char* __restrict__ volume,
                                               StoreT* __restrict__ out, const int W, const int H, const int dmin,
                                               const int D, const int Dp, const int G, const int Gs, const int P1,
                                               const int P2, const int dir0, unsigned* __restrict__ staged) {
  const int dir = dir0 + blockIdx.y;
  const int dx = (dir == 0 || dir == 4 || dir == 6) ? 1 : ((dir == 1 || dir == 5 || dir == 7) ? -1 : 0);
  const int dy = (dir == 2 || dir == 4 || dir == 5) ? 1 : ((dir == 3 || dir == 6 || dir == 7) ? -1 : 0);
  const int lines_per_block = AGG_THREADS / Gs;
  const int nlines = dy == 0 ? H : W, steps = dy == 0 ? W : H;
  const int line0 = blockIdx.x * lines_per_block;
  if (line0 >= nlines) return;  // the whole block is beyond this direction's lines
  const int lane = threadIdx.x % Gs;
  const int t_req = threadIdx.x / Gs;
  const bool store = line0 + t_req < nlines && lane < G;
  const int tl = line0 + t_req < nlines ? t_req : nlines - 1 - line0;  // surplus segments shadow the last line
  const int line = line0 + tl;
  const int cost_lane = lane < G ? lane : G - 1;  // idle lanes read in-range addresses
  StoreT* const vol = out + (size_t)blockIdx.y * H * W * Dp;

  unsigned padc[K / 2];
#pragma unroll
  for (int i = 0; i < K / 2; ++i) {
    const int k = lane * K + 2 * i;
    padc[i] = (k >= D ? BIG : 0u) | (k + 1 >= D ? (BIG << 16) : 0u);
  }
  const bool padded = Dp != D || G != Gs;
  const unsigned p1x2 = (unsigned)P1 * 0x10001u;
  // staged mode: row segment of Dp + lines_per_block - 1 codes, twice (A: as is, B: shifted by W
  // for diagonal lines that wrapped around the right edge), double-buffered
  const int seg = Dp + lines_per_block - 1;
  const int seg_pos = staged_pos(seg - 1) + 1;
  unsigned win[K];  // staged horizontal lines: right codes of x - dmin - lane K - j

  unsigned L[K / 2];
  int m = 0;
  int x = dy == 0 ? (dx > 0 ? 0 : W - 1) : line;
  int y = dy == 0 ? line : (dy > 0 ? 0 : H - 1);
  for (int s = 0; s < steps; ++s) {
    const bool fresh = s == 0 || (dy != 0 && dx != 0 && (x - dx < 0 || x - dx >= W));
    if (fresh) {
#pragma unroll
      for (int i = 0; i < K / 2; ++i) L[i] = padc[i];
      m = 0;
    }
    unsigned cost[K / 2];
    if (MODE == COSTS_DIRECT) {
      census_costs<K>(census_left, census_right, right_pitch, right_offset, W, x, y, dmin, cost_lane, cost);
    } else if (MODE == COSTS_VOLUME) {
      volume_costs<K>(volume, W, Dp, x, y, cost_lane, cost);
    } else if (dy != 0) {
      // the block's lines sit at x = base + t (mod W) on row y
      int base = line0;
      if (dx != 0) {
        base = (line0 + dx * (s % W)) % W;
        if (base < 0) base += W;
      }
      unsigned* const a = staged + (s & 1) * 2 * seg_pos;
      unsigned* const b = a + seg_pos;
      const unsigned* const row = census_right + (size_t)y * right_pitch + right_offset;
      const int col0 = base - dmin - Dp + 1;
      for (int i = threadIdx.x; i < seg; i += AGG_THREADS) {
        const int c = col0 + i;
        a[staged_pos(i)] = (c >= -right_offset && c < right_pitch - right_offset) ? __ldg(row + c) : 0u;
      }
      if (base + lines_per_block > W) {  // some line of the block wrapped: columns - W
        for (int i = threadIdx.x; i < seg; i += AGG_THREADS) {
          const int c = col0 + i - W;
          b[staged_pos(i)] = (c >= -right_offset && c < right_pitch - right_offset) ? __ldg(row + c) : 0u;
        }
      }
      __syncthreads();
      const unsigned* const src = base + tl >= W ? b : a;
      const unsigned cl = __ldg(census_left + (size_t)y * W + x);
      const int i0 = Dp - 1 + tl - cost_lane * K;
      unsigned c[K];
#pragma unroll
      for (int j = 0; j < K; ++j) c[j] = __popc(cl ^ src[staged_pos(i0 - j)]);
#pragma unroll
      for (int i = 0; i < K / 2; ++i) cost[i] = c[2 * i] | (c[2 * i + 1] << 16);
    } else {
      // horizontal line: slide the window one column
      const unsigned* const row = census_right + (size_t)y * right_pitch + right_offset;
      if (s == 0) {
#pragma unroll
        for (int j = 0; j < K; ++j) win[j] = __ldg(row + x - dmin - cost_lane * K - j);
      } else if (dx > 0) {
        unsigned in = __shfl_up_sync(FULL_MASK, win[K - 1], 1, Gs);
        if (lane == 0) in = __ldg(row + x - dmin);
#pragma unroll
        for (int j = K - 1; j > 0; --j) win[j] = win[j - 1];
        win[0] = in;
      } else {
        unsigned in = __shfl_down_sync(FULL_MASK, win[0], 1, Gs);
        if (lane == G - 1) in = __ldg(row + x - dmin - Dp + 1);
#pragma unroll
        for (int j = 0; j < K - 1; ++j) win[j] = win[j + 1];
        win[K - 1] = in;
      }
      const unsigned cl = __ldg(census_left + (size_t)y * W + x);
      unsigned c[K];
#pragma unroll
      for (int j = 0; j < K; ++j) c[j] = __popc(cl ^ win[j]);
#pragma unroll
      for (int i = 0; i < K / 2; ++i) cost[i] = c[2 * i] | (c[2 * i + 1] << 16);
    }
    if (padded) {
#pragma unroll
      for (int i = 0; i < K / 2; ++i) cost[i] += padc[i];
    }
    // L(k - 1) of the first pair and L(k + 1) of the last come from the neighbouring lanes.
    unsigned up = __shfl_up_sync(FULL_MASK, L[K / 2 - 1], 1, Gs);
    unsigned dn = __shfl_down_sync(FULL_MASK, L[0], 1, Gs);
    if (lane == 0) up = BIG2;
    if (lane == Gs - 1) dn = BIG2;
    const unsigned thr = (unsigned)(m + P2 - P1) * 0x10001u;
    const unsigned mm = (unsigned)m * 0x10001u;
    unsigned n[K / 2];
#pragma unroll
    for (int i = 0; i < K / 2; ++i) {
      const unsigned lo = __byte_perm(i == 0 ? up : L[i - 1], L[i], 0x5432);          // L(k - 1)
      const unsigned hi = __byte_perm(L[i], i == K / 2 - 1 ? dn : L[i + 1], 0x5432);  // L(k + 1)
      const unsigned u = __vimin3_s16x2(lo, hi, thr);      // min(L(k-1), L(k+1), m + P2 - P1)
      const unsigned t = __viaddmin_s16x2(u, p1x2, L[i]);  // min(L(k), that + P1)
      n[i] = t + cost[i] - mm;                             // per half: C + t - m (no carries)
    }
    unsigned mn = n[0];
#pragma unroll
    for (int i = 1; i < K / 2; ++i) mn = __vmins2(mn, n[i]);
    int mi = min((int)(mn & 0xffffu), (int)(mn >> 16));
    for (int o = Gs / 2; o > 0; o /= 2) mi = min(mi, __shfl_xor_sync(FULL_MASK, mi, o, Gs));
    if (store) store_line<K, StoreT>(vol + ((size_t)y * W + x) * Dp + lane * K, n);
#pragma unroll
    for (int i = 0; i < K / 2; ++i) L[i] = n[i];
    m = mi;
    // next cell of the line
    if (dy == 0) {
      x += dx;
    } else {
      y += dy;
      if (dx != 0) {
        x += dx;
        x = x < 0 ? x + W : (x >= W ? x - W : x);
      }
    }
  }
}

#ifndef EVK_DYN_SMEM
#define EVK_DYN_SMEM(type, name) extern __shared__ type name[]
#endif

// K <= 16: at most 80 registers (6 blocks of 128 threads per SM), measured spill-free with ptxas.
#define SGM_AGGREGATE_ENTRY(NAME, K, STORE, MODE)                                                                   \
  extern "C" __global__ void __launch_bounds__(AGG_THREADS, (K) <= 16 ? 6 : 1)                                     \
      NAME(const unsigned* __restrict__ census_left, const unsigned* __restrict__ census_right, const int right_pitch, \
           const int right_offset, const unsigned char* __restrict__ volume, STORE* __restrict__ out, const int W,  \
           const int H, const int dmin, const int D, const int Dp, const int G, const int Gs, const int P1,          \
           const int P2, const int dir0) {                                                                          \
    EVK_DYN_SMEM(unsigned, staged);                                                                                \
    aggregate_body<K, STORE, MODE>(census_left, census_right, right_pitch, right_offset, volume, out, W, H, dmin,  \
                                   D, Dp, G, Gs, P1, P2, dir0, staged);                                            \
  }

// census costs loaded directly (L1), or staged (shared memory / register window); stored volumes
SGM_AGGREGATE_ENTRY(sgm_aggregate_k8_u8_census, 8, unsigned char, COSTS_DIRECT)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k16_u8_census, 16, unsigned char, COSTS_DIRECT)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k32_u8_census, 32, unsigned char, COSTS_DIRECT)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k8_u16_census, 8, unsigned short, COSTS_DIRECT)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k16_u16_census, 16, unsigned short, COSTS_DIRECT)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k32_u16_census, 32, unsigned short, COSTS_DIRECT)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k8_u8_staged, 8, unsigned char, COSTS_STAGED)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k16_u8_staged, 16, unsigned char, COSTS_STAGED)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k32_u8_staged, 32, unsigned char, COSTS_STAGED)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k8_u16_staged, 8, unsigned short, COSTS_STAGED)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k16_u16_staged, 16, unsigned short, COSTS_STAGED)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k32_u16_staged, 32, unsigned short, COSTS_STAGED)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k8_u8_volume, 8, unsigned char, COSTS_VOLUME)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k16_u8_volume, 16, unsigned char, COSTS_VOLUME)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k32_u8_volume, 32, unsigned char, COSTS_VOLUME)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k8_u16_volume, 8, unsigned short, COSTS_VOLUME)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k16_u16_volume, 16, unsigned short, COSTS_VOLUME)
SGM_AGGREGATE_ENTRY(sgm_aggregate_k32_u16_volume, 32, unsigned short, COSTS_VOLUME)
