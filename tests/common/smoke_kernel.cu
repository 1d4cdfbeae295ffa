// A tiny self-contained kernel for the GPU smoke test: y[i] = a * x[i] + y[i] + OFFSET.
#ifndef OFFSET
#define OFFSET 0.0f
#endif
extern "C" __global__ void evk_smoke_saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i] + OFFSET;
}
