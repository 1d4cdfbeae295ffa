// reg_deform affine: GPU support kernels (not evolved) for block-matching registration.
// Self-contained; embedded by evk_add_kernel and loaded through the library API.
//   aff_warp_linear  : floating image -> reference grid through a voxel->voxel affine, trilinear,
//                      NaN outside [0, n-1] (1e-4 voxel slack), one thread per reference voxel.
//   aff_match_blocks : one CUDA block per active 4x4x4 reference block; the 10x10x10 warped
//                      neighbourhood in shared memory; one thread per displacement in [-3, 3]^3
//                      computes |NCC| over the voxels valid in both (> 32 needed); argmax over the
//                      343 candidates (ties: lowest index, i.e. z, y, x order), and the sub-voxel
//                      parabola step per axis, as block_match.hpp.
//
// Bit-identical to the CPU reference (block_match.cpp, compiled with -ffp-contract=off): the same
// operations in the same order in double precision, each written as an explicitly rounded
// intrinsic (__dmul_rn, __dadd_rn, __dsub_rn, __ddiv_rn, __dsqrt_rn), which the compiler never
// contracts into FMAs; the file is also compiled with -fmad=false. IEEE double +, -, *, / and sqrt
// are correctly rounded on both sides, so both produce the same bits.

struct Affine34d {  // p = M * (i, j, k, 1), rows of 4, double (the CPU's voxel map as it is)
  double m[12];
};

struct Match {  // = evk::reg_deform::BlockMatch (32 bytes)
  int dx, dy, dz;
  float ncc;
  float fx, fy, fz, reserved;
};

#define AFF_BW 4                     // block width
#define AFF_R 3                      // capture range
#define AFF_NB (AFF_BW + 2 * AFF_R)  // 10: neighbourhood width
#define AFF_NC 343                   // candidates
#define AFF_THREADS 352              // 11 warps
#define AFF_NAN 0x7fc00000           // the CPU's quiet_NaN bits

// ((m0 * i + m1 * j) + m2 * k) + m3, rounded after each operation (the CPU's order).
__device__ __forceinline__ double aff_row(const double* m, double i, double j, double k) {
  return __dadd_rn(__dadd_rn(__dadd_rn(__dmul_rn(m[0], i), __dmul_rn(m[1], j)), __dmul_rn(m[2], k)), m[3]);
}

extern "C" __global__ void aff_warp_linear(const float* __restrict__ flo, const int fx, const int fy, const int fz,
                                           const int nx, const int ny, const int nz, const Affine34d a,
                                           float* __restrict__ out) {
  const size_t n = (size_t)nx * ny * nz;
  const size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (v >= n) return;
  const double i = (double)(int)(v % nx), j = (double)(int)((v / nx) % ny), k = (double)(int)(v / ((size_t)nx * ny));
  double p[3] = {aff_row(a.m, i, j, k), aff_row(a.m + 4, i, j, k), aff_row(a.m + 8, i, j, k)};
  const int nn[3] = {fx, fy, fz};
  const double eps = 1e-4;
  for (int d = 0; d < 3; ++d)
    if (!(p[d] >= -eps && p[d] <= __dadd_rn((double)(nn[d] - 1), eps))) {
      out[v] = __int_as_float(AFF_NAN);
      return;
    }
  int lo[3], hi[3];
  double w[3][2];
  for (int d = 0; d < 3; ++d) {
    const double q = fmin(fmax(p[d], 0.0), (double)(nn[d] - 1));  // exact
    lo[d] = (int)floor(q);
    hi[d] = min(lo[d] + 1, nn[d] - 1);
    const double f = __dsub_rn(q, (double)lo[d]);
    w[d][0] = __dsub_rn(1.0, f);
    w[d][1] = f;
  }
  const size_t sxy = (size_t)fx * fy;
  double s = 0;
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b)
      for (int q = 0; q < 2; ++q) {
        const double wt = __dmul_rn(__dmul_rn(w[0][q], w[1][b]), w[2][c]);
        if (wt != 0.0) {
          const size_t idx = (size_t)(c ? hi[2] : lo[2]) * sxy + (size_t)(b ? hi[1] : lo[1]) * fx + (q ? hi[0] : lo[0]);
          s = __dadd_rn(s, __dmul_rn(wt, (double)flo[idx]));
        }
      }
  out[v] = __double2float_rn(s);
}

// block_match.cpp's subvoxel_offset, operation for operation.
__device__ double aff_subvoxel(double cm, double c0, double cp) {
  if (!(cm >= 0 && cp >= 0)) return 0;
  const double two = __dadd_rn(c0, c0);
  const double t = __dsub_rn(cm, two);
  const double den = __dadd_rn(t, cp);
  if (!(den < 0)) return 0;
  const double num = __dsub_rn(cm, cp);
  const double h = __dmul_rn(0.5, num);
  const double f = __ddiv_rn(h, den);
  return f < -0.5 ? -0.5 : f > 0.5 ? 0.5 : f;
}

__device__ __forceinline__ bool aff_better(double c, int i, double bc, int bi) {
  return c > bc || (c == bc && i < bi);
}

// mask: nullptr = every voxel active. active: block indices (x fastest over bx * by blocks).
extern "C" __global__ void __launch_bounds__(AFF_THREADS) aff_match_blocks(
    const float* __restrict__ ref, const unsigned char* __restrict__ mask, const float* __restrict__ warped,
    const int nx, const int ny, const int nz, const int bx, const int by, const int* __restrict__ active,
    const int count, Match* __restrict__ out) {
  __shared__ float rv[64];
  __shared__ float wv[AFF_NB * AFF_NB * AFF_NB];
  __shared__ double cs[AFF_NC];  // every candidate's |NCC| (-1: none), for the sub-voxel step
  __shared__ double best_c[AFF_THREADS / 32];
  __shared__ int best_i[AFF_THREADS / 32];
  const int blk = blockIdx.x;
  if (blk >= count) return;
  const int b = active[blk];
  const int x0 = (b % bx) * AFF_BW, y0 = ((b / bx) % by) * AFF_BW, z0 = (b / (bx * by)) * AFF_BW;
  const int t = threadIdx.x;
  const float nan = __int_as_float(AFF_NAN);
  const size_t sxy = (size_t)nx * ny;
  if (t < 64) {  // reference block: NaN marks unusable voxels (outside, masked out, non-finite)
    const int x = x0 + (t & 3), y = y0 + ((t >> 2) & 3), z = z0 + (t >> 4);
    float v = nan;
    if (x < nx && y < ny && z < nz) {
      const size_t i = z * sxy + (size_t)y * nx + x;
      const float r = ref[i];
      if (isfinite(r) && (mask == nullptr || mask[i] != 0)) v = r;
    }
    rv[t] = v;
  }
  for (int k = t; k < AFF_NB * AFF_NB * AFF_NB; k += blockDim.x) {
    const int x = x0 - AFF_R + k % AFF_NB, y = y0 - AFF_R + (k / AFF_NB) % AFF_NB, z = z0 - AFF_R + k / (AFF_NB * AFF_NB);
    float v = nan;
    if (x >= 0 && y >= 0 && z >= 0 && x < nx && y < ny && z < nz) {
      v = warped[z * sxy + (size_t)y * nx + x];
      if (!isfinite(v)) v = nan;
    }
    wv[k] = v;
  }
  __syncthreads();
  // The CPU's ncc_at, operation for operation: sums in the order a = 0..63 (z, y, x), then the
  // centred second pass; -1 marks "not a candidate".
  double c = -1.0;
  if (t < AFF_NC) {
    const int dx = t % 7, dy = (t / 7) % 7, dz = t / 49;  // offsets + 3
    int n = 0;
    double sr = 0, sw = 0;
    for (int a = 0; a < 64; ++a) {
      const float r = rv[a];
      const float w = wv[((a >> 4) + dz) * 100 + (((a >> 2) & 3) + dy) * 10 + (a & 3) + dx];
      if (r == r && w == w) {
        sr = __dadd_rn(sr, (double)r);
        sw = __dadd_rn(sw, (double)w);
        ++n;
      }
    }
    if (n > 32) {
      const double mr = __ddiv_rn(sr, (double)n), mw = __ddiv_rn(sw, (double)n);
      double vr = 0, vw = 0, cv = 0;
      for (int a = 0; a < 64; ++a) {
        const float r = rv[a];
        const float w = wv[((a >> 4) + dz) * 100 + (((a >> 2) & 3) + dy) * 10 + (a & 3) + dx];
        if (r == r && w == w) {
          const double p = __dsub_rn((double)r, mr), q = __dsub_rn((double)w, mw);
          vr = __dadd_rn(vr, __dmul_rn(p, p));
          vw = __dadd_rn(vw, __dmul_rn(q, q));
          cv = __dadd_rn(cv, __dmul_rn(p, q));
        }
      }
      const double d = __dmul_rn(vr, vw);
      c = d > 0 ? __ddiv_rn(fabs(cv), __dsqrt_rn(d)) : 0.0;
    }
  }
  if (t < AFF_NC) cs[t] = c;
  // argmax: within the warp, then across the 11 warps (exact comparisons: the CPU's first maximum)
  int ci = t;
  for (int off = 16; off > 0; off >>= 1) {
    const double oc = __shfl_down_sync(0xffffffffu, c, off);
    const int oi = __shfl_down_sync(0xffffffffu, ci, off);
    if (aff_better(oc, oi, c, ci)) {
      c = oc;
      ci = oi;
    }
  }
  if ((t & 31) == 0) {
    best_c[t >> 5] = c;
    best_i[t >> 5] = ci;
  }
  __syncthreads();
  if (t == 0) {
    double bc = best_c[0];
    int bi = best_i[0];
    for (int w = 1; w < AFF_THREADS / 32; ++w)
      if (aff_better(best_c[w], best_i[w], bc, bi)) {
        bc = best_c[w];
        bi = best_i[w];
      }
    Match m;
    if (bc > 0) {
      m.dx = bi % 7 - AFF_R;
      m.dy = (bi / 7) % 7 - AFF_R;
      m.dz = bi / 49 - AFF_R;
      m.ncc = __double2float_rn(bc);
      const int ix = bi % 7, iy = (bi / 7) % 7, iz = bi / 49;
      m.fx = __double2float_rn(aff_subvoxel(ix > 0 ? cs[bi - 1] : -1.0, bc, ix < 6 ? cs[bi + 1] : -1.0));
      m.fy = __double2float_rn(aff_subvoxel(iy > 0 ? cs[bi - 7] : -1.0, bc, iy < 6 ? cs[bi + 7] : -1.0));
      m.fz = __double2float_rn(aff_subvoxel(iz > 0 ? cs[bi - 49] : -1.0, bc, iz < 6 ? cs[bi + 49] : -1.0));
    } else {
      m.dx = m.dy = m.dz = 0;
      m.ncc = 0;
      m.fx = m.fy = m.fz = 0;
    }
    m.reserved = 0;
    out[blk] = m;
  }
}
