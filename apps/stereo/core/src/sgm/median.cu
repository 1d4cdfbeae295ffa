// SGM stage median on the GPU (support kernel): a valid pixel becomes the lower median of the
// valid values of its 3x3 neighbourhood inside the image; invalid pixels stay invalid.
// Bit-identical to median3_cpu. One thread per pixel.
#define INVALID_Q (-32768)

extern "C" __global__ void __launch_bounds__(256)
    sgm_median3(const short* __restrict__ in, short* __restrict__ out, const int W, const int H) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= W || y >= H) return;
  const short c = in[(size_t)y * W + x];
  if (c == INVALID_Q) {
    out[(size_t)y * W + x] = c;
    return;
  }
  short v[9];
  int n = 0;
  for (int j = -1; j <= 1; ++j)
    for (int i = -1; i <= 1; ++i) {
      const int xx = x + i, yy = y + j;
      if (xx < 0 || xx >= W || yy < 0 || yy >= H) continue;
      const short s = in[(size_t)yy * W + xx];
      if (s == INVALID_Q) continue;
      int k = n++;
      while (k > 0 && v[k - 1] > s) {  // insertion sort
        v[k] = v[k - 1];
        --k;
      }
      v[k] = s;
    }
  out[(size_t)y * W + x] = v[(n - 1) / 2];
}
