// `register` stage 5 on the GPU: the voxel-wise gradient carried onto the control points through
// the B-spline weights (the transpose of the field evaluation; CPU reference reg_adjoint_cpu.cpp),
// in three gather passes, one output element per thread, no atomics (deterministic):
//   x: t1[c][z][y][i] = sum_x Bx_i(x) g[c][z][y][x]
//   y: t2[c][z][j][i] = sum_y By_j(y) t1[c][z][y][i]
//   z: node[c][k][j][i] = sum_z Bz_k(z) t2[c][z][j][i]
// Weights of voxel coordinate v at spacing s: t = v / s, i0 = floor(t), index i0 + a gets the cubic
// B-spline weight a (0..3) at u = t - i0. Self-contained.

__device__ __forceinline__ double bweight(int a, double u) {
  const double u2 = u * u, u3 = u2 * u, m = 1 - u;
  switch (a) {
    case 0: return m * m * m / 6;
    case 1: return (3 * u3 - 6 * u2 + 4) / 6;
    case 2: return (-3 * u3 + 3 * u2 + 3 * u + 1) / 6;
    default: return u3 / 6;
  }
}

// Sum over voxel coordinates v in [0, n) of the weight of index i times in[v * stride].
__device__ __forceinline__ double gather_axis(const float* in, long long stride, int n, int i, double s) {
  int lo = (int)floor((i - 3) * s) - 1, hi = (int)ceil((i + 1) * s) + 1;
  lo = lo < 0 ? 0 : lo;
  hi = hi > n - 1 ? n - 1 : hi;
  double acc = 0;
  for (int v = lo; v <= hi; ++v) {
    const double t = v / s;
    const int i0 = (int)floor(t);
    const int a = i - i0;
    if (a < 0 || a > 3) continue;
    acc += bweight(a, t - i0) * (double)in[v * stride];
  }
  return acc;
}

extern "C" __global__ void reg_adjoint_x(const float* g, const int nx, const int ny, const int nz, const int gx,
                                         const double sx, float* t1) {
  const long long total = 3LL * nz * ny * gx;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    const int i = (int)(e % gx);
    const long long row = e / gx;  // (c * nz + z) * ny + y
    t1[e] = (float)gather_axis(g + row * nx, 1, nx, i, sx);
  }
}

extern "C" __global__ void reg_adjoint_y(const float* t1, const int ny, const int nz, const int gx, const int gy,
                                         const double sy, float* t2) {
  const long long total = 3LL * nz * gy * gx;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    const int i = (int)(e % gx);
    const int j = (int)((e / gx) % gy);
    const long long cz = e / ((long long)gx * gy);  // c * nz + z
    t2[e] = (float)gather_axis(t1 + cz * ny * gx + i, gx, ny, j, sy);
  }
}

extern "C" __global__ void reg_adjoint_z(const float* t2, const int nz, const int gx, const int gy, const int gz,
                                         const double sz, float* node) {
  const long long total = 3LL * gz * gy * gx;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    const long long ji = e % ((long long)gx * gy);  // j * gx + i
    const int k = (int)((e / ((long long)gx * gy)) % gz);
    const int c = (int)(e / ((long long)gx * gy * gz));
    node[e] = (float)gather_axis(t2 + (long long)c * nz * gy * gx + ji, (long long)gx * gy, nz, k, sz);
  }
}
