// SGM stage census on the GPU (support kernel): 9x7 centre-symmetric census, bit k set when
// I(p + o_k) > I(p - o_k) for the 31 offsets o_k of the half window in raster order (dy -3..0,
// dx -4..4, dy < 0 or dx < 0), reads clamped to the image. Bit-identical to census_cpu().
// Block 32x8 threads, each 4 pixels of a column 8 rows apart (a block: 32x32 pixels); the 40x38
// tile around them is staged in shared memory. (One pixel per thread, 32x8 per block: 2 x 26 us at
// 1920x1080 on the H100, most of it the block's fixed cost.) Grid: sgm_census_grid().
// sgm_census4_*: the code of (x, y) four times, copy q (H pitch words apart) at x + offset + q of its
// row: the shifted copies the third aggregation kernel (aggregate_vec.cu) reads as aligned chunks.
#define CENSUS_BX 32
#define CENSUS_BY 8
#define CENSUS_RY 4                        // rows per thread
#define CENSUS_TY (CENSUS_BY * CENSUS_RY)  // rows per block

template <class T, int COPIES>
__device__ __forceinline__ void census_body(const T* __restrict__ img, const int W, const int H,
                                            unsigned* __restrict__ out, const int pitch, const int offset) {
  __shared__ T tile[CENSUS_TY + 6][CENSUS_BX + 8];
  const int x0 = blockIdx.x * CENSUS_BX - 4, y0 = blockIdx.y * CENSUS_TY - 3;
  for (int i = threadIdx.y * CENSUS_BX + threadIdx.x; i < (CENSUS_TY + 6) * (CENSUS_BX + 8); i += CENSUS_BX * CENSUS_BY) {
    const int ty = i / (CENSUS_BX + 8), tx = i % (CENSUS_BX + 8);
    const int x = min(max(x0 + tx, 0), W - 1), y = min(max(y0 + ty, 0), H - 1);
    tile[ty][tx] = img[(size_t)y * W + x];
  }
  __syncthreads();
  const int x = blockIdx.x * CENSUS_BX + threadIdx.x;
  if (x >= W) return;
  const int tx = x - x0;
#pragma unroll
  for (int r = 0; r < CENSUS_RY; ++r) {
    const int y = blockIdx.y * CENSUS_TY + threadIdx.y + r * CENSUS_BY;
    if (y >= H) return;
    // p +- o stays inside the tile, whose entries are the clamped reads.
    const int ty = y - y0;
    unsigned v = 0;
    int k = 0;
#pragma unroll
    for (int dy = -3; dy <= 0; ++dy)
#pragma unroll
      for (int dx = -4; dx <= 4; ++dx) {
        if (dy < 0 || dx < 0) {
          if (tile[ty + dy][tx + dx] > tile[ty - dy][tx - dx]) v |= 1u << k;
          ++k;
        }
      }
#pragma unroll
    for (int q = 0; q < COPIES; ++q) out[(size_t)q * H * pitch + (size_t)y * pitch + x + offset + q] = v;
  }
}

#define SGM_CENSUS_ENTRY(NAME, T, COPIES)                                                                       \
  extern "C" __global__ void __launch_bounds__(CENSUS_BX * CENSUS_BY)                                            \
      NAME(const T* __restrict__ img, const int W, const int H, unsigned* __restrict__ out, const int pitch,     \
           const int offset) {                                                                                   \
    census_body<T, COPIES>(img, W, H, out, pitch, offset);                                                       \
  }

SGM_CENSUS_ENTRY(sgm_census_u8, unsigned char, 1)
SGM_CENSUS_ENTRY(sgm_census_u16, unsigned short, 1)
SGM_CENSUS_ENTRY(sgm_census4_u8, unsigned char, 4)
SGM_CENSUS_ENTRY(sgm_census4_u16, unsigned short, 4)
