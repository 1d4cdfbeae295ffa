// reg_deform affine: GPU support kernels (not evolved) for block-matching registration.
// Self-contained; embedded by evk_add_kernel and loaded through the library API.
//   aff_warp_linear  : floating image -> reference grid through a voxel->voxel affine, trilinear,
//                      NaN outside [0, n-1] (1e-4 voxel slack), one thread per reference voxel.
//   aff_match_blocks : one CUDA block per active 4x4x4 reference block; the 10x10x10 warped
//                      neighbourhood in shared memory; one thread per displacement in [-3, 3]^3
//                      computes |NCC| over the voxels valid in both (> 32 needed); argmax over the
//                      343 candidates (ties: lowest index, i.e. z, y, x order), as block_match.hpp.

struct Affine34 {  // p = M * (i, j, k, 1), rows of 4
  float m[12];
};

struct Match {  // = evk::reg_deform::BlockMatch
  int dx, dy, dz;
  float ncc;
};

#define AFF_BW 4                 // block width
#define AFF_R 3                  // capture range
#define AFF_NB (AFF_BW + 2 * AFF_R)  // 10: neighbourhood width
#define AFF_NC 343               // candidates
#define AFF_THREADS 352          // 11 warps

extern "C" __global__ void aff_warp_linear(const float* __restrict__ flo, const int fx, const int fy, const int fz,
                                           const int nx, const int ny, const int nz, const Affine34 a,
                                           float* __restrict__ out) {
  const size_t n = (size_t)nx * ny * nz;
  const size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (v >= n) return;
  const float i = (float)(v % nx), j = (float)((v / nx) % ny), k = (float)(v / ((size_t)nx * ny));
  float px = a.m[0] * i + a.m[1] * j + a.m[2] * k + a.m[3];
  float py = a.m[4] * i + a.m[5] * j + a.m[6] * k + a.m[7];
  float pz = a.m[8] * i + a.m[9] * j + a.m[10] * k + a.m[11];
  const float eps = 1e-4f;
  if (!(px >= -eps && py >= -eps && pz >= -eps && px <= fx - 1 + eps && py <= fy - 1 + eps && pz <= fz - 1 + eps)) {
    out[v] = __int_as_float(0x7fffffff);  // NaN
    return;
  }
  px = fminf(fmaxf(px, 0.0f), fx - 1.0f);
  py = fminf(fmaxf(py, 0.0f), fy - 1.0f);
  pz = fminf(fmaxf(pz, 0.0f), fz - 1.0f);
  const int x0 = (int)floorf(px), y0 = (int)floorf(py), z0 = (int)floorf(pz);
  const float ux = px - x0, uy = py - y0, uz = pz - z0;
  const int x1 = min(x0 + 1, fx - 1), y1 = min(y0 + 1, fy - 1), z1 = min(z0 + 1, fz - 1);
  const size_t sxy = (size_t)fx * fy;
  const int xs[2] = {x0, x1}, ys[2] = {y0, y1}, zs[2] = {z0, z1};
  const float wx[2] = {1 - ux, ux}, wy[2] = {1 - uy, uy}, wz[2] = {1 - uz, uz};
  float s = 0;
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b)
      for (int q = 0; q < 2; ++q) {
        const float w = wx[q] * wy[b] * wz[c];
        if (w != 0.0f) s += w * flo[zs[c] * sxy + (size_t)ys[b] * fx + xs[q]];
      }
  out[v] = s;
}

__device__ __forceinline__ bool aff_better(float c, int i, float bc, int bi) {
  return c > bc || (c == bc && i < bi);
}

// mask: nullptr = every voxel active. active: block indices (x fastest over bx * by blocks).
extern "C" __global__ void __launch_bounds__(AFF_THREADS) aff_match_blocks(
    const float* __restrict__ ref, const unsigned char* __restrict__ mask, const float* __restrict__ warped,
    const int nx, const int ny, const int nz, const int bx, const int by, const int* __restrict__ active,
    const int count, Match* __restrict__ out) {
  __shared__ float rv[64];
  __shared__ float wv[AFF_NB * AFF_NB * AFF_NB];
  __shared__ float best_c[AFF_THREADS / 32];
  __shared__ int best_i[AFF_THREADS / 32];
  const int blk = blockIdx.x;
  if (blk >= count) return;
  const int b = active[blk];
  const int x0 = (b % bx) * AFF_BW, y0 = ((b / bx) % by) * AFF_BW, z0 = (b / (bx * by)) * AFF_BW;
  const int t = threadIdx.x;
  const float nan = __int_as_float(0x7fffffff);
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
  float c = -1.0f;  // -1: not a candidate
  if (t < AFF_NC) {
    const int dx = t % 7, dy = (t / 7) % 7, dz = t / 49;  // offsets + 3
    int n = 0;
    float sr = 0, sw = 0;
    for (int a = 0; a < 64; ++a) {
      const float r = rv[a];
      const float w = wv[((a >> 4) + dz) * 100 + (((a >> 2) & 3) + dy) * 10 + (a & 3) + dx];
      if (r == r && w == w) {
        sr += r;
        sw += w;
        ++n;
      }
    }
    if (n > 32) {
      const float mr = sr / n, mw = sw / n;
      float vr = 0, vw = 0, cv = 0;
      for (int a = 0; a < 64; ++a) {
        const float r = rv[a];
        const float w = wv[((a >> 4) + dz) * 100 + (((a >> 2) & 3) + dy) * 10 + (a & 3) + dx];
        if (r == r && w == w) {
          const float p = r - mr, q = w - mw;
          vr += p * p;
          vw += q * q;
          cv += p * q;
        }
      }
      const float d = vr * vw;
      c = d > 0 ? fabsf(cv) / sqrtf(d) : 0.0f;
    }
  }
  // argmax: within the warp, then across the 11 warps
  int ci = t;
  for (int off = 16; off > 0; off >>= 1) {
    const float oc = __shfl_down_sync(0xffffffffu, c, off);
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
    float bc = best_c[0];
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
      m.ncc = bc;
    } else {
      m.dx = m.dy = m.dz = 0;
      m.ncc = 0;
    }
    out[blk] = m;
  }
}
