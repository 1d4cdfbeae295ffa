// SGM stage lr_check on the GPU (support kernel): a valid left pixel x (1/16 pixel) survives when
// xr = x - round(dL) (halves up) lies in the image, the right map is valid there and
// |dL - dR(xr)| <= 16 max_diff. Bit-identical to lr_check_cpu. One thread per pixel.
#include "core/src/sgm/sgm_math.h"

#define INVALID_Q (-32768)

extern "C" __global__ void __launch_bounds__(256)
    sgm_lr_check(const short* __restrict__ left, const short* __restrict__ right, short* __restrict__ out,
                 const int W, const int H, const int max_diff, const int y0) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y + y0;  // rows from y0
  if (x >= W || y >= H) return;
  const int q = left[(size_t)y * W + x];
  short r = (short)INVALID_Q;
  if (q != INVALID_Q) {
    const int xr = x - sgm_math::round_q(q);
    if (xr >= 0 && xr < W) {
      const int d = right[(size_t)y * W + xr];
      if (d != INVALID_Q && (q - d <= 16 * max_diff) && (d - q <= 16 * max_diff)) r = (short)q;
    }
  }
  out[(size_t)y * W + x] = r;
}
