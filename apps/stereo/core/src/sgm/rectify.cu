// SGM stage rectify on the GPU (support kernel): the raw pair remapped through the rig's maps
// (core/rectify.hpp states the arithmetic), bit-identical to remap_cpu(). One thread per
// rectified pixel, blocks of 32x8; grid ceil(W / 32) x ceil(H / 8).
template <class T>
__device__ __forceinline__ void rectify_body(const T* __restrict__ raw, const float* __restrict__ mx,
                                             const float* __restrict__ my, const int W, const int H, T* __restrict__ out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  const size_t i = (size_t)y * W + x;
  const float px = mx[i], py = my[i];
  if (!(px > -1.0f && px < (float)W && py > -1.0f && py < (float)H)) {
    out[i] = 0;
    return;
  }
  // 256 p is exact, so contracting 256 p + 0.5 into an FMA changes nothing
  const int qx = (int)floorf(px * 256.0f + 0.5f), qy = (int)floorf(py * 256.0f + 0.5f);
  const int x0 = qx >> 8, y0 = qy >> 8;
  const unsigned fx = (unsigned)(qx & 255), fy = (unsigned)(qy & 255);
  const bool xin0 = x0 >= 0 && x0 < W, xin1 = x0 + 1 >= 0 && x0 + 1 < W;
  const bool yin0 = y0 >= 0 && y0 < H, yin1 = y0 + 1 >= 0 && y0 + 1 < H;
  const unsigned p00 = xin0 && yin0 ? raw[(size_t)y0 * W + x0] : 0u;
  const unsigned p10 = xin1 && yin0 ? raw[(size_t)y0 * W + x0 + 1] : 0u;
  const unsigned p01 = xin0 && yin1 ? raw[(size_t)(y0 + 1) * W + x0] : 0u;
  const unsigned p11 = xin1 && yin1 ? raw[(size_t)(y0 + 1) * W + x0 + 1] : 0u;
  const unsigned sum = (256u - fx) * (256u - fy) * p00 + fx * (256u - fy) * p10 + (256u - fx) * fy * p01 + fx * fy * p11;
  out[i] = (T)((sum + 32768u) >> 16);
}

#define SGM_RECTIFY_ENTRY(NAME, T)                                                                              \
  extern "C" __global__ void __launch_bounds__(256)                                                             \
      NAME(const T* __restrict__ raw, const float* __restrict__ mx, const float* __restrict__ my, const int W,  \
           const int H, T* __restrict__ out) {                                                                  \
    rectify_body<T>(raw, mx, my, W, H, out);                                                                    \
  }

SGM_RECTIFY_ENTRY(sgm_rectify_u8, unsigned char)
SGM_RECTIFY_ENTRY(sgm_rectify_u16, unsigned short)
