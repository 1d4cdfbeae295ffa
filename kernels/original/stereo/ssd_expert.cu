// SSD block matching, an expert kernel (v2): the same result as Stam's stereoKernel (stereo.cu) and
// evk::stereo::disparity_cpu, bit for bit -- for each left pixel the first d (ascending) whose SSD
// over the (2R+1)^2 window of (L(x+i, y+j) - R(x+i-d, y+j))^2, reads clamped to the image, is
// strictly smaller than every earlier one and than min_ssd; else -1.
//
// A block owns an output tile of EX_TX x EX_TY pixels and walks the disparities in super-chunks of
// EX_DS (one staging of the right image) and chunks of EX_DC (one pass of the two phases):
//   stage   the tile's left pixels (with the R halo) once, the right strip of each super-chunk, in
//           shared memory, transposed and packed: word (q, c) holds rows 4q..4q+3 of column c
//           (byte b = row 4q + b), reads clamped to the image
//   phase 1 vertical sums V(d, c, y) = sum of the 2R+1 rows y..y+2R of (L - R)^2, one thread per
//           (halo column, disparity): per word of 4 rows one __vabsdiffu4 (exact |L - R| per byte)
//           and four __dp4a (sums of squares of the first 1, 2, 3, 4 bytes) extend the column's
//           running prefix sums P by four rows; V(y) = P(y + 2R + 1) - P(y). Two shared loads per
//           four rows instead of two per row.
//   phase 2 horizontal sums: one thread per output row and run of EX_XR columns, the window slid
//           along the run from V in shared memory (16-byte loads), best/arg-best in registers across
//           all chunks (strict <, d ascending: the first minimum; min_ssd as the initial best)
// Every partial sum is an exact unsigned/int (P <= (EX_TY + 2R + 3) 65025 < 2^31; SSD <= 289 65025).
//
// Configuration (-D; the tool's fatbin includes this file once per radius, ssd_expert_variants.cu):
//   EX_R   window radius, 1..8, compile time (wider windows: the v1 kernel)
//   EX_TY  output rows per block, a multiple of 8 (threads = 8 EX_TY); EX_DC disparities per chunk;
//   EX_DS  disparities per staged right strip (a multiple of EX_DC not required)
// Launch: grid (ceil(W / 64), ceil(H / EX_TY)), EX_THREADS threads, dynamic shared memory
// 4 (EX_VOFF + EX_DC EX_TY EX_VP) bytes (ssd_expert_smem in apps/stereo/core/src/ssd_expert.cpp).
//
// A GI seed (problem stereo_expert, apps/stereo/core/src/gi_problem.cpp): the region between
// //@gi begin and //@gi end is what GI edits. Self-contained (no includes): NVRTC compiles this text.
#ifndef EX_R
#define EX_R 5
#endif
#ifndef EX_TY
#define EX_TY 32
#endif
#ifndef EX_DC
#define EX_DC 3
#endif
#ifndef EX_DS
#define EX_DS 128
#endif
#ifndef EX_MINB
#define EX_MINB (1024 / EX_THREADS)  // blocks per SM the registers must allow: at most 64 per thread
#endif
#define EX_TX 64
#define EX_XR 8
#define EX_THREADS (8 * EX_TY)
#define EX_WIN (2 * EX_R + 1)
#define EX_HW (EX_TX + 2 * EX_R)
#define EX_ROWS4 ((EX_TY + 2 * EX_R + 3) / 4)
#define EX_VP4 ((EX_HW + 3) / 4 * 4)
#define EX_VP (EX_VP4 % 8 == 0 ? EX_VP4 + 4 : EX_VP4)
#define EX_N4 ((EX_XR + 2 * EX_R + 3) / 4)
#define EX_VOFF ((EX_ROWS4 * (2 * EX_HW + EX_DS - 1) + 3) / 4 * 4)

#ifndef EVK_DYN_SMEM
#define EVK_DYN_SMEM(type, name) extern __shared__ type name[]
#endif

#ifndef SSD_EXPERT_HELPERS  // once, however often the file is included
#define SSD_EXPERT_HELPERS
// Rows y..y+3 of column x (each clamped to the image), byte b = row y + b.
__device__ __forceinline__ unsigned ex_pack4(const unsigned char* __restrict__ img, const int W, const int H,
                                             const int x, const int y) {
  const unsigned char* col = img + min(max(x, 0), W - 1);
  unsigned r = 0;
#pragma unroll
  for (int b = 0; b < 4; ++b) r |= (unsigned)__ldg(col + (size_t)min(max(y + b, 0), H - 1) * W) << (8 * b);
  return r;
}
#endif

// V layout: EX_VP (= 4 mod 8) ints per row, so the 8 threads of a quarter warp (4 runs x 2 rows) read
// distinct bank groups in phase 2.
extern "C" __global__ void __launch_bounds__(EX_THREADS, EX_MINB) ssd_expert(
    const unsigned char* __restrict__ left, const unsigned char* __restrict__ right, int* __restrict__ out, const int W,
    const int H, const int dmin, const int dmax, const int min_ssd) {
  EVK_DYN_SMEM(unsigned, ex_smem);
  unsigned* lt;
  unsigned* rt;
  int* v;
  int* vcol;
  const int* vrow;
  int x0, y0, tid, i, q, k, c, j, m, t, yy, x, y, wq, py, px, ds0, nds, rw, d0, nd, item, roff, sum;
  unsigned w, lw;
  unsigned P[4 * EX_ROWS4 + 1] = {};  // value-initialised, as best, bestd, qv and t4: a GI edit that reads one before setting it
  int best[EX_XR] = {}, bestd[EX_XR] = {}, qv[4 * EX_N4] = {};  // reads zeros, not undefined values (see the end of the file)
  int4 t4 = {};
//@gi begin
  lt = ex_smem;
  rt = lt + EX_ROWS4 * EX_HW;
  v = (int*)(ex_smem + EX_VOFF);
  x0 = blockIdx.x * EX_TX;
  y0 = blockIdx.y * EX_TY;
  tid = threadIdx.x;
  // left tile: word (q, c) = rows y0 - R + 4q .. +3 of column x0 - R + c
  for (i = tid; i < EX_ROWS4 * EX_HW; i += EX_THREADS) {
    lt[i] = ex_pack4(left, W, H, x0 - EX_R + i % EX_HW, y0 - EX_R + 4 * (i / EX_HW));
  }
  // phase-2 thread: output row py, columns px .. px + EX_XR - 1; a warp covers 8 rows x 4 runs
  wq = tid >> 5;
  py = 8 * (wq >> 1) + ((tid >> 2) & 7);
  px = EX_XR * (4 * (wq & 1) + (tid & 3));
  for (k = 0; k < EX_XR; k++) {
    best[k] = min_ssd;
    bestd[k] = -1;
  }
  for (ds0 = dmin; ds0 <= dmax; ds0 += EX_DS) {
    nds = min(EX_DS, dmax - ds0 + 1);
    rw = EX_HW + nds - 1;
    // right strip: word (q, k) = rows y0 - R + 4q .. +3 of column x0 - R - ds0 - (nds - 1) + k;
    // disparity ds0 + jj pairs left column c with entry c + nds - 1 - jj
    for (i = tid; i < EX_ROWS4 * rw; i += EX_THREADS) {
      rt[i] = ex_pack4(right, W, H, x0 - EX_R - ds0 - (nds - 1) + i % rw, y0 - EX_R + 4 * (i / rw));
    }
    __syncthreads();
    for (d0 = ds0; d0 < ds0 + nds; d0 += EX_DC) {
      nd = min(EX_DC, ds0 + nds - d0);
      // phase 1: V(j, y, c) for the chunk's disparities d0 + j
      for (item = tid; item < EX_HW * nd; item += EX_THREADS) {
        c = item % EX_HW;
        j = item / EX_HW;
        roff = c + nds - 1 - (d0 - ds0 + j);
        vcol = v + j * EX_TY * EX_VP + c;
        P[0] = 0;
#pragma unroll
        for (q = 0; q < EX_ROWS4; q++) {
          lw = lt[q * EX_HW + c];
          w = __vabsdiffu4(lw, rt[q * rw + roff]);
          P[4 * q + 1] = __dp4a(w, w & 0xffu, P[4 * q]);
          P[4 * q + 2] = __dp4a(w, w & 0xffffu, P[4 * q]);
          P[4 * q + 3] = __dp4a(w, w & 0xffffffu, P[4 * q]);
          P[4 * q + 4] = __dp4a(w, w, P[4 * q]);
#pragma unroll
          for (m = 1; m <= 4; m++) {
            yy = 4 * q + m - EX_WIN;
            if (yy >= 0 && yy < EX_TY) {
              vcol[yy * EX_VP] = (int)(P[4 * q + m] - P[yy]);
            }
          }
        }
      }
      __syncthreads();
      // phase 2: window sums along the run, V columns px .. px + EX_XR - 1 + 2R
      for (j = 0; j < nd; j++) {
        vrow = v + (j * EX_TY + py) * EX_VP + px;
#pragma unroll
        for (i = 0; i < EX_N4; i++) {
          t4 = ((const int4*)vrow)[i];
          qv[4 * i] = t4.x;
          qv[4 * i + 1] = t4.y;
          qv[4 * i + 2] = t4.z;
          qv[4 * i + 3] = t4.w;
        }
        sum = 0;
#pragma unroll
        for (t = 0; t < EX_WIN; t++) {
          sum += qv[t];
        }
#pragma unroll
        for (k = 0; k < EX_XR; k++) {
          if (k > 0) {
            sum += qv[k + 2 * EX_R] - qv[k - 1];
          }
          if (sum < best[k]) {
            best[k] = sum;
            bestd[k] = d0 + j;
          }
        }
      }
      __syncthreads();  // V (and, after the last chunk, the right strip) is rewritten next
    }
  }
  y = y0 + py;
  if (y < H) {
#pragma unroll
    for (k = 0; k < EX_XR; k++) {
      x = x0 + px + k;
      if (x < W) {
        out[(size_t)y * W + x] = bestd[k];
      }
    }
  }
//@gi end
}

// Reads before writes (docs/GI.md). NVRTC's warning #549 (a refusal in nvrtc_compile) fires only for a
// scalar read in straight-line code before any assignment, never for an array or struct. So P, best,
// bestd, qv and t4 are value-initialised: a GI edit that deletes or swaps their fill reads zeros.
// Every configuration tried (EX_R 1..8, EX_TY, EX_DC, EX_DS) compiles to a byte-identical cubin: the
// optimiser drops the zeros wherever the original writes before it reads. Left as they are: the shared
// tiles lt, rt and v (every word written before the barrier that guards its reads) and the scalars (an
// initialiser would silence #549 where it does fire).
