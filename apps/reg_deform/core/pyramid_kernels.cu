// reg_deform image pyramid on the GPU (support kernels, not evolved): one level down as
// pyramid.cpp's downsample_volume, bit-identical to it (same double operations in the same order,
// each explicitly rounded: __dmul_rn/__dadd_rn/__ddiv_rn, never contracted; -fmad=false as well):
//   pyr_init   : val = (double) data, den = 1
//   pyr_smooth : one axis of the separable Gaussian: for each voxel, the sums over the kernel taps
//                inside the volume, ascending, of w * val and w * den (one thread per voxel)
//   pyr_finish : (float)(val / den) at the kept voxels (every second voxel along halved axes)

#define PYR_MAX_TAPS 15

struct PyrKernel {
  double w[PYR_MAX_TAPS];  // taps -radius..radius
  int radius;
};

extern "C" __global__ void pyr_init(const float* __restrict__ in, double* __restrict__ val, double* __restrict__ den,
                                    const unsigned long long n) {
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  val[i] = (double)in[i];
  den[i] = 1.0;
}

extern "C" __global__ void pyr_smooth(const double* __restrict__ vin, const double* __restrict__ din,
                                      double* __restrict__ vout, double* __restrict__ dout, const int nx, const int ny,
                                      const int nz, const int axis, const PyrKernel k) {
  const unsigned long long n = (unsigned long long)nx * ny * nz;
  const unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int x = (int)(i % nx), y = (int)((i / nx) % ny), z = (int)(i / ((unsigned long long)nx * ny));
  const int len = axis == 0 ? nx : axis == 1 ? ny : nz;
  const int pos = axis == 0 ? x : axis == 1 ? y : z;
  const long long stride = axis == 0 ? 1LL : axis == 1 ? (long long)nx : (long long)nx * ny;
  const long long base = (long long)i - (long long)pos * stride;  // voxel 0 of this line
  const int j0 = max(0, pos - k.radius), j1 = min(len - 1, pos + k.radius);
  double sv = 0, sd = 0;
  for (int j = j0; j <= j1; ++j) {
    const double w = k.w[j - pos + k.radius];
    const long long a = base + (long long)j * stride;
    sv = __dadd_rn(sv, __dmul_rn(w, vin[a]));
    sd = __dadd_rn(sd, __dmul_rn(w, din[a]));
  }
  vout[i] = sv;
  dout[i] = sd;
}

// (fx, fy, fz): 2 on halved axes, else 1; (rx, ry, rz): the result's size.
extern "C" __global__ void pyr_finish(const double* __restrict__ val, const double* __restrict__ den,
                                      float* __restrict__ out, const int nx, const int ny, const int rx, const int ry,
                                      const int rz, const int fx, const int fy, const int fz) {
  const unsigned long long n = (unsigned long long)rx * ry * rz;
  const unsigned long long o = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (o >= n) return;
  const int x = (int)(o % rx), y = (int)((o / rx) % ry), z = (int)(o / ((unsigned long long)rx * ry));
  const unsigned long long i = ((unsigned long long)(fz * z) * ny + (unsigned long long)(fy * y)) * nx + (unsigned long long)(fx * x);
  out[o] = __double2float_rn(__ddiv_rn(val[i], den[i]));
}
