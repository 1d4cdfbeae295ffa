// `register` stages 3 and 4 on the GPU (CPU reference: reg_measure_cpu.cpp, reg_measure_grad_cpu.cpp):
// the joint histogram of integer bins (block histograms in shared memory, exact integer counts),
// its smoothing, normalisation and entropies in one block (double, fixed summation order), the
// voxel-wise NMI gradient; SSD partial sums and its voxel-wise gradient. Self-contained.

// ---- histogram -------------------------------------------------------------------------------
// counts[r + nb*w] += 1 for mask voxels where ref and warped are finite and inside [0, nb).
// Shared memory: nb*nb unsigned ints when shared != 0 (else global atomics). The lanes of a warp that
// hit the same bin (the background, mostly) add once, with their count (__match_any_sync), so the
// counts stay exact integers.
extern "C" __global__ void reg_nmi_counts(const float* ref, const float* warped, const unsigned char* mask,
                                          const long long nv, const int nb, const int shared, unsigned int* counts) {
  extern __shared__ unsigned int h[];
  const int nbins = nb * nb;
  if (shared) {
    for (int i = threadIdx.x; i < nbins; i += blockDim.x) h[i] = 0;
    __syncthreads();
  }
  const int lane = threadIdx.x & 31;
  const long long stride = (long long)gridDim.x * blockDim.x;
  // every lane of a warp runs the same number of trips (the loop index is the warp's first voxel)
  for (long long v0 = blockIdx.x * (long long)blockDim.x + (threadIdx.x & ~31); v0 < nv; v0 += stride) {
    const long long v = v0 + lane;
    int key = -1;
    if (v < nv && (!mask || mask[v])) {
      const float r = ref[v], w = warped[v];
      if (r == r && w == w && r >= 0 && r < nb && w >= 0 && w < nb) key = (int)r + nb * (int)w;
    }
    const unsigned peers = __match_any_sync(0xffffffffu, key);
    if (key >= 0 && lane == __ffs(peers) - 1) {
      if (shared) atomicAdd(&h[key], (unsigned)__popc(peers));
      else atomicAdd(&counts[key], (unsigned)__popc(peers));
    }
  }
  if (shared) {
    __syncthreads();
    for (int i = threadIdx.x; i < nbins; i += blockDim.x)
      if (h[i]) atomicAdd(&counts[i], h[i]);
  }
}

// Deterministic block sum of per-thread values (blockDim.x a power of two <= 1024).
__device__ double block_sum(double v, double* s) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  const double r = s[0];
  __syncthreads();
  return r;
}

// One block. tmp: nb*nb doubles; prob, logp: nb*nb + 2*nb doubles; out: [nmi, h_ref, h_war, h_joint, total].
extern "C" __global__ void __launch_bounds__(1024) reg_nmi_entropies(const unsigned int* counts, const int nb, double* tmp, double* prob,
                                             double* logp, double* out) {
  __shared__ double s[1024];
  const int nj = nb * nb;
  const double k[3] = {1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0};
  for (int i = threadIdx.x; i < nj; i += blockDim.x) {  // along the reference axis
    const int r = i % nb, w = i / nb;
    double v = 0;
    for (int t = 0; t < 3; ++t) {
      const int j = r - 1 + t;
      if (j >= 0 && j < nb) v += (double)counts[j + nb * w] * k[t];
    }
    tmp[i] = v;
  }
  __syncthreads();
  double part = 0;
  for (int i = threadIdx.x; i < nj; i += blockDim.x) {  // along the warped axis
    const int r = i % nb, w = i / nb;
    double v = 0;
    for (int t = 0; t < 3; ++t) {
      const int j = w - 1 + t;
      if (j >= 0 && j < nb) v += tmp[r + nb * j] * k[t];
    }
    prob[i] = v;
    part += v;
  }
  const double total = block_sum(part, s);
  for (int i = threadIdx.x; i < nj + 2 * nb; i += blockDim.x) logp[i] = 0;
  if (!(total > 0)) {
    if (threadIdx.x == 0) out[0] = out[1] = out[2] = out[3] = out[4] = 0;
    return;
  }
  for (int i = threadIdx.x; i < nj; i += blockDim.x) prob[i] /= total;
  __syncthreads();
  for (int r = threadIdx.x; r < nb; r += blockDim.x) {
    double a = 0, b = 0;
    for (int w = 0; w < nb; ++w) {
      a += prob[r + nb * w];  // reference marginal at r
      b += prob[w + nb * r];  // warped marginal at r
    }
    prob[nj + r] = a;
    prob[nj + nb + r] = b;
  }
  __syncthreads();
  double hr = 0, hw = 0, hj = 0;
  for (int r = threadIdx.x; r < nb; r += blockDim.x) {
    const double a = prob[nj + r], b = prob[nj + nb + r];
    if (a > 0) {
      logp[nj + r] = log(a);
      hr -= a * logp[nj + r];
    }
    if (b > 0) {
      logp[nj + nb + r] = log(b);
      hw -= b * logp[nj + nb + r];
    }
  }
  for (int i = threadIdx.x; i < nj; i += blockDim.x) {
    const double p = prob[i];
    if (p > 0) {
      logp[i] = log(p);
      hj -= p * logp[i];
    }
  }
  hr = block_sum(hr, s);
  hw = block_sum(hw, s);
  hj = block_sum(hj, s);
  if (threadIdx.x == 0) {
    out[0] = hj > 0 ? (hr + hw) / hj : 0;
    out[1] = hr;
    out[2] = hw;
    out[3] = hj;
    out[4] = total;
  }
}

__device__ __forceinline__ double spline_basis(double x) {
  x = x < 0 ? -x : x;
  if (x >= 2) return 0;
  if (x < 1) return 2.0 / 3.0 + (0.5 * x - 1.0) * x * x;
  x -= 2;
  return -x * x * x / 6.0;
}
__device__ __forceinline__ double spline_basis_derivative(double ox) {
  double x = ox < 0 ? -ox : ox;
  if (x >= 2) return 0;
  if (x < 1) return (1.5 * x - 2.0) * ox;
  x -= 2;
  const double v = -0.5 * x * x;
  return ox < 0 ? -v : v;
}

// out (3 planar) = d(-NMI)/dW * grad W, reg_f3d's formula; ent = reg_nmi_entropies' out.
extern "C" __global__ void reg_nmi_voxel_gradient(const float* ref, const float* warped, const float* grad,
                                                  const unsigned char* mask, const long long nv, const int nb,
                                                  const double* logp, const double* ent, float* out) {
  const double nmi = ent[0], norm = ent[3] * ent[4];
  const long long off_r = (long long)nb * nb, off_w = off_r + nb;
  for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < nv; v += (long long)gridDim.x * blockDim.x) {
    out[v] = out[nv + v] = out[2 * nv + v] = 0.0f;
    if (mask && !mask[v]) continue;
    const float rv = ref[v], wv = warped[v];
    if (!(rv == rv) || !(wv == wv) || !(norm > 0)) continue;
    double common = 0;
    const int r0 = (int)(rv - 1.0f), w0 = (int)(wv - 1.0f);
    for (int r = r0; r < r0 + 4; ++r) {
      if (r < 0 || r >= nb) continue;
      const double br = spline_basis((double)rv - r);
      for (int w = w0; w < w0 + 4; ++w) {
        if (w < 0 || w >= nb) continue;
        const double c = br * spline_basis_derivative((double)wv - w);
        common += c * (logp[r + off_r] + logp[w + off_w] - nmi * logp[r + (long long)nb * w]);
      }
    }
    const double f = common / norm;
    out[v] = (float)(f * grad[v]);
    out[nv + v] = (float)(f * grad[nv + v]);
    out[2 * nv + v] = (float)(f * grad[2 * nv + v]);
  }
}

// ---- SSD ------------------------------------------------------------------------------------------
// Per block: partial[2*b] = sum (R - W)^2, partial[2*b + 1] = count, over valid voxels.
extern "C" __global__ void reg_ssd_partial(const float* ref, const float* warped, const unsigned char* mask,
                                           const long long nv, double* partial) {
  __shared__ double s[1024];
  double sum = 0, cnt = 0;
  for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < nv; v += (long long)gridDim.x * blockDim.x) {
    if (mask && !mask[v]) continue;
    const float r = ref[v], w = warped[v];
    if (!(r == r) || !(w == w)) continue;
    const double d = (double)r - (double)w;
    sum += d * d;
    cnt += 1;
  }
  sum = block_sum(sum, s);
  cnt = block_sum(cnt, s);
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = sum;
    partial[2 * blockIdx.x + 1] = cnt;
  }
}

// stats: [sum, count] (from reg_reduce_pairs). out = -2 (R - W) / count * grad W.
extern "C" __global__ void reg_ssd_voxel_gradient(const float* ref, const float* warped, const float* grad,
                                                  const unsigned char* mask, const long long nv, const double* stats,
                                                  float* out) {
  const double k = stats[1] > 0 ? -2.0 / stats[1] : 0.0;
  for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < nv; v += (long long)gridDim.x * blockDim.x) {
    out[v] = out[nv + v] = out[2 * nv + v] = 0.0f;
    if (mask && !mask[v]) continue;
    const float rv = ref[v], wv = warped[v];
    if (!(rv == rv) || !(wv == wv)) continue;
    const double f = k * ((double)rv - (double)wv);
    out[v] = (float)(f * grad[v]);
    out[nv + v] = (float)(f * grad[nv + v]);
    out[2 * nv + v] = (float)(f * grad[2 * nv + v]);
  }
}
