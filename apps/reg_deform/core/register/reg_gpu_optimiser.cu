// `register` stage 7 on the GPU: the vector work of reg_f3d's conjugate-gradient optimiser on
// device-resident parameters (CPU reference: HostVectors in reg_optimiser.cpp), deterministic
// reductions (per-block partials in double, then one block in a fixed order), and the conversion
// of the planar parameters into the float4 control points the field kernel reads. Self-contained.

__device__ double block_reduce(double v, double* s, int op) {  // op 0 sum, 1 max
  s[threadIdx.x] = v;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] = op == 0 ? s[threadIdx.x] + s[threadIdx.x + k] : fmax(s[threadIdx.x], s[threadIdx.x + k]);
    __syncthreads();
  }
  const double r = s[0];
  __syncthreads();
  return r;
}

// One block: out[o] = reduce over in[j*width + o], j < n, for o < width (op 0 sum, 1 max).
extern "C" __global__ void __launch_bounds__(1024) reg_reduce(const double* in, const int n, const int width, const int op, double* out) {
  __shared__ double s[1024];
  for (int o = 0; o < width; ++o) {
    double acc = 0;
    for (int j = threadIdx.x; j < n; j += blockDim.x) acc = op == 0 ? acc + in[(long long)j * width + o] : fmax(acc, in[(long long)j * width + o]);
    acc = block_reduce(acc, s, op);
    if (threadIdx.x == 0) out[o] = acc;
  }
}

// planar x, y, z (np each) -> float4 (x, y, z, 0)
extern "C" __global__ void reg_planar_to_float4(const float* p, const long long np, float4* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < np; i += (long long)gridDim.x * blockDim.x)
    out[i] = make_float4(p[i], p[np + i], p[2 * np + i], 0.0f);
}

// out = a * in (n floats)
extern "C" __global__ void reg_scale_copy(const float* in, const long long n, const double a, float* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    out[i] = (float)(a * (double)in[i]);
}

// current = best + scale * grad
extern "C" __global__ void reg_step(const float* best, const float* grad, const long long n, const double scale,
                                    float* current) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    current[i] = (float)(best[i] + scale * grad[i]);
}

// Per block: the largest 3-vector length of grad (np points, planar).
extern "C" __global__ void reg_max_length(const float* grad, const long long np, double* partial) {
  __shared__ double s[1024];
  double m = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < np; i += (long long)gridDim.x * blockDim.x) {
    const double x = grad[i], y = grad[np + i], z = grad[2 * np + i];
    m = fmax(m, sqrt(x * x + y * y + z * z));
  }
  m = block_reduce(m, s, 1);
  if (threadIdx.x == 0) partial[blockIdx.x] = m;
}

// first call: h = g_prev = -grad
extern "C" __global__ void reg_cg_first(const float* grad, const long long n, float* g_prev, float* h) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    h[i] = g_prev[i] = -grad[i];
}

// Per block: partial[2b] = sum h * g_prev, partial[2b + 1] = sum (grad + g_prev) * grad.
extern "C" __global__ void reg_cg_partial(const float* grad, const float* g_prev, const float* h, const long long n,
                                          double* partial) {
  __shared__ double s[1024];
  double gg = 0, dgg = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    gg += (double)h[i] * g_prev[i];
    dgg += ((double)grad[i] + g_prev[i]) * grad[i];
  }
  gg = block_reduce(gg, s, 0);
  dgg = block_reduce(dgg, s, 0);
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = gg;
    partial[2 * blockIdx.x + 1] = dgg;
  }
}

// sums = [gg, dgg]: gam = dgg / gg; g_prev = -grad; h = g_prev + gam h; grad = -h.
extern "C" __global__ void reg_cg_update(const double* sums, const long long n, float* grad, float* g_prev, float* h) {
  const double gam = sums[0] != 0 ? sums[1] / sums[0] : 0.0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    g_prev[i] = -grad[i];
    h[i] = (float)(g_prev[i] + gam * h[i]);
    grad[i] = -h[i];
  }
}
