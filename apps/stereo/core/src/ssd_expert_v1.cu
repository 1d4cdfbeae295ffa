// SSD block matching, the first expert kernel (v1; kept beside the current one,
// kernels/original/stereo/ssd_expert.cu, for comparison and for windows wider than 17): the same result as Stam's stereoKernel (stereo.cu) and
// evk::stereo::disparity_cpu, bit for bit -- for each left pixel the first d (ascending) whose SSD
// over the (2r+1)^2 window of (L(x+i, y+j) - R(x+i-d, y+j))^2, reads clamped to the image, is
// strictly smaller than every earlier one and than min_ssd; else -1.
//
// A block owns an output tile of TX x TY pixels and walks the disparities in chunks of DC:
//   stage   the tile's left pixels (with the r halo) once, the right pixels of each chunk, in shared
//           memory (clamped reads)
//   phase 1 vertical sums V(d, x, y) = sum_j (L - R)^2 over the window rows: one thread per halo
//           column and row segment, DC disparities at once, the window slid down the segment
//           (one row in, one row out per step)
//   phase 2 horizontal sums: one thread per output row and run of XR columns, the window slid
//           along the run from V in shared memory (vector loads), best/arg-best kept in registers
//           across all chunks (strict <, d ascending: the first minimum)
// Every partial sum is an exact int (window <= 181: the SSD fits 31 bits).
//
// A support kernel (not evolved): compiled into the ssd_expert fatbin by ssd_expert_variants.cu.
#define EX1_TX 64          // output columns per block
#define EX1_TY 32          // output rows per block
#define EX1_DC 4           // disparities per chunk
#define EX1_XR 8           // output columns per thread in phase 2
#define EX1_THREADS 256    // (EX1_TX / EX1_XR) * EX1_TY
#define EX1_SEGS 4         // row segments per halo column in phase 1

#ifndef EVK_DYN_SMEM
#define EVK_DYN_SMEM(type, name) extern __shared__ type name[]
#endif

// Phase 1 of a chunk: V(j, row, c) for halo column c, rows of one segment; disparity d0 + j pairs
// left column c with right entry c + DC - 1 - j (lt, rt, v and the pitches as in ssd_expert_v1_body).
__device__ __forceinline__ void ex1_vertical_sums(unsigned char* const lt, unsigned char* const rt, int* const v,
                                                  const int tid, const int r, const int win, const int hw, const int lp,
                                                  const int rp, const int vp, const int seg_rows) {
  for (int item = tid; item < hw * EX1_SEGS; item += EX1_THREADS) {
    const int c = item % hw, seg = item / hw;
    const int ra = seg * seg_rows;  // first output row of the segment (tile coordinates)
    int s[EX1_DC];
#pragma unroll
    for (int j = 0; j < EX1_DC; ++j) s[j] = 0;
    for (int t = 0; t < win; ++t) {  // rows ra .. ra + 2r of the tile = output row ra's window
      const int a = lt[(ra + t) * lp + c];
#pragma unroll
      for (int j = 0; j < EX1_DC; ++j) {
        const int e = a - rt[(ra + t) * rp + c + EX1_DC - 1 - j];
        s[j] += e * e;
      }
    }
#pragma unroll
    for (int j = 0; j < EX1_DC; ++j) v[(j * EX1_TY + ra) * vp + c] = s[j];
    for (int yy = ra + 1; yy < ra + seg_rows; ++yy) {
      const int ain = lt[(yy + 2 * r) * lp + c], aout = lt[(yy - 1) * lp + c];
#pragma unroll
      for (int j = 0; j < EX1_DC; ++j) {
        const int ein = ain - rt[(yy + 2 * r) * rp + c + EX1_DC - 1 - j];
        const int eout = aout - rt[(yy - 1) * rp + c + EX1_DC - 1 - j];
        s[j] += ein * ein - eout * eout;
        v[(j * EX1_TY + yy) * vp + c] = s[j];
      }
    }
  }
}

// Shared-memory layout, shared with the host (ssd_expert_v1_smem in apps/stereo/core/src/ssd_expert.cpp):
//   lt  (TY + 2r) rows of lp bytes (lp = TX + 2r rounded up to 16)
//   rt  (TY + 2r) rows of rp bytes (rp = TX + 2r + DC - 1 rounded up to 16)
//   v   DC * TY rows of vp ints (vp = TX + 2r rounded up to 4, + 4: the vector loads of phase 2 read
//       XR + 2r rounded up to 4 values)
// R > 0: the radius at compile time (phase 2 reads its V run with 16-byte loads into registers);
// R == 0: any radius r at run time (scalar loads).
template <int R>
__device__ __forceinline__ void ssd_expert_v1_body(const unsigned char* __restrict__ left,
                                                const unsigned char* __restrict__ right, int* __restrict__ out,
                                                const int W, const int H, const int dmin, const int dmax, const int r_arg,
                                                const int min_ssd, unsigned char* __restrict__ smem) {
  const int r = R > 0 ? R : r_arg;
  const int win = 2 * r + 1;
  const int hw = EX1_TX + 2 * r;  // halo width
  const int lp = (hw + 15) / 16 * 16, rp = (hw + EX1_DC - 1 + 15) / 16 * 16;
  const int vp = (hw + 3) / 4 * 4 + 4;
  const int rows = EX1_TY + 2 * r;
  unsigned char* const lt = smem;
  unsigned char* const rt = lt + rows * lp;
  int* const v = (int*)(rt + rows * rp);
  const int x0 = blockIdx.x * EX1_TX, y0 = blockIdx.y * EX1_TY;
  const int tid = threadIdx.x;

  // left tile: columns x0 - r .., rows y0 - r .., clamped
  for (int i = tid; i < rows * hw; i += EX1_THREADS) {
    const int ty = i / hw, tx = i % hw;
    const int y = min(max(y0 - r + ty, 0), H - 1), x = min(max(x0 - r + tx, 0), W - 1);
    lt[ty * lp + tx] = left[(size_t)y * W + x];
  }

  // phase-2 thread: output row py, columns px .. px + XR - 1
  const int py = tid / (EX1_TX / EX1_XR), px = (tid % (EX1_TX / EX1_XR)) * EX1_XR;
  int best[EX1_XR], bestd[EX1_XR];
#pragma unroll
  for (int k = 0; k < EX1_XR; ++k) {
    best[k] = min_ssd;
    bestd[k] = -1;
  }
  const int seg_rows = EX1_TY / EX1_SEGS;

  for (int d0 = dmin; d0 <= dmax; d0 += EX1_DC) {
    // right tile of this chunk: entry j of a row is column x0 - r - d0 - (DC - 1) + j
    const int rw = hw + EX1_DC - 1;
    for (int i = tid; i < rows * rw; i += EX1_THREADS) {
      const int ty = i / rw, tx = i % rw;
      const int y = min(max(y0 - r + ty, 0), H - 1), x = min(max(x0 - r - d0 - (EX1_DC - 1) + tx, 0), W - 1);
      rt[ty * rp + tx] = right[(size_t)y * W + x];
    }
    __syncthreads();

    ex1_vertical_sums(lt, rt, v, tid, r, win, hw, lp, rp, vp, seg_rows);
    __syncthreads();

    // phase 2: window sums along the run, V columns px .. px + XR - 1 + 2r
    const int nd = min(EX1_DC, dmax - d0 + 1);
    for (int j = 0; j < nd; ++j) {
      const int* row = v + (j * EX1_TY + py) * vp + px;  // 16-byte aligned: px % 8 == 0, vp % 4 == 0
      int sum = 0;
      if (R > 0) {
        constexpr int n4 = (EX1_XR + 2 * R + 3) / 4;  // inside the padded row (vp = hw rounded up + 4)
        int q[4 * n4];
#pragma unroll
        for (int i = 0; i < n4; ++i) {
          const int4 t4 = ((const int4*)row)[i];
          q[4 * i] = t4.x;
          q[4 * i + 1] = t4.y;
          q[4 * i + 2] = t4.z;
          q[4 * i + 3] = t4.w;
        }
#pragma unroll
        for (int t = 0; t < 2 * R + 1; ++t) sum += q[t];
#pragma unroll
        for (int k = 0; k < EX1_XR; ++k) {
          if (k > 0) sum += q[k + 2 * R] - q[k - 1];
          if (sum < best[k]) {
            best[k] = sum;
            bestd[k] = d0 + j;
          }
        }
      } else {
        for (int t = 0; t < win; ++t) sum += row[t];
#pragma unroll
        for (int k = 0; k < EX1_XR; ++k) {
          if (k > 0) sum += row[k + 2 * r] - row[k - 1];
          if (sum < best[k]) {
            best[k] = sum;
            bestd[k] = d0 + j;
          }
        }
      }
    }
    __syncthreads();  // V and the right tile are rewritten by the next chunk
  }

  const int y = y0 + py;
  if (y < H) {
#pragma unroll
    for (int k = 0; k < EX1_XR; ++k) {
      const int x = x0 + px + k;
      if (x < W) out[(size_t)y * W + x] = bestd[k];
    }
  }
}

#define SSD_EXPERT_V1_ENTRY(NAME, R)                                                                                  \
  extern "C" __global__ void __launch_bounds__(EX1_THREADS)                                                       \
      NAME(const unsigned char* __restrict__ left, const unsigned char* __restrict__ right, int* __restrict__ out, \
           const int W, const int H, const int dmin, const int dmax, const int r, const int min_ssd) {            \
    EVK_DYN_SMEM(unsigned char, smem);                                                                           \
    ssd_expert_v1_body<R>(left, right, out, W, H, dmin, dmax, r, min_ssd, smem);                                    \
  }

SSD_EXPERT_V1_ENTRY(ssd_expert_v1, 0)
SSD_EXPERT_V1_ENTRY(ssd_expert_v1_r1, 1)
SSD_EXPERT_V1_ENTRY(ssd_expert_v1_r2, 2)
SSD_EXPERT_V1_ENTRY(ssd_expert_v1_r3, 3)
SSD_EXPERT_V1_ENTRY(ssd_expert_v1_r4, 4)
SSD_EXPERT_V1_ENTRY(ssd_expert_v1_r5, 5)
SSD_EXPERT_V1_ENTRY(ssd_expert_v1_r6, 6)
SSD_EXPERT_V1_ENTRY(ssd_expert_v1_r7, 7)
SSD_EXPERT_V1_ENTRY(ssd_expert_v1_r8, 8)
