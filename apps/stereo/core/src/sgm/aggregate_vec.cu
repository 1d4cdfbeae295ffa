// SGM path aggregation, third kernel (support kernel; the evolvable seed stays
// kernels/original/stereo/sgm_aggregate.cu). Same recurrence and the same output volumes as the
// seed for every k < Dp, bit for bit:
//   L_r(p, k) = C(p, k) + min(L_r(p-r, k), L_r(p-r, k±1) + P1, m + P2) - m, m = min_k L_r(p-r, k),
// out[dir][y][x][k < Dp] (8-bit when cost_max + P2 <= 255, else 16-bit), census costs on the fly.
//
// Why a third kernel: at 1920x1080 a direction's lines are few (1080 rows, 1920 columns), so with
// 16 or 32 disparities per lane a direction alone runs one warp or less per scheduler and each
// line step costs its whole instruction latency (~800-1200 cycles per step measured on the H100);
// and the seed's K scalar census loads per lane and step cost ~85 L1 wavefronts per warp step.
// This kernel spreads a line over more lanes with fewer disparities each (K 4, 8 or 16) and loads
// a lane's census codes as K/4 aligned 16-byte loads:
//   - chunk-strided lanes: lane l of a segment of Gs lanes holds the groups of 4 consecutive
//     disparities k = 4 (l + Gs g) .. + 3, g < K/4. Load g of a segment reads Gs consecutive
//     16-byte chunks: coalesced.
//   - aligned copies: the right census is stored four times, copy q shifted right by q words
//     (sgm_census4_* in census.cu), so the 4 codes of any group start on a 16-byte boundary in the
//     copy q = -(right_offset + x - dmin - 3) mod 4. Four times the census memory (~35 MB at 1080p).
//   - a group as two pairs of signed 16-bit values, A = (k, k+2) and B = (k+1, k+3): L(k±1) of A are
//     (B of the group before, high half; B) and B; of B, A and (A; A of the group after, low half),
//     so each group needs one shuffle from the lane before and one from the lane after (the group
//     before lane 0's is lane Gs-1's previous group: a rotation). DPX min-plus as in the seed.
//   - the line minimum by one redux (__reduce_min_sync) where a segment is the whole warp, else by
//     log2(Gs) shuffles;
//   - the next cell's codes loaded during this cell's step (a ring of 2-8 cells in flight was no
//     faster on the H100: the line steps are latency-bound, not waiting on loads, and it cost
//     occupancy); no shared memory, no block barrier (segments whose line is past the direction's
//     end shadow the last line).
// Values, padding (BIG = 2^14 for k >= D) and ranges are the seed's: the index space is Gs K
// disparities with k >= D padded, as the seed's lanes x K; every value stays below 2^15 and
// t + C - m never carries between the halves of a pair.
//
// Entries sgm_aggregate3_k<K>_g<Gs>_<u8|u16> (bottom), the seed's signature, with right_pitch the
// pitch of one copy (words, a multiple of 4), the copies H right_pitch words apart, right_offset the
// column origin inside a copy row before its shift, G unused, Gs the lanes per line (8, 16 or 32, the
// entry's; Gs K >= Dp; Dp a multiple of 4). Launch: grid (ceil(max(W, H) / (128 / Gs)), number of
// directions), 128 threads, no shared memory.
#define A3_THREADS 128
#define A3_BIG 0x4000u
#define A3_BIG2 0x40004000u
#define A3_FULL 0xffffffffu

// Loads the codes of a cell: its left code (census_left[lidx]) and the lane's NG chunks, chunk g at
// row - 4 GS g words, row = copies + off (a3_offset less 4 lane). All chunks of a cell at immediate offsets
// from one pointer.
template <int NG, int GS, bool FULL>
__device__ __forceinline__ void a3_load(const unsigned* __restrict__ census_left, const unsigned* __restrict__ copies,
                                        const int lidx, const int off, const bool* has, unsigned& cl, uint4* code) {
  cl = __ldg(census_left + lidx);
  const unsigned* row = copies + off;
#pragma unroll
  for (int g = 0; g < NG; ++g)
    code[g] = (FULL || has[g]) ? __ldg((const uint4*)(row - 4 * GS * g)) : make_uint4(0u, 0u, 0u, 0u);
}

// The word offset of cell (x, y)'s group-0 chunk (k = 3) inside the copies, as a 32-bit value: the
// column a0 = c0 + x relative to a copy row's origin lies in copy q = -a0 mod 4, which starts
// q cstride1 words on (shifted q words). Fits: 4 copies of H x pitch words < 2^31 (checked by the host).
__device__ __forceinline__ int a3_offset(const int c0, const int pitch, const int cstride1, const int x, const int y) {
  const int a0 = c0 + x;
  return ((-a0) & 3) * cstride1 + y * pitch + a0;
}

// Stores the lane's groups of cell_l = the cell's first entry + 4 lane (group g 4 GS entries further).
template <int K, int GS, bool FULL, class StoreT>
__device__ __forceinline__ void a3_store(StoreT* __restrict__ cell_l, const unsigned* A, const unsigned* B, const bool* has);
template <int K, int GS, bool FULL>
__device__ __forceinline__ void a3_store(unsigned char* __restrict__ cell_l, const unsigned* A, const unsigned* B,
                                         const bool* has) {
#pragma unroll
  for (int g = 0; g < K / 4; ++g)
    if (FULL || has[g]) __stcs((unsigned*)(cell_l + 4 * GS * g), __byte_perm(A[g], B[g], 0x6240));  // k0, k0+1, k0+2, k0+3
}
template <int K, int GS, bool FULL>
__device__ __forceinline__ void a3_store(unsigned short* __restrict__ cell_l, const unsigned* A, const unsigned* B,
                                         const bool* has) {
#pragma unroll
  for (int g = 0; g < K / 4; ++g)
    if (FULL || has[g])
      __stcs((uint2*)(cell_l + 4 * GS * g), make_uint2(__byte_perm(A[g], B[g], 0x5410), __byte_perm(A[g], B[g], 0x7632)));
}

// The cell after (x, y) on a line of direction (DX, DY); diagonal lines wrap around the side.
template <int DX, int DY>
__device__ __forceinline__ void a3_advance(int& x, int& y, const int W) {
  if (DY == 0 || DX != 0) x += DX;
  y += DY;
  if (DY != 0 && DX != 0) {
    if (x < 0) x += W;
    if (x >= W) x -= W;
  }
}

// The lane's groups: has[g] (entries >= Dp, idle groups, are neither loaded nor stored) and the padding
// of pairs A, B (BIG for k >= D).
template <int NG, int GS, bool FULL>
__device__ __forceinline__ void a3_groups(const int lane, const int D, const int Dp, bool* has, unsigned* padA,
                                          unsigned* padB) {
  constexpr int Gs = GS;
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    const int k0 = 4 * (lane + Gs * g);
    has[g] = FULL || k0 < Dp;
    padA[g] = FULL ? 0u : (k0 >= D ? A3_BIG : 0u) | (k0 + 2 >= D ? (A3_BIG << 16) : 0u);
    padB[g] = FULL ? 0u : (k0 + 1 >= D ? A3_BIG : 0u) | (k0 + 3 >= D ? (A3_BIG << 16) : 0u);
  }
}

// The line minimum m of a cell from the lane's pair minima lo, hi, in both halves (m * 0x10001).
template <int GS>
__device__ __forceinline__ unsigned a3_line_min(const unsigned lo, const unsigned hi) {
  constexpr int Gs = GS;
  unsigned mn = __vmins2(lo, hi);
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800  // (host passes and the tests' CUDA emulator: the redux)
  if (Gs == 32) {
    const unsigned mi = __reduce_min_sync(A3_FULL, min(mn & 0xffffu, mn >> 16));  // one redux for the warp's line
    return __byte_perm(mi, 0u, 0x1010);
  } else
#endif
  {  // (before sm_80 there is no redux: the whole warp's line by shuffles as well, the same minimum)
    for (int o = Gs / 2; o > 0; o /= 2) mn = __vmins2(mn, __shfl_xor_sync(A3_FULL, mn, o, Gs));
    return __vmins2(mn, __byte_perm(mn, 0u, 0x1032));
  }
}

// FULL: every group holds real disparities (4 GS K/4 == D == Dp): no idle groups, no padding, so no
// per-group predicates in the loop.
template <int K, int GS, class StoreT, int DX, int DY, bool FULL>
__device__ __forceinline__ void a3_direction(const unsigned* __restrict__ census_left,
                                             const unsigned* __restrict__ copies, const int pitch, const int roff,
                                             StoreT* __restrict__ vol, const int W, const int H, const int dmin,
                                             const int D, const int Dp, const int P1, const int P2) {
  constexpr int NG = K / 4;
  constexpr int Gs = GS;
  const int lines = A3_THREADS / Gs;
  const int nlines = DY == 0 ? H : W;
  const int steps = DY == 0 ? W : H;
  const int line0 = (int)blockIdx.x * lines;
  if (line0 >= nlines) return;  // the whole block: whole warps leave, the others stay converged
  // surplus segments shadow the last line (not stored), so every collective names the full warp:
  // a constant full mask spares the compiler's convergence checks (MATCH.ANY, REDUX.OR and a
  // divergence branch per shuffle with a computed mask)
  const bool valid = line0 + (int)threadIdx.x / Gs < nlines;
  const int line = valid ? line0 + (int)threadIdx.x / Gs : nlines - 1;
  const int lane = (int)threadIdx.x % Gs;
  const int cstride1 = H * pitch + 1;  // copy q + 1 starts cstride words on, shifted one more
  const int c0 = roff - dmin - 3 - 4 * lane;  // the lane's first chunk 4 lane words before group 0's
  StoreT* vol_l = vol + 4 * lane;
  unsigned padA[NG], padB[NG];
  bool has[NG];
  a3_groups<NG, GS, FULL>(lane, D, Dp, has, padA, padB);
  const bool padded = !FULL && 4 * Gs * NG != D;
  const unsigned p1x2 = (unsigned)P1 * 0x10001u;
  const int prev = (lane + Gs - 1) & (Gs - 1), next = (lane + 1) & (Gs - 1);
  int x = DY == 0 ? (DX > 0 ? 0 : W - 1) : line;
  int y = DY == 0 ? line : (DY > 0 ? 0 : H - 1);
  // the codes of the line's current cell; the next cell's are loaded once this cell's costs are made
  unsigned cl = 0u;
  uint4 code[NG];
  a3_load<NG, GS, FULL>(census_left, copies, y * W + x, a3_offset(c0, pitch, cstride1, x, y), has, cl, code);
  unsigned A[NG], B[NG];
#pragma unroll
  for (int g = 0; g < NG; ++g) {
    A[g] = padA[g];
    B[g] = padB[g];
  }
  // mm: the previous cell's line minimum m in both halves (m * 0x10001)
  unsigned mm = 0u;
  const unsigned dpx2 = (unsigned)(P2 - P1) * 0x10001u;
  const unsigned np1x2 = (unsigned)((0x10000 - P1) & 0xffff) * 0x10001u;  // -P1 per half
  for (int s = 0; s < steps; ++s) {
    // a diagonal line restarts where p - r leaves the image
    // (FULL: no padding, so instead of resetting A, B the step runs with m = 0 and m + P2 - P1 = -P1:
    // then min(L(k±1), m + P2 - P1) = -P1 and t = min(L(k), -P1 + P1) = 0 whatever the previous
    // line left in A, B (all >= 0), so L = C, as at a line's first cell; two selects instead of 2 NG)
    const bool fresh = DY != 0 && DX != 0 && s > 0 && (DX > 0 ? x == 0 : x == W - 1);
    if (!FULL && fresh) {
#pragma unroll
      for (int g = 0; g < NG; ++g) {
        A[g] = padA[g];
        B[g] = padB[g];
      }
      mm = 0u;
    }
    unsigned cA[NG], cB[NG];
#pragma unroll
    for (int g = 0; g < NG; ++g) {
      // chunk words x, y, z, w = disparities k0 + 3, + 2, + 1, k0; one PRMT packs a pair
      cA[g] = __byte_perm((unsigned)__popc(cl ^ code[g].w), (unsigned)__popc(cl ^ code[g].y), 0x5410);
      cB[g] = __byte_perm((unsigned)__popc(cl ^ code[g].z), (unsigned)__popc(cl ^ code[g].x), 0x5410);
      if (padded) {
        cA[g] += padA[g];
        cB[g] += padB[g];
      }
    }
    int xn = x, yn = y;
    a3_advance<DX, DY>(xn, yn, W);
    // the next cell's codes, in flight during the rest of this step
    // unconditional (the last step reloads a cell of the line: no phi, so the loads land in the
    // registers this step's costs were read from, with no copies at the end of the step)
    {
      const int xl = DY == 0 ? min(max(xn, 0), W - 1) : xn;
      const int yl = DY != 0 ? min(max(yn, 0), H - 1) : yn;
      a3_load<NG, GS, FULL>(census_left, copies, yl * W + xl, a3_offset(c0, pitch, cstride1, xl, yl), has, cl, code);
    }
    // neighbours across lanes: B of the group before, A of the group after
    unsigned Bp[NG], An[NG];
#pragma unroll
    for (int g = 0; g < NG; ++g) {
      Bp[g] = __shfl_sync(A3_FULL, B[g], prev, Gs);
      An[g] = __shfl_sync(A3_FULL, A[g], next, Gs);
    }
    const unsigned thr = FULL && fresh ? np1x2 : mm + dpx2;  // m + P2 - P1 per half
    const unsigned mmu = FULL && fresh ? 0u : mm;
    unsigned lo = 0u, hi = 0u;
#pragma unroll
    for (int g = 0; g < NG; ++g) {
      // lane 0's group before is lane Gs-1's group g-1; lane Gs-1's group after is lane 0's g+1
      const unsigned bp = lane != 0 ? Bp[g] : (g > 0 ? Bp[g - 1] : A3_BIG2);
      const unsigned an = lane != Gs - 1 ? An[g] : (g + 1 < NG ? An[g + 1] : A3_BIG2);
      const unsigned loA = __byte_perm(bp, B[g], 0x5432);    // L(k-1) of (k0, k0+2): (k0-1, k0+1)
      const unsigned hiB = __byte_perm(A[g], an, 0x5432);    // L(k+1) of (k0+1, k0+3): (k0+2, k0+4)
      const unsigned uA = __vimin3_s16x2(loA, B[g], thr);    // min(L(k-1), L(k+1), m + P2 - P1)
      const unsigned uB = __vimin3_s16x2(A[g], hiB, thr);
      const unsigned tA = __viaddmin_s16x2(uA, p1x2, A[g]);  // min(L(k), that + P1)
      const unsigned tB = __viaddmin_s16x2(uB, p1x2, B[g]);
      A[g] = tA + cA[g] - mmu;  // per half C + t - m, no carries (one IADD3)
      B[g] = tB + cB[g] - mmu;
      if (g == 0) {
        lo = A[0];
        hi = B[0];
      } else {
        lo = __vmins2(lo, A[g]);
        hi = __vmins2(hi, B[g]);
      }
    }
    // the line minimum, both halves: min over the lane's pairs, over the line's lanes (halves
    // apart), then of the two halves (swapped by a PRMT), so mm is m * 0x10001 with no multiply
    mm = a3_line_min<GS>(lo, hi);
    if (valid) a3_store<K, GS, FULL>(vol_l + (size_t)(unsigned)(y * W + x) * (unsigned)Dp, A, B, has);
    x = xn;
    y = yn;
  }
}

// Direction dir of the launch, with the lane layout (K, GS), or (K/2, 2 GS) for the horizontal
// directions under SPLIT (a3_body).
template <int K, int GS, class StoreT, bool SPLIT, bool FULL>
__device__ __forceinline__ void a3_dirs(const unsigned* __restrict__ census_left, const unsigned* __restrict__ copies,
                                        const int pitch, const int roff, StoreT* __restrict__ vol, const int W,
                                        const int H, const int dmin, const int D, const int Dp, const int P1,
                                        const int P2, const int dir) {
  constexpr int KH = SPLIT ? K / 2 : K, GH = SPLIT ? 2 * GS : GS;
  switch (dir) {
    case 0: a3_direction<KH, GH, StoreT, 1, 0, FULL>(census_left, copies, pitch, roff, vol, W, H, dmin, D, Dp, P1, P2); break;
    case 1: a3_direction<KH, GH, StoreT, -1, 0, FULL>(census_left, copies, pitch, roff, vol, W, H, dmin, D, Dp, P1, P2); break;
    case 2: a3_direction<K, GS, StoreT, 0, 1, FULL>(census_left, copies, pitch, roff, vol, W, H, dmin, D, Dp, P1, P2); break;
    case 3: a3_direction<K, GS, StoreT, 0, -1, FULL>(census_left, copies, pitch, roff, vol, W, H, dmin, D, Dp, P1, P2); break;
    case 4: a3_direction<K, GS, StoreT, 1, 1, FULL>(census_left, copies, pitch, roff, vol, W, H, dmin, D, Dp, P1, P2); break;
    case 5: a3_direction<K, GS, StoreT, -1, 1, FULL>(census_left, copies, pitch, roff, vol, W, H, dmin, D, Dp, P1, P2); break;
    case 6: a3_direction<K, GS, StoreT, 1, -1, FULL>(census_left, copies, pitch, roff, vol, W, H, dmin, D, Dp, P1, P2); break;
    default: a3_direction<K, GS, StoreT, -1, -1, FULL>(census_left, copies, pitch, roff, vol, W, H, dmin, D, Dp, P1, P2); break;
  }
}

// SPLIT: the horizontal directions (0, 1) run with half the disparities per lane on twice the lanes
// (K/2, 2 GS): their lines are the longest (W steps at 1080p against H), and a line step costs about
// its instruction count at one warp per scheduler, so fewer instructions per lane shorten the
// launch's critical path; the other directions keep (K, GS). The lane layout covers 4 GS K/4
// disparities either way, so FULL (a uniform branch here) holds for all directions or none.
template <int K, int GS, class StoreT, bool SPLIT = false>
__device__ __forceinline__ void a3_body(const unsigned* __restrict__ census_left, const unsigned* __restrict__ copies,
                                        const int pitch, const int roff, StoreT* __restrict__ out, const int W,
                                        const int H, const int dmin, const int D, const int Dp, const int P1,
                                        const int P2, const int dir0) {
  StoreT* vol = out + (size_t)blockIdx.y * H * W * Dp;
  const int dir = dir0 + (int)blockIdx.y;
  if (D == GS * K && Dp == D)
    a3_dirs<K, GS, StoreT, SPLIT, true>(census_left, copies, pitch, roff, vol, W, H, dmin, D, Dp, P1, P2, dir);
  else
    a3_dirs<K, GS, StoreT, SPLIT, false>(census_left, copies, pitch, roff, vol, W, H, dmin, D, Dp, P1, P2, dir);
}

// Entries sgm_aggregate3_k<K>_g<GS>_<u8|u16>: K disparities per lane, GS lanes per line (the Gs
// argument must equal GS).
#define SGM_AGG3_ENTRY(NAME, K, GS, STORE) SGM_AGG3_ENTRY_S(NAME, K, GS, STORE, false)
#define SGM_AGG3_ENTRY_S(NAME, K, GS, STORE, SPLIT)                                                               \
  extern "C" __global__ void __launch_bounds__(A3_THREADS, (K) <= 8 || ((SPLIT) && sizeof(STORE) == 1) ? 8 : 6)              \
      NAME(const unsigned* __restrict__ census_left, const unsigned* __restrict__ census_right,                 \
           const int right_pitch, const int right_offset, const unsigned char* __restrict__ volume,              \
           STORE* __restrict__ out, const int W, const int H, const int dmin, const int D, const int Dp,         \
           const int G, const int Gs, const int P1, const int P2, const int dir0) {                              \
    (void)volume;                                                                                                \
    (void)G;                                                                                                     \
    (void)Gs;                                                                                                    \
    a3_body<K, GS, STORE, SPLIT>(census_left, census_right, right_pitch, right_offset, out, W, H, dmin, D, Dp, P1,  \
                                 P2, dir0);                                                                      \
  }

// Launch bounds: K <= 8 at most 64 registers (8 blocks of 128 threads per SM; ptxas 13.0: 54-56). K 16:
// 80 (6 blocks), except the split entries on 8-bit volumes at 64 (8 blocks; no spills once kernel 3
// dropped its per-group predicates). Measured on the H100 (1920x1080, stage medians): 8 blocks took the
// aggregation at 128/8 (split, 990 blocks with work: one wave of 132 x 8 instead of 1.25 of 132 x 6)
// from 1.462 to 1.250 ms and at 256/8 from 2.425 to 2.283, but the unsplit K 16 entry at 256/4 from
// 1.148 to 1.343 (64 registers cost it more than the occupancy gained; limiting that entry to 6
// blocks by dynamic shared memory instead did not bring it back: the shared carveout took the L1
// that the census loads use), so only the split entries get 8.
SGM_AGG3_ENTRY(sgm_aggregate3_k4_g8_u8, 4, 8, unsigned char)
SGM_AGG3_ENTRY(sgm_aggregate3_k4_g16_u8, 4, 16, unsigned char)
SGM_AGG3_ENTRY(sgm_aggregate3_k4_g32_u8, 4, 32, unsigned char)
SGM_AGG3_ENTRY(sgm_aggregate3_k8_g8_u8, 8, 8, unsigned char)
SGM_AGG3_ENTRY(sgm_aggregate3_k8_g16_u8, 8, 16, unsigned char)
SGM_AGG3_ENTRY(sgm_aggregate3_k8_g32_u8, 8, 32, unsigned char)
SGM_AGG3_ENTRY(sgm_aggregate3_k16_g8_u8, 16, 8, unsigned char)
SGM_AGG3_ENTRY(sgm_aggregate3_k16_g16_u8, 16, 16, unsigned char)
SGM_AGG3_ENTRY(sgm_aggregate3_k16_g32_u8, 16, 32, unsigned char)
SGM_AGG3_ENTRY(sgm_aggregate3_k4_g8_u16, 4, 8, unsigned short)
SGM_AGG3_ENTRY(sgm_aggregate3_k4_g16_u16, 4, 16, unsigned short)
SGM_AGG3_ENTRY(sgm_aggregate3_k4_g32_u16, 4, 32, unsigned short)
SGM_AGG3_ENTRY(sgm_aggregate3_k8_g8_u16, 8, 8, unsigned short)
SGM_AGG3_ENTRY(sgm_aggregate3_k8_g16_u16, 8, 16, unsigned short)
SGM_AGG3_ENTRY(sgm_aggregate3_k8_g32_u16, 8, 32, unsigned short)
SGM_AGG3_ENTRY(sgm_aggregate3_k16_g8_u16, 16, 8, unsigned short)
SGM_AGG3_ENTRY(sgm_aggregate3_k16_g16_u16, 16, 16, unsigned short)
SGM_AGG3_ENTRY(sgm_aggregate3_k16_g32_u16, 16, 32, unsigned short)

// Entries sgm_aggregate3s_k<K>_g<GS>_*: the horizontal directions at (K/2, 2 GS) (SPLIT above); the
// grid's x covers ceil(H / (64 / GS)) blocks for them.
SGM_AGG3_ENTRY_S(sgm_aggregate3s_k8_g8_u8, 8, 8, unsigned char, true)
SGM_AGG3_ENTRY_S(sgm_aggregate3s_k8_g16_u8, 8, 16, unsigned char, true)
SGM_AGG3_ENTRY_S(sgm_aggregate3s_k16_g8_u8, 16, 8, unsigned char, true)
SGM_AGG3_ENTRY_S(sgm_aggregate3s_k16_g16_u8, 16, 16, unsigned char, true)
SGM_AGG3_ENTRY_S(sgm_aggregate3s_k8_g8_u16, 8, 8, unsigned short, true)
SGM_AGG3_ENTRY_S(sgm_aggregate3s_k8_g16_u16, 8, 16, unsigned short, true)
SGM_AGG3_ENTRY_S(sgm_aggregate3s_k16_g8_u16, 16, 8, unsigned short, true)
SGM_AGG3_ENTRY_S(sgm_aggregate3s_k16_g16_u16, 16, 16, unsigned short, true)
