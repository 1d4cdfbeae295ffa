// NiftyReg's reg_spline_getDeformationField3D (cubic B-spline control-point grid -> positions of
// the active voxels) in the form Langdon, Modat, Petke and Harman evolved (GECCO 2014): the authors'
// manual changes for control points every 5th voxel. Written for EvoKernels from the paper's
// description (no NiftyReg code): one warp per 1x5x5 tile of voxels sharing the same 64 control
// points; 16 threads form the 16 x-sums into shared memory, 25 threads combine them with the
// 20 precomputed basis values and write 25 float4 positions, consecutive in the output.
//
// Entries (extern "C"):
//   reg_deform_tile5    the paper's kernel (spacing 5), annotated for the GI grammar
//   reg_deform_generic  one thread per active voxel, any spacing (the "revert to the original code"
//                       path for other spacings)
// Inputs: control points as a float4 texture object (x, y, z world mm; index (k*gy + j)*gx + i),
// the 20 basis values as a float texture object (unless constantBasis), the active list.
// Output: positionField[tile*25 + t] = position of voxel (x, 5*ty + t%5, 5*tz + t/5) (tile kernel),
//         positionField[i] = position of voxel activeVoxels[i] (generic kernel).
//
// Configuration (the paper's macros; defaults = the human-written kernel):
//   c_UseBSpline               defined (to 1): compile-time constant; else the run-time parameter
//   c_controlPointVoxelSpacing defined (to 5): compile-time constant; else the run-time parameter
//   constantBasis  basis values from __constant__ memory (not the texture), x precomputed too
//   BasisA         index order of the basis table: 1 = [offset][weight], 0 = [weight][offset]
//   directxBasis   x weights read from the table as well (else computed on the fly)
//   RemX           x % spacing computed once into remx
// The block size is a launch parameter (a multiple of 32: one warp per tile).

#ifndef constantBasis
#define constantBasis 0
#endif
#ifndef BasisA
#define BasisA 0
#endif
#ifndef directxBasis
#define directxBasis 0
#endif
#ifndef RemX
#define RemX 0
#endif
#ifndef c_UseBSpline
#define c_UseBSpline useBSpline
#endif
#ifndef c_controlPointVoxelSpacing
#define c_controlPointVoxelSpacing controlPointVoxelSpacing
#endif

// Cubic B-spline weights at u = offset/5, offsets 0..4.
#define W0(u) ((1.0f - (u)) * (1.0f - (u)) * (1.0f - (u)) / 6.0f)
#define W1(u) ((3.0f * (u) * (u) * (u) - 6.0f * (u) * (u) + 4.0f) / 6.0f)
#define W2(u) ((-3.0f * (u) * (u) * (u) + 3.0f * (u) * (u) + 3.0f * (u) + 1.0f) / 6.0f)
#define W3(u) ((u) * (u) * (u) / 6.0f)
#if BasisA
#define BASIS_INDEX(w, o) ((o) * 4 + (w))
__constant__ float c_basis[20] = {W0(0.0f), W1(0.0f), W2(0.0f), W3(0.0f), W0(0.2f), W1(0.2f), W2(0.2f), W3(0.2f), W0(0.4f), W1(0.4f), W2(0.4f), W3(0.4f), W0(0.6f), W1(0.6f), W2(0.6f), W3(0.6f), W0(0.8f), W1(0.8f), W2(0.8f), W3(0.8f)};
#else
#define BASIS_INDEX(w, o) ((w) * 5 + (o))
__constant__ float c_basis[20] = {W0(0.0f), W0(0.2f), W0(0.4f), W0(0.6f), W0(0.8f), W1(0.0f), W1(0.2f), W1(0.4f), W1(0.6f), W1(0.8f), W2(0.0f), W2(0.2f), W2(0.4f), W2(0.6f), W2(0.8f), W3(0.0f), W3(0.2f), W3(0.4f), W3(0.6f), W3(0.8f)};
#endif

#if RemX
#define XREM remx
#else
#define XREM (x % c_controlPointVoxelSpacing)
#endif

// The 16 partial sums of a warp (index masked so that every access stays inside the warp's slots).
#define tempDisplacement(c, b) sharedDisplacement[(threadIdx.x / 32) * 16 + ((c) & 3) * 4 + ((b) & 3)]

// Precomputed basis value: weight w (0..3) at offset o (0..4).
__device__ __forceinline__ float getBasis(cudaTextureObject_t basisTexture, int w, int o) {
#if constantBasis
  return c_basis[BASIS_INDEX(w, o)];
#else
  return tex1Dfetch<float>(basisTexture, BASIS_INDEX(w, o));
#endif
}

__device__ __forceinline__ void getBSplineBasisValues(float u, float* values) {
  const float FF = u * u;
  const float FFF = FF * u;
  const float MF = 1.0f - u;
  values[0] = MF * MF * MF / 6.0f;
  values[1] = (3.0f * FFF - 6.0f * FF + 4.0f) / 6.0f;
  values[2] = (-3.0f * FFF + 3.0f * FF + 3.0f * u + 1.0f) / 6.0f;
  values[3] = FFF / 6.0f;
}

// The interpolating (Catmull-Rom) cubic used when c_UseBSpline is false.
__device__ __forceinline__ void getSplineBasisValues(float u, float* values) {
  const float FF = u * u;
  const float FFF = FF * u;
  values[0] = (-FFF + 2.0f * FF - u) / 2.0f;
  values[1] = (3.0f * FFF - 5.0f * FF + 2.0f) / 2.0f;
  values[2] = (-3.0f * FFF + 4.0f * FF + u) / 2.0f;
  values[3] = (FFF - FF) / 2.0f;
}

extern "C" __global__ void reg_deform_tile5(const unsigned int* activeTiles, const int activeTileNumber, const int nx,
                                            const int tilesY, const int gx, const int gy,
                                            cudaTextureObject_t controlPointTexture, cudaTextureObject_t basisTexture,
                                            const int useBSpline, const int controlPointVoxelSpacing,
                                            float4* positionField) {
  extern __shared__ float4 sharedDisplacement[];
  //@gi begin
  const int thread = (threadIdx.x & 31);
  const unsigned int tid = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x / 32 + threadIdx.x / 32;
  unsigned int tileCode = 0;
  int x = 0;
  int tileY = 0;
  int tileZ = 0;
  int3 nodeAnte = make_int3(0, 0, 0);
  float relative = 0.0f;
  float xBasis[4] = {};  // value-initialised: an edit that skips its fill reads zeros, not undefined values
  float basis = 0.0f;
  int a = 0;
  int b = 0;
  int c = 0;
  int remx = 0;
  int remy = 0;
  int remz = 0;
  int indexYZ = 0;
  int indexXYZ = 0;
  unsigned int tid2 = 0;
  float4 nodeCoefficient = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 partial = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 displacement = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (tid < activeTileNumber) {
    tileCode = activeTiles[tid];
    x = tileCode % nx;
    tileY = (tileCode / nx) % tilesY;
    tileZ = (tileCode / nx) / tilesY;
#if RemX //@gi fixed
    remx = x % c_controlPointVoxelSpacing;
#endif //@gi fixed
    nodeAnte.x = (int)floorf((float)x / (float)c_controlPointVoxelSpacing);
    nodeAnte.y = tileY;
    nodeAnte.z = tileZ;
#if directxBasis || constantBasis //@gi fixed
    xBasis[0] = getBasis(basisTexture, 0, XREM);
    xBasis[1] = getBasis(basisTexture, 1, XREM);
    xBasis[2] = getBasis(basisTexture, 2, XREM);
    xBasis[3] = getBasis(basisTexture, 3, XREM);
#else //@gi fixed
    relative = (float)x / (float)c_controlPointVoxelSpacing - (float)nodeAnte.x;
    relative = relative > 0 ? relative : 0.0f;
    if (c_UseBSpline) {
      getBSplineBasisValues(relative, xBasis);
    }
    if (!c_UseBSpline) {
      getSplineBasisValues(relative, xBasis);
    }
#endif //@gi fixed
    if ((threadIdx.x & 31) < 16) {
      b = thread & 3;
      c = (thread >> 2) & 3;
      indexYZ = ((nodeAnte.z + c) * gy + nodeAnte.y + b) * gx;
      partial = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (a = 0; a < 4; a++) {
        indexXYZ = indexYZ + nodeAnte.x + a;
        nodeCoefficient = tex1Dfetch<float4>(controlPointTexture, indexXYZ);
        partial.x += nodeCoefficient.x * xBasis[a];
        partial.y += nodeCoefficient.y * xBasis[a];
        partial.z += nodeCoefficient.z * xBasis[a];
      }
      tempDisplacement(c, b) = partial;
    }
    __syncwarp(); //@gi fixed
    if (thread < 25) {
      remy = thread % c_controlPointVoxelSpacing;
      remz = thread / c_controlPointVoxelSpacing;
      tid2 = tid * 25 + thread;
      displacement = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (c = 0; c < 4; c++) {
        for (b = 0; b < 4; b++) {
          basis = getBasis(basisTexture, b, remy) * getBasis(basisTexture, c, remz);
          displacement.x += tempDisplacement(c, b).x * basis;
          displacement.y += tempDisplacement(c, b).y * basis;
          displacement.z += tempDisplacement(c, b).z * basis;
        }
      }
      positionField[tid2] = displacement;
    }
  }
  //@gi end
}

// One thread per active voxel, any (per-axis, possibly fractional) spacing in reference voxels.
extern "C" __global__ void reg_deform_generic(const unsigned int* activeVoxels, const int activeVoxelNumber,
                                              const int nx, const int ny, const int gx, const int gy, const float sx,
                                              const float sy, const float sz, cudaTextureObject_t controlPointTexture,
                                              const int useBSpline, float4* positionField) {
  const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= (unsigned int)activeVoxelNumber) return;
  const unsigned int v = activeVoxels[tid];
  const int x = v % nx;
  const int y = (v / nx) % ny;
  const int z = (v / nx) / ny;
  const float tx = (float)x / sx, ty = (float)y / sy, tz = (float)z / sz;
  const int ix = (int)floorf(tx), iy = (int)floorf(ty), iz = (int)floorf(tz);
  float wx[4], wy[4], wz[4];
  if (c_UseBSpline) {
    getBSplineBasisValues(tx - ix, wx);
    getBSplineBasisValues(ty - iy, wy);
    getBSplineBasisValues(tz - iz, wz);
  } else {
    getSplineBasisValues(tx - ix, wx);
    getSplineBasisValues(ty - iy, wy);
    getSplineBasisValues(tz - iz, wz);
  }
  float4 p = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int c = 0; c < 4; c++) {
    for (int b = 0; b < 4; b++) {
      const int row = ((iz + c) * gy + iy + b) * gx + ix;
      float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int a = 0; a < 4; a++) {
        const float4 n = tex1Dfetch<float4>(controlPointTexture, row + a);
        s.x += n.x * wx[a];
        s.y += n.y * wx[a];
        s.z += n.z * wx[a];
      }
      const float w = wz[c] * wy[b];
      p.x += s.x * w;
      p.y += s.y * w;
      p.z += s.z * w;
    }
  }
  positionField[tid] = p;
}

// Reads before writes (docs/GI.md). NVRTC's warning #549 (a refusal in nvrtc_compile) fires only for a
// scalar read in straight-line code before any assignment, never for an array. So the tile kernel's
// xBasis is value-initialised (every configuration's cubin is byte-identical); its scalars and float4s
// start with a value as the paper's code did. Left as it is: sharedDisplacement (each warp's 16 slots
// written before the __syncwarp that guards their reads).
