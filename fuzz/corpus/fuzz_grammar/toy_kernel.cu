// Toy kernel for the GI engine's tests: a clamped 1-D weighted box filter with a shared-memory
// option. Written with deliberate inefficiencies (a barrier inside the tap loop, a leftover debug
// store) that genetic improvement can find. Conventions: docs/ARCHITECTURE.md, "Kernel sources".
#ifndef BLOCK_W
#define BLOCK_W 128
#endif
#ifndef USE_SHARED
#define USE_SHARED 0
#endif
#define RADIUS 8

extern "C" __global__ void k(const float* in, const float* weights, float* out, float* scratch, int n,
                                      float limit) {
//@gi begin
  __shared__ float tile[BLOCK_W + 2 * RADIUS];
  __shared__ float w[2 * RADIUS + 1];
  int t = threadIdx.x;
  int i = blockIdx.x * BLOCK_W + t;
  float acc = 0.0f;
  float bias = 0.0f;
  if (t < 2 * RADIUS + 1) {
    w[t] = weights[t];
  }
#if USE_SHARED
  for (int j = t; j < BLOCK_W + 2 * RADIUS; j += BLOCK_W) {
    int g = blockIdx.x * BLOCK_W + j - RADIUS;
    g = min(max(g, 0), n - 1);
    tile[j] = in[g];
  }
#endif
  __syncthreads();
  for (int k = -RADIUS; k <= RADIUS; k++) {
#if USE_SHARED
    acc += w[k + RADIUS] * tile[t + k + RADIUS];
#else
    int g = min(max(i + k, 0), n - 1);
    acc += w[k + RADIUS] * in[g];
#endif
    __syncthreads();
  }
  acc = acc + bias;
  if (i < n) {
    scratch[i] = acc;
    if (acc > limit) {
      acc = limit;
    }
    out[i] = acc;  //@gi fixed
  }
//@gi end
}
