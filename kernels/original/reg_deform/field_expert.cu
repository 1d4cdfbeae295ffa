// The expert dense-field kernel: cubic B-spline control-point grid -> the dense planar deformation
// (or displacement) field of every reference voxel, written directly and coalesced. A second seed
// beside the paper's tile kernel (reg_deform.cu, the original GI is measured from); written for
// EvoKernels (no NiftyReg code).
//
// One block of 256 threads per tile of TILE_X (32) x TILE_Y voxels of one z slice. The weights are
// separable, so the tile's 4 x NCY x NCX control points are contracted one axis at a time in shared
// memory:
//   stage 1 (z): s1[j][i] = sum_c wz[c] * CP[iz + c][cy0 + j][cx0 + i]     (control points via __ldg)
//   stage 2 (y): s2[r][i] = sum_b wy[b] * s1[iy(y0 + r) - cy0 + b][i]
//   stage 3 (x): P(x, y)  = sum_a wx[a] * s2[r][ix(x) - cx0 + a]
// and each warp writes 32 consecutive x of a row into each of the three planes (128-byte stores).
// Per voxel that is 12 FMAs of stage 3 plus the amortised stages 1-2, against 192 for the direct sum.
//
// Weights and first grid index per axis are precomputed on the host (double -> float): for reference
// voxel x, idxX[x] = floor(x / sx) and wX[x] = the 4 cubic B-spline weights of u = x / sx - idxX[x];
// the same for y and z. So any control-point spacing >= 1 voxel per axis (fractional too) runs the
// same kernel (a 32-voxel span then needs at most 35 control-point columns: NCX = TILE_X + 4).
// The grid must cover the reference: idx + 3 < g on every axis (the host checks).
// Voxels outside the mask (mask != 0 and mask[v] == 0) get the identity; displacement != 0 subtracts
// each voxel's own world position (vox2world rows v2w[0..11]).
//
// Entry (extern "C"): reg_field_expert. Launch: grid (ceil(nx / 32), ceil(ny / TILE_Y), nz), 256
// threads, no dynamic shared memory.
// Configuration: TILE_Y (rows per block: 8, 16 or 32; each thread writes TILE_Y / 8 voxels).

#ifndef TILE_Y
#define TILE_Y 32
#endif
#define TILE_X 32
#define EXPERT_THREADS 256
#define ROWS_PER_PASS (EXPERT_THREADS / TILE_X)
#define NCX (TILE_X + 4)
#define NCY (TILE_Y + 4)

struct ExpertAffine {  // world = M * (i, j, k, 1), rows of 4
  float m[12];
};

extern "C" __global__ void reg_field_expert(const float4* controlPoints, const int gx, const int gy,
                                            const int* idxX, const float4* wX, const int* idxY, const float4* wY,
                                            const int* idxZ, const float4* wZ, const int nx, const int ny, const int nz,
                                            const unsigned char* mask, const ExpertAffine v2w, const int displacement,
                                            float* field) {
  __shared__ float s1x[NCY * NCX];
  __shared__ float s1y[NCY * NCX];
  __shared__ float s1z[NCY * NCX];
  __shared__ float s2x[TILE_Y * NCX];
  __shared__ float s2y[TILE_Y * NCX];
  __shared__ float s2z[TILE_Y * NCX];
  //@gi begin
  int x0 = 0;
  int y0 = 0;
  int z = 0;
  int xl = 0;
  int yl = 0;
  int cx0 = 0;
  int cy0 = 0;
  int ncx = 0;
  int ncy = 0;
  int cz = 0;
  int i = 0;
  int j = 0;
  int c = 0;
  int r = 0;
  int x = 0;
  int y = 0;
  int gxy = 0;
  int base = 0;
  int inside = 1;
  size_t plane = 0;
  size_t v = 0;
  float4 wz = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 wy = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 wx = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 p0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 p1 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 p2 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 p3 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float px = 0.0f;
  float py = 0.0f;
  float pz = 0.0f;
  float ox = 0.0f;
  float oy = 0.0f;
  float oz = 0.0f;
  x0 = blockIdx.x * TILE_X;
  y0 = blockIdx.y * TILE_Y;
  z = blockIdx.z;
  xl = min(x0 + TILE_X, nx) - 1;
  yl = min(y0 + TILE_Y, ny) - 1;
  cx0 = idxX[x0];
  cy0 = idxY[y0];
  ncx = idxX[xl] - cx0 + 4;
  ncy = idxY[yl] - cy0 + 4;
  cz = idxZ[z];
  wz = wZ[z];
  gxy = gx * gy;
  plane = (size_t)nx * ny * nz;
  for (i = threadIdx.x; i < ncx * ncy; i += EXPERT_THREADS) {
    j = i / ncx;
    c = i - j * ncx;
    base = (cz * gy + cy0 + j) * gx + cx0 + c;
    p0 = __ldg(&controlPoints[base]);
    p1 = __ldg(&controlPoints[base + gxy]);
    p2 = __ldg(&controlPoints[base + 2 * gxy]);
    p3 = __ldg(&controlPoints[base + 3 * gxy]);
    s1x[j * NCX + c] = wz.x * p0.x + wz.y * p1.x + wz.z * p2.x + wz.w * p3.x;
    s1y[j * NCX + c] = wz.x * p0.y + wz.y * p1.y + wz.z * p2.y + wz.w * p3.y;
    s1z[j * NCX + c] = wz.x * p0.z + wz.y * p1.z + wz.z * p2.z + wz.w * p3.z;
  }
  __syncthreads(); //@gi fixed
  for (i = threadIdx.x; i < TILE_Y * ncx; i += EXPERT_THREADS) {
    r = i / ncx;
    c = i - r * ncx;
    y = min(y0 + r, yl);
    j = (idxY[y] - cy0) * NCX + c;
    wy = wY[y];
    s2x[r * NCX + c] = wy.x * s1x[j] + wy.y * s1x[j + NCX] + wy.z * s1x[j + 2 * NCX] + wy.w * s1x[j + 3 * NCX];
    s2y[r * NCX + c] = wy.x * s1y[j] + wy.y * s1y[j + NCX] + wy.z * s1y[j + 2 * NCX] + wy.w * s1y[j + 3 * NCX];
    s2z[r * NCX + c] = wy.x * s1z[j] + wy.y * s1z[j + NCX] + wy.z * s1z[j + 2 * NCX] + wy.w * s1z[j + 3 * NCX];
  }
  __syncthreads(); //@gi fixed
  x = x0 + (threadIdx.x & (TILE_X - 1));
  if (x < nx) {
    wx = wX[x];
    c = idxX[x] - cx0;
    for (r = threadIdx.x / TILE_X; r < TILE_Y; r += ROWS_PER_PASS) {
      y = y0 + r;
      if (y < ny) {
        v = ((size_t)z * ny + y) * nx + x;
        j = r * NCX + c;
        px = wx.x * s2x[j] + wx.y * s2x[j + 1] + wx.z * s2x[j + 2] + wx.w * s2x[j + 3];
        py = wx.x * s2y[j] + wx.y * s2y[j + 1] + wx.z * s2y[j + 2] + wx.w * s2y[j + 3];
        pz = wx.x * s2z[j] + wx.y * s2z[j + 1] + wx.z * s2z[j + 2] + wx.w * s2z[j + 3];
        ox = v2w.m[0] * x + v2w.m[1] * y + v2w.m[2] * z + v2w.m[3];
        oy = v2w.m[4] * x + v2w.m[5] * y + v2w.m[6] * z + v2w.m[7];
        oz = v2w.m[8] * x + v2w.m[9] * y + v2w.m[10] * z + v2w.m[11];
        inside = 1;
        if (mask != 0) {
          inside = mask[v];
        }
        if (inside == 0) {
          px = ox;
          py = oy;
          pz = oz;
        }
        if (displacement != 0) {
          px -= ox;
          py -= oy;
          pz -= oz;
        }
        field[v] = px;
        field[plane + v] = py;
        field[2 * plane + v] = pz;
      }
    }
  }
  //@gi end
}

// Reads before writes (docs/GI.md): this seed has no per-thread array or struct without a value (every
// local starts with one), so a GI edit cannot read undefined per-thread memory. Left as they are: the
// shared stages s1x..s2z (every entry the next stage reads written before the barrier between them).
