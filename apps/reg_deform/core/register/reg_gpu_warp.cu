// `register` stage 2 on the GPU: the floating image resampled (trilinear) through the dense
// deformation field and its spatial gradient in world units; reg_f3d's rules as the CPU reference
// (reg_warp_cpu.cpp): NaN where the 2x2x2 stencil leaves the image, outside the reference mask, or
// (our extension) where the nearest floating voxel is outside the floating mask; gradient 0 there.
// The position -> voxel mapping and the weights are in double, like the CPU. Self-contained.

struct Affine34d {  // floating world -> floating voxel, rows of 4
  double m[12];
};

extern "C" __global__ void reg_warp_linear(const float* field, const unsigned char* rmask, const long long nv,
                                           const float* flo, const int fx, const int fy, const int fz,
                                           const unsigned char* fmask, const Affine34d w2v, float* warped,
                                           float* grad) {
  const float nan = __int_as_float(0x7fc00000);
  for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < nv; v += (long long)gridDim.x * blockDim.x) {
    warped[v] = nan;
    if (grad) grad[v] = grad[nv + v] = grad[2 * nv + v] = 0.0f;
    if (rmask && !rmask[v]) continue;
    const double px = field[v], py = field[nv + v], pz = field[2 * nv + v];
    const double qx = w2v.m[0] * px + w2v.m[1] * py + w2v.m[2] * pz + w2v.m[3];
    const double qy = w2v.m[4] * px + w2v.m[5] * py + w2v.m[6] * pz + w2v.m[7];
    const double qz = w2v.m[8] * px + w2v.m[9] * py + w2v.m[10] * pz + w2v.m[11];
    // the range test in double first: a NaN, infinite or huge position (|q| >= 2^31) must not reach
    // the int conversion (undefined, and x0 + 1 could wrap past the test below); same voxels as the
    // integer test for every position inside int range
    if (!(qx >= 0 && qy >= 0 && qz >= 0 && qx < fx - 1 && qy < fy - 1 && qz < fz - 1)) continue;
    const int x0 = (int)floor(qx), y0 = (int)floor(qy), z0 = (int)floor(qz);
    if (!(x0 >= 0 && y0 >= 0 && z0 >= 0 && x0 + 1 < fx && y0 + 1 < fy && z0 + 1 < fz)) continue;
    if (fmask) {
      const int xr = (int)llround(qx), yr = (int)llround(qy), zr = (int)llround(qz);
      if (!fmask[((long long)zr * fy + yr) * fx + xr]) continue;
    }
    const double ux = qx - x0, uy = qy - y0, uz = qz - z0;
    const double wx[2] = {1 - ux, ux}, wy[2] = {1 - uy, uy}, wz[2] = {1 - uz, uz};
    const double d[2] = {-1, 1};
    double val = 0, gx = 0, gy = 0, gz = 0;
    for (int c = 0; c < 2; ++c)
      for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) {
          const double s = flo[((long long)(z0 + c) * fy + (y0 + b)) * fx + (x0 + a)];
          val += wx[a] * wy[b] * wz[c] * s;
          gx += d[a] * wy[b] * wz[c] * s;
          gy += wx[a] * d[b] * wz[c] * s;
          gz += wx[a] * wy[b] * d[c] * s;
        }
    warped[v] = (float)val;
    if (grad) {
      grad[v] = (float)(w2v.m[0] * gx + w2v.m[4] * gy + w2v.m[8] * gz);
      grad[nv + v] = (float)(w2v.m[1] * gx + w2v.m[5] * gy + w2v.m[9] * gz);
      grad[2 * nv + v] = (float)(w2v.m[2] * gx + w2v.m[6] * gy + w2v.m[10] * gz);
    }
  }
}
