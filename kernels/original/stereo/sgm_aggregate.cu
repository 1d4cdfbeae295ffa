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
// Configuration (-D options; the fatbin holds every combination, aggregate_variants.cu):
//   SGM_K        disparities per lane: 8, 16, 32
//   SGM_STORE16  path volumes in 16 bits (1) or 8 (0)
//   SGM_PREFETCH 1: with SGM_MODE 0, the next cell's codes are loaded into registers while this
//                cell's recurrence runs (software pipelining: the loads' latency is not on the
//                line's step-to-step chain); 0: loaded at the start of the step that uses them
//   SGM_MODE     0 census, direct L1 loads of the right codes; 1 census, staged (vertical and
//                diagonal lines: the block's right-census row segment in shared memory, bank-skewed,
//                double-buffered, one barrier per step; horizontal lines: a sliding register
//                window, one new code per segment and step); 2 a stored cost volume (sad, ssd)
// Stereo's second evolvable kernel: the region between //@gi begin and //@gi end is what GI edits
// (SgmAggregateProblem, apps/stereo/core/src/sgm/gi_problem.cpp); the default configuration is
// SGM_K 16, SGM_STORE16 0, SGM_MODE 1.
//
// Self-contained (no includes): the GI engine compiles this text with NVRTC.
#ifndef SGM_K
#define SGM_K 16
#endif
#ifndef SGM_STORE16
#define SGM_STORE16 0
#endif
#ifndef SGM_MODE
#define SGM_MODE 1
#endif
#ifndef SGM_PREFETCH
#define SGM_PREFETCH 0
#endif
#undef SGM_STORE_T
#if SGM_STORE16
#define SGM_STORE_T unsigned short
#else
#define SGM_STORE_T unsigned char
#endif
#define AGG_THREADS 128
#define BIG 0x4000u
#define BIG2 0x40004000u
#define FULL_MASK 0xffffffffu
#define COSTS_DIRECT 0
#define COSTS_STAGED 1
#define COSTS_VOLUME 2

#ifndef EVK_DYN_SMEM
#define EVK_DYN_SMEM(type, name) extern __shared__ type name[]
#endif

#ifndef SGM_AGGREGATE_HELPERS  // the helpers once, however often the file is included
#define SGM_AGGREGATE_HELPERS
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

// The codes census_costs reads, into registers: the left code of (x, y) and the K right codes.
template <int K>
__device__ __forceinline__ void census_load(const unsigned* __restrict__ census_left,
                                            const unsigned* __restrict__ census_right, const int right_pitch,
                                            const int right_offset, const int W, const int x, const int y,
                                            const int dmin, const int lane, unsigned& cl, unsigned* r) {
  cl = __ldg(census_left + (size_t)y * W + x);
  const unsigned* base = census_right + (size_t)y * right_pitch + right_offset + x - dmin - lane * K;
#pragma unroll
  for (int j = 0; j < K; ++j) r[j] = __ldg(base - j);
}

// census_costs from codes already in registers (census_load).
template <int K>
__device__ __forceinline__ void census_costs_of(const unsigned cl, const unsigned* r, unsigned* cost) {
#pragma unroll
  for (int i = 0; i < K / 2; ++i) cost[i] = __popc(cl ^ r[2 * i]) | (__popc(cl ^ r[2 * i + 1]) << 16);
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
#endif  // SGM_AGGREGATE_HELPERS

// K <= 16: at most 80 registers (6 blocks of 128 threads per SM), spill-free with ptxas 13.0.
#undef SGM_MIN_BLOCKS
#if SGM_K <= 16
#define SGM_MIN_BLOCKS 6
#else
#define SGM_MIN_BLOCKS 1
#endif

// Launch: grid (ceil(max(W, H) / (AGG_THREADS / Gs)), number of directions), AGG_THREADS threads,
// dynamic shared memory (SGM_MODE 1) 16 (staged_pos(Dp + AGG_THREADS / Gs - 2) + 1) bytes.
// Directions dir0 + blockIdx.y: 0 ->, 1 <-, 2 down, 3 up, 4 down-right, 5 down-left, 6 up-right,
// 7 up-left; out holds one volume [y][x][k < Dp] per launched direction.
extern "C" __global__ void __launch_bounds__(AGG_THREADS, SGM_MIN_BLOCKS) sgm_aggregate(
    const unsigned* __restrict__ census_left, const unsigned* __restrict__ census_right, const int right_pitch,
    const int right_offset, const unsigned char* __restrict__ volume, SGM_STORE_T* __restrict__ out, const int W,
    const int H, const int dmin, const int D, const int Dp, const int G, const int Gs, const int P1, const int P2,
    const int dir0) {
  EVK_DYN_SMEM(unsigned, staged);
  int dir, dx, dy, lines_per_block, nlines, steps, line0, lane, t_req, tl, line, cost_lane, seg, seg_pos;
  int x, y, m, s, i, j, k, base, col0, cc, i0, mi, o, xn, yn;
  bool store, padded, fresh;
  unsigned p1x2, up, dn, thr, mm, lo, hi, u, t, mn, cl, in;
  unsigned padc[SGM_K / 2] = {}, L[SGM_K / 2] = {}, n[SGM_K / 2] = {}, cost[SGM_K / 2] = {}, c[SGM_K] = {}, win[SGM_K] = {};
  // these arrays and the prefetched codes, value-initialised: an edit that drops a first load reads zeros (wrong
  // costs, penalised), not undefined values (NVRTC flags only scalars read before set)
  unsigned pcl = 0u;
  unsigned pr[SGM_K] = {};
  SGM_STORE_T* vol;
  const unsigned* row;
  const unsigned* src;
  unsigned* sa;
  unsigned* sb;
//@gi begin
  dir = dir0 + blockIdx.y;
  dx = (dir == 0 || dir == 4 || dir == 6) ? 1 : ((dir == 1 || dir == 5 || dir == 7) ? -1 : 0);
  dy = (dir == 2 || dir == 4 || dir == 5) ? 1 : ((dir == 3 || dir == 6 || dir == 7) ? -1 : 0);
  lines_per_block = AGG_THREADS / Gs;
  nlines = dy == 0 ? H : W;
  steps = dy == 0 ? W : H;
  line0 = blockIdx.x * lines_per_block;
  if (line0 >= nlines) {
    return;  // the whole block is beyond this direction's lines
  }
  lane = threadIdx.x % Gs;
  t_req = threadIdx.x / Gs;
  store = line0 + t_req < nlines && lane < G;
  tl = line0 + t_req < nlines ? t_req : nlines - 1 - line0;  // surplus segments shadow the last line
  line = line0 + tl;
  cost_lane = lane < G ? lane : G - 1;  // idle lanes read in-range addresses
  vol = out + (size_t)blockIdx.y * H * W * Dp;
  for (i = 0; i < SGM_K / 2; i++) {
    k = lane * SGM_K + 2 * i;
    padc[i] = (k >= D ? BIG : 0u) | (k + 1 >= D ? (BIG << 16) : 0u);
  }
  padded = Dp != D || G != Gs;
  p1x2 = (unsigned)P1 * 0x10001u;
  // staged: a row segment of Dp + lines_per_block - 1 codes, twice (sa: as is; sb: shifted by W for
  // diagonal lines that wrapped around the right edge), double-buffered
  seg = Dp + lines_per_block - 1;
  seg_pos = staged_pos(seg - 1) + 1;
  m = 0;
  x = dy == 0 ? (dx > 0 ? 0 : W - 1) : line;
  y = dy == 0 ? line : (dy > 0 ? 0 : H - 1);
  if (SGM_MODE == COSTS_DIRECT && SGM_PREFETCH) {
    census_load<SGM_K>(census_left, census_right, right_pitch, right_offset, W, x, y, dmin, cost_lane, pcl, pr);
  }
  for (s = 0; s < steps; s++) {
    fresh = s == 0 || (dy != 0 && dx != 0 && (x - dx < 0 || x - dx >= W));
    if (fresh) {
#pragma unroll
      for (i = 0; i < SGM_K / 2; i++) {
        L[i] = padc[i];
      }
      m = 0;
    }
    if (SGM_MODE == COSTS_DIRECT && SGM_PREFETCH) {
      census_costs_of<SGM_K>(pcl, pr, cost);
      // the next cell of the line (as at the end of the step), its codes loaded now
      xn = dy == 0 || dx != 0 ? x + dx : x;
      yn = dy == 0 ? y : y + dy;
      if (xn < 0 && dy != 0) {
        xn += W;
      }
      if (xn >= W && dy != 0) {
        xn -= W;
      }
      if (s + 1 < steps) {
        census_load<SGM_K>(census_left, census_right, right_pitch, right_offset, W, xn, yn, dmin, cost_lane, pcl, pr);
      }
    } else if (SGM_MODE == COSTS_DIRECT) {
      census_costs<SGM_K>(census_left, census_right, right_pitch, right_offset, W, x, y, dmin, cost_lane, cost);
    } else if (SGM_MODE == COSTS_VOLUME) {
      volume_costs<SGM_K>(volume, W, Dp, x, y, cost_lane, cost);
    } else if (dy != 0) {
      // the block's lines sit at x = base + t (mod W) on row y
      base = line0;
      if (dx != 0) {
        base = (line0 + dx * (s % W)) % W;
      }
      if (base < 0) {
        base += W;
      }
      sa = staged + (s & 1) * 2 * seg_pos;
      sb = sa + seg_pos;
      row = census_right + (size_t)y * right_pitch + right_offset;
      col0 = base - dmin - Dp + 1;
      for (i = threadIdx.x; i < seg; i += AGG_THREADS) {
        cc = col0 + i;
        sa[staged_pos(i)] = (cc >= -right_offset && cc < right_pitch - right_offset) ? __ldg(row + cc) : 0u;
      }
      if (base + lines_per_block > W) {
        for (i = threadIdx.x; i < seg; i += AGG_THREADS) {
          cc = col0 + i - W;
          sb[staged_pos(i)] = (cc >= -right_offset && cc < right_pitch - right_offset) ? __ldg(row + cc) : 0u;
        }
      }
      __syncthreads();
      src = base + tl >= W ? sb : sa;
      cl = __ldg(census_left + (size_t)y * W + x);
      i0 = Dp - 1 + tl - cost_lane * SGM_K;
#pragma unroll
      for (j = 0; j < SGM_K; j++) {
        c[j] = __popc(cl ^ src[staged_pos(i0 - j)]);
      }
#pragma unroll
      for (i = 0; i < SGM_K / 2; i++) {
        cost[i] = c[2 * i] | (c[2 * i + 1] << 16);
      }
    } else {
      // horizontal line: slide the window one column
      row = census_right + (size_t)y * right_pitch + right_offset;
      if (s == 0) {
#pragma unroll
        for (j = 0; j < SGM_K; j++) {
          win[j] = __ldg(row + x - dmin - cost_lane * SGM_K - j);
        }
      } else if (dx > 0) {
        in = __shfl_up_sync(FULL_MASK, win[SGM_K - 1], 1, Gs);
        if (lane == 0) {
          in = __ldg(row + x - dmin);
        }
#pragma unroll
        for (j = SGM_K - 1; j > 0; j--) {
          win[j] = win[j - 1];
        }
        win[0] = in;
      } else {
        in = __shfl_down_sync(FULL_MASK, win[0], 1, Gs);
        if (lane == G - 1) {
          in = __ldg(row + x - dmin - Dp + 1);
        }
#pragma unroll
        for (j = 0; j < SGM_K - 1; j++) {
          win[j] = win[j + 1];
        }
        win[SGM_K - 1] = in;
      }
      cl = __ldg(census_left + (size_t)y * W + x);
#pragma unroll
      for (j = 0; j < SGM_K; j++) {
        c[j] = __popc(cl ^ win[j]);
      }
#pragma unroll
      for (i = 0; i < SGM_K / 2; i++) {
        cost[i] = c[2 * i] | (c[2 * i + 1] << 16);
      }
    }
    if (padded) {
#pragma unroll
      for (i = 0; i < SGM_K / 2; i++) {
        cost[i] += padc[i];
      }
    }
    // L(k - 1) of the first pair and L(k + 1) of the last come from the neighbouring lanes
    up = __shfl_up_sync(FULL_MASK, L[SGM_K / 2 - 1], 1, Gs);
    dn = __shfl_down_sync(FULL_MASK, L[0], 1, Gs);
    if (lane == 0) {
      up = BIG2;
    }
    if (lane == Gs - 1) {
      dn = BIG2;
    }
    thr = (unsigned)(m + P2 - P1) * 0x10001u;
    mm = (unsigned)m * 0x10001u;
#pragma unroll
    for (i = 0; i < SGM_K / 2; i++) {
      lo = __byte_perm(i == 0 ? up : L[i - 1], L[i], 0x5432);          // L(k - 1)
      hi = __byte_perm(L[i], i == SGM_K / 2 - 1 ? dn : L[i + 1], 0x5432);  // L(k + 1)
      u = __vimin3_s16x2(lo, hi, thr);     // min(L(k-1), L(k+1), m + P2 - P1)
      t = __viaddmin_s16x2(u, p1x2, L[i]);  // min(L(k), that + P1)
      n[i] = t + cost[i] - mm;              // per half: C + t - m (no carries)
    }
    mn = n[0];
#pragma unroll
    for (i = 1; i < SGM_K / 2; i++) {
      mn = __vmins2(mn, n[i]);
    }
    mi = min((int)(mn & 0xffffu), (int)(mn >> 16));
    for (o = Gs / 2; o > 0; o /= 2) {
      mi = min(mi, __shfl_xor_sync(FULL_MASK, mi, o, Gs));
    }
    if (store) {
      store_line<SGM_K, SGM_STORE_T>(vol + ((size_t)y * W + x) * Dp + lane * SGM_K, n);
    }
#pragma unroll
    for (i = 0; i < SGM_K / 2; i++) {
      L[i] = n[i];
    }
    m = mi;
    // next cell of the line
    if (dy == 0) {
      x += dx;
    } else {
      y += dy;
    }
    if (dy != 0 && dx != 0) {
      x += dx;
    }
    if (x < 0 && dy != 0) {
      x += W;
    }
    if (x >= W && dy != 0) {
      x -= W;
    }
  }
//@gi end
}

// Reads before writes (docs/GI.md). NVRTC's warning #549 (a refusal in nvrtc_compile) fires only for a
// scalar read in straight-line code before any assignment, never for an array. So padc, L, n, cost, c,
// win and the prefetched codes are value-initialised: a GI edit that deletes or swaps their fill reads
// zeros. The cubins change (the initial L and n feed the line loop's registers; the default
// configuration needs 72 registers instead of 80 with ptxas 13.0). Left as they are: the staged
// right-census rows in shared memory (every entry written before the barrier that guards its reads)
// and the scalars (an initialiser would silence #549 where it does fire).
