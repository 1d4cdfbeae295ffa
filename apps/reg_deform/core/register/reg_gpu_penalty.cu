// `register` stage 6 on the GPU: reg_f3d's penalties at the control points (CPU reference
// reg_penalty_cpu.cpp): per interior node the derivatives over its 3x3x3 neighbours (knot values
// [1/6, 2/3, 1/6], [-1/2, 0, 1/2], [1, -2, 1]), the node's value (block partial sums, double) and its
// "adjoint" (dE/d(derivatives)); a gather kernel turns the adjoints of the 27 neighbouring nodes into
// each control point's gradient. Self-contained.

__device__ __constant__ double kN[3] = {1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0};
__device__ __constant__ double kD[3] = {-0.5, 0.0, 0.5};
__device__ __constant__ double kS[3] = {1.0, -2.0, 1.0};

struct Mat33d {
  double m[9];  // world -> grid index (3x3 of the inverse of the grid's voxel-to-world)
};

// Basis m (0..5 second order XX YY ZZ XY YZ XZ; 6..8 first order d/dx d/dy d/dz) at offset (a, b, c).
__device__ __forceinline__ double basis(int m, int a, int b, int c) {
  switch (m) {
    case 0: return kS[a] * kN[b] * kN[c];
    case 1: return kN[a] * kS[b] * kN[c];
    case 2: return kN[a] * kN[b] * kS[c];
    case 3: return kD[a] * kD[b] * kN[c];
    case 4: return kN[a] * kD[b] * kD[c];
    case 5: return kD[a] * kN[b] * kD[c];
    case 6: return kD[a] * kN[b] * kN[c];
    case 7: return kN[a] * kD[b] * kN[c];
    default: return kN[a] * kN[b] * kD[c];
  }
}

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

__device__ double det3(const double* m) {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
}
__device__ bool inv_t(const double* m, double* r) {
  const double d = det3(m);
  if (d == 0 || !isfinite(d)) return false;
  r[0] = (m[4] * m[8] - m[5] * m[7]) / d;
  r[1] = -(m[3] * m[8] - m[5] * m[6]) / d;
  r[2] = (m[3] * m[7] - m[4] * m[6]) / d;
  r[3] = -(m[1] * m[8] - m[2] * m[7]) / d;
  r[4] = (m[0] * m[8] - m[2] * m[6]) / d;
  r[5] = -(m[0] * m[7] - m[1] * m[6]) / d;
  r[6] = (m[1] * m[5] - m[2] * m[4]) / d;
  r[7] = -(m[0] * m[5] - m[2] * m[3]) / d;
  r[8] = (m[0] * m[4] - m[1] * m[3]) / d;
  return true;
}
// Orthogonal polar factor (Newton, as the CPU reference).
__device__ void polar(const double* J, double* R) {
  double fro = 0;
  for (int i = 0; i < 9; ++i) fro += J[i] * J[i];
  const double sc = fro > 0 ? sqrt(3.0 / fro) : 1.0;
  for (int i = 0; i < 9; ++i) R[i] = J[i] * sc;
  for (int it = 0; it < 100; ++it) {
    double T[9];
    if (!inv_t(R, T)) break;
    double diff = 0;
    for (int i = 0; i < 9; ++i) {
      const double n = 0.5 * (R[i] + T[i]);
      diff += fabs(n - R[i]);
      R[i] = n;
    }
    if (diff < 1e-15) break;
  }
}

// kind 0 bending energy, 1 linear elasticity, 2 Jacobian log. Per node: adj (18 or 9 doubles,
// zero for boundary nodes) and block partial sums of the node values (partial[blockIdx.x]).
extern "C" __global__ void reg_penalty_nodes(const float* cp, const int gx, const int gy, const int gz, const int kind,
                                             const Mat33d M, double* adj, double* partial) {
  __shared__ double s[1024];
  const long long np = (long long)gx * gy * gz;
  const int na = kind == 0 ? 18 : 9;
  double val = 0;
  for (long long n = blockIdx.x * (long long)blockDim.x + threadIdx.x; n < np; n += (long long)gridDim.x * blockDim.x) {
    const int i = (int)(n % gx), j = (int)((n / gx) % gy), k = (int)(n / ((long long)gx * gy));
    double* out = adj + n * na;
    for (int q = 0; q < na; ++q) out[q] = 0;
    if (i < 1 || j < 1 || k < 1 || i >= gx - 1 || j >= gy - 1 || k >= gz - 1) continue;
    if (kind == 0) {
      double D[18] = {0};  // [m][c]
      for (int c3 = 0; c3 < 3; ++c3)
        for (int b = 0; b < 3; ++b)
          for (int a = 0; a < 3; ++a) {
            const long long idx = ((long long)(k + c3 - 1) * gy + (j + b - 1)) * gx + (i + a - 1);
            for (int m = 0; m < 6; ++m) {
              const double w = basis(m, a, b, c3);
              for (int c = 0; c < 3; ++c) D[m * 3 + c] += w * cp[c * np + idx];
            }
          }
      for (int m = 0; m < 6; ++m)
        for (int c = 0; c < 3; ++c) {
          const double d = D[m * 3 + c];
          val += (m < 3 ? 1.0 : 2.0) * d * d;
          out[m * 3 + c] = (m < 3 ? 2.0 : 4.0) * d;
        }
      continue;
    }
    double A[9] = {0};  // A[d][c] = d pos_c / d idx_d
    for (int c3 = 0; c3 < 3; ++c3)
      for (int b = 0; b < 3; ++b)
        for (int a = 0; a < 3; ++a) {
          const long long idx = ((long long)(k + c3 - 1) * gy + (j + b - 1)) * gx + (i + a - 1);
          for (int d = 0; d < 3; ++d) {
            const double w = basis(6 + d, a, b, c3);
            for (int c = 0; c < 3; ++c) A[d * 3 + c] += w * cp[c * np + idx];
          }
        }
    double J[9];  // J[c][kk] = sum_d A[d][c] M[d][kk]
    for (int c = 0; c < 3; ++c)
      for (int kk = 0; kk < 3; ++kk) J[c * 3 + kk] = A[c] * M.m[kk] + A[3 + c] * M.m[3 + kk] + A[6 + c] * M.m[6 + kk];
    double G[9];
    if (kind == 1) {
      double R[9];
      polar(J, R);
      double fro = 0, nuc = 0;
      for (int q = 0; q < 9; ++q) {
        fro += J[q] * J[q];
        nuc += R[q] * J[q];
        G[q] = 2 * (J[q] - R[q]);
      }
      val += fro - 2 * nuc + 3;
    } else {  // log(det)^2, Taylor-continued below the floor 0.05 (as the CPU reference)
      const double d = det3(J), fl = 0.05, lf = log(fl);
      double slope;
      if (d >= fl) {
        const double l = log(d);
        val += l * l;
        slope = 2 * l / d;
      } else {
        const double e = d - fl, k2 = (2 - 2 * lf) / (fl * fl);
        val += lf * lf + (2 * lf / fl) * e + 0.5 * k2 * e * e;
        slope = 2 * lf / fl + k2 * e;
      }
      const double C[9] = {J[4] * J[8] - J[5] * J[7], -(J[3] * J[8] - J[5] * J[6]), J[3] * J[7] - J[4] * J[6],
                           -(J[1] * J[8] - J[2] * J[7]), J[0] * J[8] - J[2] * J[6], -(J[0] * J[7] - J[1] * J[6]),
                           J[1] * J[5] - J[2] * J[4], -(J[0] * J[5] - J[2] * J[3]), J[0] * J[4] - J[1] * J[3]};
      for (int q = 0; q < 9; ++q) G[q] = slope * C[q];  // d det / dJ = cofactor
    }
    for (int d = 0; d < 3; ++d)  // dE/dA[d][c] = sum_kk G[c][kk] M[d][kk]
      for (int c = 0; c < 3; ++c)
        out[d * 3 + c] = G[c * 3] * M.m[d * 3] + G[c * 3 + 1] * M.m[d * 3 + 1] + G[c * 3 + 2] * M.m[d * 3 + 2];
  }
  val = block_sum(val, s);
  if (threadIdx.x == 0) partial[blockIdx.x] = val;
}

// grad[c][k] += scale * sum over interior nodes n = k - (o - 1) of sum_m adj[n][m][c] * basis_m(o).
extern "C" __global__ void reg_penalty_gather(const double* adj, const int gx, const int gy, const int gz, const int kind,
                                              const double scale, float* grad) {
  const long long np = (long long)gx * gy * gz;
  const int nb = kind == 0 ? 6 : 3, m0 = kind == 0 ? 0 : 6, na = nb * 3;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < np; e += (long long)gridDim.x * blockDim.x) {
    const int i = (int)(e % gx), j = (int)((e / gx) % gy), k = (int)(e / ((long long)gx * gy));
    double sx = 0, sy = 0, sz = 0;
    for (int c3 = 0; c3 < 3; ++c3)
      for (int b = 0; b < 3; ++b)
        for (int a = 0; a < 3; ++a) {
          const int ni = i - (a - 1), nj = j - (b - 1), nk = k - (c3 - 1);
          if (ni < 1 || nj < 1 || nk < 1 || ni >= gx - 1 || nj >= gy - 1 || nk >= gz - 1) continue;
          const double* ad = adj + (((long long)nk * gy + nj) * gx + ni) * na;
          for (int m = 0; m < nb; ++m) {
            const double w = basis(m0 + m, a, b, c3);
            sx += ad[m * 3] * w;
            sy += ad[m * 3 + 1] * w;
            sz += ad[m * 3 + 2] * w;
          }
        }
    grad[e] += (float)(scale * sx);
    grad[np + e] += (float)(scale * sy);
    grad[2 * np + e] += (float)(scale * sz);
  }
}
