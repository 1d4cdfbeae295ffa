// reg_deform's GPU helper kernels (not evolved): compact kernel output -> dense planar field,
// identity fill for voxels outside the mask, and resampling through a field. Self-contained;
// embedded by evk_add_kernel and loaded through the same library path as the evolved kernel.

struct Affine34 {  // world = M * (i, j, k, 1), rows of 4
  float m[12];
};

__device__ __forceinline__ float3 apply34(const Affine34& a, float i, float j, float k) {
  return make_float3(a.m[0] * i + a.m[1] * j + a.m[2] * k + a.m[3], a.m[4] * i + a.m[5] * j + a.m[6] * k + a.m[7],
                     a.m[8] * i + a.m[9] * j + a.m[10] * k + a.m[11]);
}

// Every voxel: the identity (own world position, or 0 displacement).
extern "C" __global__ void reg_fill_identity(float* field, const int nx, const int ny, const int nz, const Affine34 v2w,
                                             const int displacement) {
  const size_t n = (size_t)nx * ny * nz;
  for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < n; v += (size_t)gridDim.x * blockDim.x) {
    const int x = v % nx, y = (v / nx) % ny, z = v / ((size_t)nx * ny);
    const float3 p = displacement ? make_float3(0.0f, 0.0f, 0.0f) : apply34(v2w, x, y, z);
    field[v] = p.x;
    field[n + v] = p.y;
    field[2 * n + v] = p.z;
  }
}

// Compact outputs of the generic kernel (entry i = voxel list[i]) into the dense planar field.
extern "C" __global__ void reg_scatter_voxels(const float4* compact, const unsigned int* list, const int count,
                                              float* field, const int nx, const int ny, const int nz,
                                              const Affine34 v2w, const int displacement) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const size_t n = (size_t)nx * ny * nz;
  const unsigned int v = list[i];
  float4 p = compact[i];
  if (displacement) {
    const float3 o = apply34(v2w, v % nx, (v / nx) % ny, v / ((size_t)nx * ny));
    p.x -= o.x;
    p.y -= o.y;
    p.z -= o.z;
  }
  field[v] = p.x;
  field[n + v] = p.y;
  field[2 * n + v] = p.z;
}

// Compact outputs of the tile kernel (entry tile*25 + t) into the dense field: voxels inside the
// volume and the mask (mask == nullptr: all). One block per SCATTER_TILES consecutive tiles: the
// block's entries are read coalesced into shared memory, then written transposed (warp lanes =
// consecutive tiles with the same (y, z), i.e. consecutive x in a dense row), so the planar field
// writes are coalesced too. Launch with ceil(count / SCATTER_TILES) blocks of any multiple of 32.
#define SCATTER_TILES 32
extern "C" __global__ void reg_scatter_tiles(const float4* compact, const unsigned int* tiles, const int count,
                                             const int tilesY, const unsigned char* mask, float* field, const int nx,
                                             const int ny, const int nz, const Affine34 v2w, const int displacement) {
  __shared__ float sx[SCATTER_TILES * 25], sy[SCATTER_TILES * 25], sz[SCATTER_TILES * 25];
  __shared__ unsigned int scode[SCATTER_TILES];
  const int first = blockIdx.x * SCATTER_TILES;
  const int ntiles = min(SCATTER_TILES, count - first);
  if (ntiles <= 0) return;
  const float4* in = compact + (size_t)first * 25;
  for (int i = threadIdx.x; i < ntiles * 25; i += blockDim.x) {
    const float4 p = in[i];
    sx[i] = p.x;
    sy[i] = p.y;
    sz[i] = p.z;
  }
  if (threadIdx.x < ntiles) scode[threadIdx.x] = tiles[first + threadIdx.x];
  __syncthreads();
  const size_t n = (size_t)nx * ny * nz;
  for (int i = threadIdx.x; i < SCATTER_TILES * 25; i += blockDim.x) {
    const int k = i % SCATTER_TILES, t = i / SCATTER_TILES;  // tile in the block, element in the tile
    if (k >= ntiles) continue;
    const unsigned int code = scode[k];
    const int x = code % nx;
    const int y = ((code / nx) % tilesY) * 5 + t % 5;
    const int z = ((code / nx) / tilesY) * 5 + t / 5;
    if (y >= ny || z >= nz) continue;
    const size_t v = ((size_t)z * ny + y) * nx + x;
    if (mask && !mask[v]) continue;
    float3 p = make_float3(sx[k * 25 + t], sy[k * 25 + t], sz[k * 25 + t]);
    if (displacement) {
      const float3 o = apply34(v2w, x, y, z);
      p.x -= o.x;
      p.y -= o.y;
      p.z -= o.z;
    }
    field[v] = p.x;
    field[n + v] = p.y;
    field[2 * n + v] = p.z;
  }
}

// The first version of the scatter (one thread per compact entry: coalesced reads, but each warp's
// writes hit ~25 rows), kept as the benchmark baseline of the transposed one above.
extern "C" __global__ void reg_scatter_tiles_naive(const float4* compact, const unsigned int* tiles, const int count,
                                                   const int tilesY, const unsigned char* mask, float* field,
                                                   const int nx, const int ny, const int nz, const Affine34 v2w,
                                                   const int displacement) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= count * 25) return;
  const unsigned int code = tiles[e / 25];
  const int t = e % 25;
  const int x = code % nx;
  const int y = ((code / nx) % tilesY) * 5 + t % 5;
  const int z = ((code / nx) / tilesY) * 5 + t / 5;
  if (y >= ny || z >= nz) return;
  const size_t n = (size_t)nx * ny * nz;
  const size_t v = ((size_t)z * ny + y) * nx + x;
  if (mask && !mask[v]) return;
  float4 p = compact[e];
  if (displacement) {
    const float3 o = apply34(v2w, x, y, z);
    p.x -= o.x;
    p.y -= o.y;
    p.z -= o.z;
  }
  field[v] = p.x;
  field[n + v] = p.y;
  field[2 * n + v] = p.z;
}

__device__ __forceinline__ int mirror_index(int i, int n) {
  if (n == 1) return 0;
  const int period = 2 * n - 2;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

// Resampling through a deformation (displacement != 0: displacement) field on the reference grid.
// interp 0 nearest, 1 linear, 3 cubic B-spline (flo holds the prefiltered coefficients).
extern "C" __global__ void reg_resample(const float* field, const int nx, const int ny, const int nz,
                                        const Affine34 ref_v2w, const int displacement, const float* flo,
                                        const int fx, const int fy, const int fz, const Affine34 flo_w2v,
                                        const int interp, const float pad, float* out) {
  const size_t n = (size_t)nx * ny * nz;
  const size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (v >= n) return;
  float3 w = make_float3(field[v], field[n + v], field[2 * n + v]);
  if (displacement) {
    const float3 o = apply34(ref_v2w, v % nx, (v / nx) % ny, v / ((size_t)nx * ny));
    w.x += o.x;
    w.y += o.y;
    w.z += o.z;
  }
  float3 p = apply34(flo_w2v, w.x, w.y, w.z);
  const float eps = 1e-4f;
  if (!(p.x >= -eps && p.y >= -eps && p.z >= -eps && p.x <= fx - 1 + eps && p.y <= fy - 1 + eps &&
        p.z <= fz - 1 + eps)) {
    out[v] = pad;
    return;
  }
  p.x = fminf(fmaxf(p.x, 0.0f), fx - 1.0f);
  p.y = fminf(fmaxf(p.y, 0.0f), fy - 1.0f);
  p.z = fminf(fmaxf(p.z, 0.0f), fz - 1.0f);
  const size_t sxy = (size_t)fx * fy;
  if (interp == 0) {
    const int x = (int)rintf(p.x), y = (int)rintf(p.y), z = (int)rintf(p.z);
    out[v] = flo[z * sxy + (size_t)y * fx + x];
    return;
  }
  const int x0 = (int)floorf(p.x), y0 = (int)floorf(p.y), z0 = (int)floorf(p.z);
  const float ux = p.x - x0, uy = p.y - y0, uz = p.z - z0;
  if (interp == 1) {
    const int x1 = min(x0 + 1, fx - 1), y1 = min(y0 + 1, fy - 1), z1 = min(z0 + 1, fz - 1);
    const int xs[2] = {x0, x1}, ys[2] = {y0, y1}, zs[2] = {z0, z1};
    const float wx[2] = {1 - ux, ux}, wy[2] = {1 - uy, uy}, wz[2] = {1 - uz, uz};
    float s = 0;
    for (int c = 0; c < 2; ++c)
      for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) {
          const float wt = wx[a] * wy[b] * wz[c];
          if (wt != 0.0f) s += wt * flo[zs[c] * sxy + (size_t)ys[b] * fx + xs[a]];
        }
    out[v] = s;
    return;
  }
  float wx[4], wy[4], wz[4];
  const float us[3] = {ux, uy, uz};
  float* ws[3] = {wx, wy, wz};
  for (int d = 0; d < 3; ++d) {
    const float u = us[d], m = 1 - u;
    ws[d][0] = m * m * m / 6;
    ws[d][1] = (3 * u * u * u - 6 * u * u + 4) / 6;
    ws[d][2] = (-3 * u * u * u + 3 * u * u + 3 * u + 1) / 6;
    ws[d][3] = u * u * u / 6;
  }
  float s = 0;
  for (int c = 0; c < 4; ++c) {
    const int z = mirror_index(z0 - 1 + c, fz);
    for (int b = 0; b < 4; ++b) {
      const int y = mirror_index(y0 - 1 + b, fy);
      for (int a = 0; a < 4; ++a) s += wz[c] * wy[b] * wx[a] * flo[z * sxy + (size_t)y * fx + mirror_index(x0 - 1 + a, fx)];
    }
  }
  out[v] = s;
}

// The GI check on the device: a computed field against its CPU reference, element by element.
// Component a of element i is got[i * gs + a * gc] and ref[i * rs + a * rc]; elements with
// inside[i] == 0 are skipped (inside may be null: every element). An element is unset when any
// component is not finite; otherwise e = max over a of |got - ref| in double. out[0] = max e, as the
// bits of a non-negative double (these order like the doubles, so atomicMax takes the maximum);
// out[1..3] = unset elements, elements with e > tol, elements with e > wrong_tol. Every figure is
// order-independent, so the result equals the host loop's (field_diff_cpu) exactly. out must be zero.
extern "C" __global__ void reg_field_diff(const float* got, const long long gs, const long long gc, const float* ref,
                                          const long long rs, const long long rc, const unsigned char* inside,
                                          const long long n, const double tol, const double wrong_tol,
                                          unsigned long long* out) {
  double worst = 0;
  unsigned long long unset = 0, over = 0, wrong = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    if (inside && !inside[i]) continue;
    bool nan = false;
    double e = 0;
    for (int a = 0; a < 3; ++a) {
      const float g = got[i * gs + a * gc];
      if (!isfinite(g)) nan = true;
      else e = fmax(e, fabs((double)g - (double)ref[i * rs + a * rc]));
    }
    if (nan) {
      ++unset;
      continue;
    }
    worst = fmax(worst, e);
    over += e > tol;
    wrong += e > wrong_tol;
  }
  for (int d = 16; d > 0; d >>= 1) {
    worst = fmax(worst, __shfl_down_sync(0xffffffffu, worst, d));
    unset += __shfl_down_sync(0xffffffffu, unset, d);
    over += __shfl_down_sync(0xffffffffu, over, d);
    wrong += __shfl_down_sync(0xffffffffu, wrong, d);
  }
  if ((threadIdx.x & 31) == 0) {  // one set of atomics per warp (blockDim is a multiple of 32)
    if (worst > 0) atomicMax(&out[0], (unsigned long long)__double_as_longlong(worst));
    if (unset) atomicAdd(&out[1], unset);
    if (over) atomicAdd(&out[2], over);
    if (wrong) atomicAdd(&out[3], wrong);
  }
}
