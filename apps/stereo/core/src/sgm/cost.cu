// SGM stage cost on the GPU for the sad/ssd kinds (support kernel): the stored volume
// vol[y][x][k] (k < Dp; k >= D written as 0) of
//   sad  round(sum |L - R| / n)             ssd  isqrt(floor(sum (L - R)^2 / n))   (<= 255)
// over the window, L(x+i, y+j) and R(x+i-d, y+j) clamped to the image, 8-bit values.
// Bit-identical to cost_cpu. One thread per (k, x) of a row, k fastest (coalesced stores).
#include "core/src/sgm/sgm_math.h"

extern "C" __global__ void __launch_bounds__(256)
    sgm_cost_window(const unsigned char* __restrict__ L, const unsigned char* __restrict__ R,
                    unsigned char* __restrict__ vol, const int W, const int H, const int dmin, const int D,
                    const int Dp, const int radius, const int squared) {
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  if (t >= (long long)W * Dp) return;
  const int k = (int)(t % Dp), x = (int)(t / Dp);
  unsigned cost = 0;
  if (k < D) {
    const int d = dmin + k;
    unsigned s = 0;
    for (int j = -radius; j <= radius; ++j) {
      const int yy = min(max(y + j, 0), H - 1);
      for (int i = -radius; i <= radius; ++i) {
        const int a = L[(size_t)yy * W + min(max(x + i, 0), W - 1)];
        const int b = R[(size_t)yy * W + min(max(x + i - d, 0), W - 1)];
        s += squared ? (unsigned)((a - b) * (a - b)) : (unsigned)(a > b ? a - b : b - a);
      }
    }
    const unsigned n = (unsigned)((2 * radius + 1) * (2 * radius + 1));
    cost = squared ? sgm_math::isqrt(s / n) : (s + n / 2) / n;
    if (cost > 255) cost = 255;
  }
  vol[((size_t)y * W + x) * Dp + k] = (unsigned char)cost;
}
