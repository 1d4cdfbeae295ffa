// SGM path aggregation, fourth kernel (support kernel; the evolvable seed stays
// kernels/original/stereo/sgm_aggregate.cu): the directions in two raster passes that sum them as
// they go, so the path volumes never exist. Same recurrence as the seed, bit for bit:
//   L_r(p, k) = C(p, k) + min(L_r(p-r, k), L_r(p-r, k±1) + P1, m + P2) - m, m = min_k L_r(p-r, k),
// census costs on the fly; output S(p, k) = sum over the directions of L_r(p, k) in 16 bits.
//
// Why: kernels 1-3 write one volume per direction (8 paths, 128 disparities, 1080p: 2.1 GB) that the
// wta reads back; with 8 paths that traffic alone is 16 bytes per pixel and disparity. Here
//   pass 1 (forward: rows top to bottom, each row left to right) runs the directions whose
//     predecessor p - r lies above or to the left: (1,0) and (0,1), with 8 paths also (1,1) and
//     (-1,1); it writes their sum S1 (2 bytes per entry);
//   pass 2 (reverse: the image turned by 180 degrees) runs the other directions and adds S1:
//     S = S1 + theirs (2 bytes read, 2 written). The wta reads S once (2 bytes).
// 8 bytes per entry in all, and the cost C is computed once per pass, not once per direction.
//
// Work split: one warp per image row (32 lanes x K disparities: Dp = 32 K entries, K = 2, 4, 8 or 16,
// entries k >= D padded with BIG as in the other kernels; lane l holds k = l K .. l K + K - 1 as K/2
// pairs of signed 16-bit values). A block is a band of NR consecutive rows (in pass order) that
// steps in lockstep (one barrier per step); row r of a band works on column index i = t - SKEW r at
// step t, SKEW = 2 with diagonals (the predecessor (i+1, row-1) must be done), else 1. A row hands its
// vertical and diagonal path costs (and their minima) to the row below through a ring of 4 slots in
// shared memory. The band's last row hands them to the next band through global memory, each 32-bit
// value next to a 32-bit tag (the launch's epoch): no fence and no flag; the next band copies them
// ahead (cp.async) into a landing ring and reloads a record whose tags are not yet the epoch's.
// Bands are numbered by an atomic ticket in the order blocks start, so a band only ever waits for one
// that is already running (no deadlock, whatever the number of waves).
// The census codes of the right image slide through the lanes (one shuffle per step); pass 2 copies
// S1 ahead into a per-row ring (cp.async).
//
// Entries sgm_aggregate4_k<K>_p<4|8>_<fwd|rev>, launch: grid = bands, block = 32 NR threads (NR <= 12),
// dynamic shared memory sgm_agg4_smem() of sgm_pipeline.cpp (the layout below).
#define A4_BIG2 0x40004000u
#define A4_FULL 0xffffffffu
#define A4_MAX_THREADS 384

#ifndef EVK_DYN_SMEM
#define EVK_DYN_SMEM(type, name) extern __shared__ __align__(16) type name[]
#endif

#if defined(EVK_CUDA_EMU)
template <int N>
inline void a4_cp(void* dst, const void* src) {
  std::memcpy(dst, src, N);
}
inline void a4_commit() {}
template <int N>
inline void a4_wait() {}
inline unsigned long long a4_ld_strong(const unsigned long long* p) { return *p; }
#else
// cp.async: 16-byte copies bypass L1 (.cg), smaller ones go through it (.ca)
template <int N>
__device__ __forceinline__ void a4_cp(void* dst, const void* src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  if (N == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(d), "l"(src), "n"(N) : "memory");
}
__device__ __forceinline__ void a4_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void a4_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
// a load that sees other SMs' stores (not served from a stale L1 line)
__device__ __forceinline__ unsigned long long a4_ld_strong(const unsigned long long* p) {
  return *(const volatile unsigned long long*)p;
}
#endif

// Copies n words (n = 1, 2, 4 or 8) with cp.async.
template <int NW>
__device__ __forceinline__ void a4_cp_words(unsigned* dst, const unsigned* src) {
  if (NW <= 4) {
    a4_cp<4 * NW>(dst, src);
  } else {
#pragma unroll
    for (int c = 0; c < NW / 4; ++c) a4_cp<16>(dst + 4 * c, src + 4 * c);
  }
}

// L(k) from the previous cell's pairs Lp (this lane's), the lanes around it (up: the previous lane's
// last pair, dn: the next lane's first), its minimum m and the cost pairs C.
template <int NP>
__device__ __forceinline__ void a4_step(const unsigned* Lp, const unsigned up, const unsigned dn, const int m,
                                        const unsigned* C, const int P1, const int P2, unsigned* Ln) {
  const unsigned thr = (unsigned)(m + P2 - P1) * 0x10001u;
  const unsigned p1x2 = (unsigned)P1 * 0x10001u;
  const unsigned mm = (unsigned)m * 0x10001u;
#pragma unroll
  for (int h = 0; h < NP; ++h) {
    const unsigned lo = __byte_perm(h > 0 ? Lp[h - 1] : up, Lp[h], 0x5432);      // (k-1, k)
    const unsigned hi = __byte_perm(Lp[h], h + 1 < NP ? Lp[h + 1] : dn, 0x5432);  // (k+1, k+2)
    const unsigned u = __vimin3_s16x2(lo, hi, thr);                              // min(L(k±1), m + P2 - P1)
    const unsigned t = __viaddmin_s16x2(u, p1x2, Lp[h]);                         // min(L(k), that + P1)
    Ln[h] = t + C[h] - mm;  // per half C + t - m: t >= m, no borrow; below 2^15, no carry
  }
}

// The minimum of a lane's pairs (signed halves), then of the warp.
template <int NP>
__device__ __forceinline__ int a4_min(const unsigned* L) {
  unsigned mn = L[0];
#pragma unroll
  for (int h = 1; h < NP; ++h) mn = __vmins2(mn, L[h]);
  const unsigned mi = min(mn & 0xffffu, mn >> 16);
  return (int)__reduce_min_sync(A4_FULL, mi);
}

template <int K, bool DIAG, bool REV>
__device__ __forceinline__ void a4_body(const unsigned* __restrict__ census_left,
                                        const unsigned* __restrict__ census_right, const int pitch, const int off,
                                        unsigned* __restrict__ S, uint2* __restrict__ bnd,
                                        int* __restrict__ ticket, const unsigned epoch, const int W, const int H,
                                        const int dmin, const int D, const int P1, const int P2) {
  constexpr int NP = K / 2;                // pairs per lane
  constexpr int NV = DIAG ? 3 : 1;         // directions handed down: vertical, then the diagonals
  constexpr int SKEW = DIAG ? 2 : 1;
  constexpr int LAND = K >= 16 ? 4 : 8;    // landing ring slots (boundary, S1)
  constexpr int P = LAND - 2;              // steps copied ahead
  constexpr int Dp = 32 * K, HW = Dp / 2;  // entries and pair words per cell
  constexpr int RW = HW + 4;               // ring record (words): pairs, m, 3 pad (16-byte records)
  constexpr int BW = HW + 2;               // boundary record (tagged 8-byte units): pairs, m, pad
  const int NR = (int)blockDim.x / 32;
  const int r = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;
  EVK_DYN_SMEM(unsigned, smem);
  unsigned* ring = smem;                                   // [NR][4][NV][RW]
  uint2* land = (uint2*)(ring + NR * 4 * NV * RW);         // [LAND][NV][BW]
  unsigned* s1 = (unsigned*)(land + LAND * NV * BW);       // [NR][LAND][HW] (pass 2)
  __shared__ int band_s;
  if (threadIdx.x == 0) band_s = atomicAdd(ticket, 1);
  __syncthreads();
  const int band = band_s;
  const int gr = band * NR + r;  // row in pass order
  const bool row_ok = gr < H;
  const int y = REV ? H - 1 - gr : gr;
  const size_t cell0 = (size_t)(row_ok ? y : 0) * W;
  // padding of the lanes' pairs (k >= D)
  unsigned pad[NP];
#pragma unroll
  for (int h = 0; h < NP; ++h) {
    const int k = lane * K + 2 * h;
    pad[h] = (k >= D ? 0x4000u : 0u) | (k + 1 >= D ? 0x40000000u : 0u);
  }
  const unsigned* crow = census_right + (size_t)(row_ok ? y : 0) * pitch + off;  // crow[c]: right code of column c
  const unsigned* lrow = census_left + cell0;

  // copies for step tp: the boundary records (row 0 of a band after the first), S1 (pass 2)
  auto prefetch = [&](const int tp) {
    if (r == 0 && band > 0 && row_ok && tp < W) {
      uint2* slot = land + (tp % LAND) * NV * BW;
#pragma unroll
      for (int v = 0; v < NV; ++v) {
        const int j = tp + (v == 0 ? 0 : (v == 1 ? -1 : 1));
        if (j < 0 || j >= W) continue;
        const uint2* src = bnd + (((size_t)(band - 1) * W + j) * NV + v) * BW;
        for (int c = lane; c < BW / 2; c += 32) a4_cp<16>(slot + v * BW + 2 * c, src + 2 * c);
      }
    }
    if (REV && row_ok) {
      const int ip = tp - SKEW * r;
      if (ip >= 0 && ip < W)
        a4_cp_words<NP>(s1 + (r * LAND + tp % LAND) * HW + lane * NP, S + (cell0 + (W - 1 - ip)) * HW + lane * NP);
    }
  };

  unsigned code[K];  // right codes of this lane's disparities at the current column
  unsigned Hh[NP];   // the horizontal direction's pairs
#pragma unroll
  for (int j = 0; j < K; ++j) code[j] = 0u;
#pragma unroll
  for (int h = 0; h < NP; ++h) Hh[h] = 0u;
  unsigned rcur = 0, rnxt = 0, lcur = 0, lnxt = 0;
  int mh = 0;
  // feed(i): the code entering the lanes at index i (lane 0 forward, lane 31 backward)
  auto rblock = [&](const int b) {
    const int ii = 32 * b + lane;
    return REV ? __ldg(crow + (W - dmin - Dp - ii)) : __ldg(crow + (ii - dmin));
  };
  auto lblock = [&](const int b) {
    const int ii = 32 * b + lane;
    return ii < W ? __ldg(lrow + (REV ? W - 1 - ii : ii)) : 0u;
  };

  const int T = W + SKEW * (NR - 1);
#pragma unroll 1
  for (int tp = 0; tp < P; ++tp) {
    prefetch(tp);
    a4_commit();
  }
#pragma unroll 1
  for (int t = 0; t < T; ++t) {
    prefetch(t + P);
    a4_commit();
    a4_wait<P>();
    __syncthreads();
    const int i = t - SKEW * r;
    if (!row_ok || i < 0 || i >= W) continue;  // warp-uniform
    const int x = REV ? W - 1 - i : i;
    // census codes at column x
    if (i == 0) {
#pragma unroll
      for (int j = 0; j < K; ++j) code[j] = __ldg(crow + (x - dmin - lane * K - j));
      rcur = rblock(0);
      rnxt = rblock(1);
      lcur = lblock(0);
      lnxt = lblock(1);
    } else {
      if ((i & 31) == 0) {
        rcur = rnxt;
        lcur = lnxt;
        rnxt = rblock((i >> 5) + 1);
        lnxt = lblock((i >> 5) + 1);
      }
      const unsigned feed = __shfl_sync(A4_FULL, rcur, i & 31);
      if (!REV) {
        const unsigned u = __shfl_up_sync(A4_FULL, code[K - 1], 1);
#pragma unroll
        for (int j = K - 1; j > 0; --j) code[j] = code[j - 1];
        code[0] = lane == 0 ? feed : u;
      } else {
        const unsigned u = __shfl_down_sync(A4_FULL, code[0], 1);
#pragma unroll
        for (int j = 0; j < K - 1; ++j) code[j] = code[j + 1];
        code[K - 1] = lane == 31 ? feed : u;
      }
    }
    const unsigned cl = __shfl_sync(A4_FULL, lcur, i & 31);
    unsigned C[NP];
#pragma unroll
    for (int h = 0; h < NP; ++h)
      C[h] = (unsigned)__popc(cl ^ code[2 * h]) + ((unsigned)__popc(cl ^ code[2 * h + 1]) << 16) + pad[h];

    // horizontal: the previous column of this row
    unsigned sum[NP];
    if (i == 0) {
#pragma unroll
      for (int h = 0; h < NP; ++h) Hh[h] = C[h];
    } else {
      unsigned up = __shfl_up_sync(A4_FULL, Hh[NP - 1], 1), dn = __shfl_down_sync(A4_FULL, Hh[0], 1);
      if (lane == 0) up = A4_BIG2;
      if (lane == 31) dn = A4_BIG2;
      unsigned Ln[NP];
      a4_step<NP>(Hh, up, dn, mh, C, P1, P2, Ln);
#pragma unroll
      for (int h = 0; h < NP; ++h) Hh[h] = Ln[h];
    }
    mh = a4_min<NP>(Hh);
#pragma unroll
    for (int h = 0; h < NP; ++h) sum[h] = Hh[h];
    if (REV) {
      const unsigned* q = s1 + (r * LAND + t % LAND) * HW + lane * NP;
#pragma unroll
      for (int h = 0; h < NP; ++h) sum[h] += q[h];
    }

    // vertical and diagonal: the row before (v 0: (i, row-1), 1: (i-1, row-1), 2: (i+1, row-1))
#pragma unroll
    for (int v = 0; v < NV; ++v) {
      const int offv = v == 0 ? 0 : (v == 1 ? -1 : 1);
      const bool fresh = gr == 0 || i + offv < 0 || i + offv >= W;
      unsigned Ln[NP];
      if (fresh) {
#pragma unroll
        for (int h = 0; h < NP; ++h) Ln[h] = C[h];
      } else {
        unsigned Lp[NP];
        int mp;
        if (r > 0) {
          const unsigned* rec = ring + (((r - 1) * 4 + ((t - SKEW + offv) & 3)) * NV + v) * RW;
#pragma unroll
          for (int h = 0; h < NP; ++h) Lp[h] = rec[lane * NP + h];
          mp = (int)rec[HW];
        } else {
          const uint2* rec = land + ((t % LAND) * NV + v) * BW;
          bool ok = true;
#pragma unroll
          for (int h = 0; h < NP; ++h) {
            const uint2 u = rec[lane * NP + h];
            Lp[h] = u.x;
            ok = ok && u.y == epoch;
          }
          const uint2 um = rec[HW];
          mp = (int)um.x;
          ok = ok && um.y == epoch;
          if (!__all_sync(A4_FULL, ok)) {  // not yet written when copied: read until it is
            const unsigned long long* g =
                (const unsigned long long*)(bnd + (((size_t)(band - 1) * W + (i + offv)) * NV + v) * BW);
            do {
              ok = true;
#pragma unroll
              for (int h = 0; h < NP; ++h) {
                const unsigned long long u = a4_ld_strong(g + lane * NP + h);
                Lp[h] = (unsigned)u;
                ok = ok && (unsigned)(u >> 32) == epoch;
              }
              const unsigned long long u = a4_ld_strong(g + HW);
              mp = (int)(unsigned)u;
              ok = ok && (unsigned)(u >> 32) == epoch;
            } while (!__all_sync(A4_FULL, ok));
          }
        }
        unsigned up = __shfl_up_sync(A4_FULL, Lp[NP - 1], 1), dn = __shfl_down_sync(A4_FULL, Lp[0], 1);
        if (lane == 0) up = A4_BIG2;
        if (lane == 31) dn = A4_BIG2;
        a4_step<NP>(Lp, up, dn, mp, C, P1, P2, Ln);
      }
      const int mv = a4_min<NP>(Ln);
#pragma unroll
      for (int h = 0; h < NP; ++h) sum[h] += Ln[h];
      // hand down: the ring (rows of this band), the boundary (the next band)
      if (r + 1 < NR) {
        unsigned* rec = ring + ((r * 4 + (t & 3)) * NV + v) * RW;
#pragma unroll
        for (int h = 0; h < NP; ++h) rec[lane * NP + h] = Ln[h];
        if (lane == 0) rec[HW] = (unsigned)mv;
      } else if (gr + 1 < H) {
        uint2* rec = bnd + (((size_t)band * W + i) * NV + v) * BW;
#pragma unroll
        for (int h = 0; h < NP; ++h) rec[lane * NP + h] = make_uint2(Ln[h], epoch);
        if (lane == 0) rec[HW] = make_uint2((unsigned)mv, epoch);
      }
    }
    // S1 (pass 1) or S (pass 2, in place of S1)
    unsigned* dst = S + (cell0 + x) * HW + lane * NP;
#pragma unroll
    for (int h = 0; h < NP; ++h) dst[h] = sum[h];
  }
  a4_wait<0>();
}

#define SGM_AGG4_ENTRY(NAME, K, DIAG, REV)                                                                        \
  extern "C" __global__ void __launch_bounds__(A4_MAX_THREADS, 1)                                                \
      NAME(const unsigned* __restrict__ census_left, const unsigned* __restrict__ census_right, const int pitch,  \
           const int off, unsigned* __restrict__ S, uint2* __restrict__ bnd, int* __restrict__ ticket,             \
           const unsigned epoch, const int W, const int H, const int dmin, const int D, const int P1,             \
           const int P2) {                                                                                       \
    a4_body<K, DIAG, REV>(census_left, census_right, pitch, off, S, bnd, ticket, epoch, W, H, dmin, D, P1, P2); \
  }

SGM_AGG4_ENTRY(sgm_aggregate4_k2_p4_fwd, 2, false, false)
SGM_AGG4_ENTRY(sgm_aggregate4_k2_p4_rev, 2, false, true)
SGM_AGG4_ENTRY(sgm_aggregate4_k2_p8_fwd, 2, true, false)
SGM_AGG4_ENTRY(sgm_aggregate4_k2_p8_rev, 2, true, true)
SGM_AGG4_ENTRY(sgm_aggregate4_k4_p4_fwd, 4, false, false)
SGM_AGG4_ENTRY(sgm_aggregate4_k4_p4_rev, 4, false, true)
SGM_AGG4_ENTRY(sgm_aggregate4_k4_p8_fwd, 4, true, false)
SGM_AGG4_ENTRY(sgm_aggregate4_k4_p8_rev, 4, true, true)
SGM_AGG4_ENTRY(sgm_aggregate4_k8_p4_fwd, 8, false, false)
SGM_AGG4_ENTRY(sgm_aggregate4_k8_p4_rev, 8, false, true)
SGM_AGG4_ENTRY(sgm_aggregate4_k8_p8_fwd, 8, true, false)
SGM_AGG4_ENTRY(sgm_aggregate4_k8_p8_rev, 8, true, true)
SGM_AGG4_ENTRY(sgm_aggregate4_k16_p4_fwd, 16, false, false)
SGM_AGG4_ENTRY(sgm_aggregate4_k16_p4_rev, 16, false, true)
SGM_AGG4_ENTRY(sgm_aggregate4_k16_p8_fwd, 16, true, false)
SGM_AGG4_ENTRY(sgm_aggregate4_k16_p8_rev, 16, true, true)
