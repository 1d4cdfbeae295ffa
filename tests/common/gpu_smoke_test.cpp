// GPU smoke test: device query, an embedded (nvcc) kernel and an NVRTC-compiled kernel launched
// through the shared library path, every output element checked; the timer returns sane numbers.
#include <cmath>
#include <vector>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/gpu_timer.hpp"
#include "evk_kernels/evk_smoke_kernel.hpp"
#include "evk_testing.hpp"

namespace {
struct Buffers {
  int n;
  std::vector<float> x, y;
  float *dx = nullptr, *dy = nullptr;
  explicit Buffers(int n_) : n(n_), x(n_), y(n_) {
    for (int i = 0; i < n; ++i) {
      x[i] = std::sin(0.1f * i);
      y[i] = std::cos(0.3f * i);
    }
    EVK_CUDA(cudaMalloc(&dx, n * sizeof(float)));
    EVK_CUDA(cudaMalloc(&dy, n * sizeof(float)));
    EVK_CUDA(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    EVK_CUDA(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  ~Buffers() {
    cudaFree(dx);
    cudaFree(dy);
  }
  void run(cudaKernel_t k, float a) {
    void* args[] = {&n, &a, &dx, &dy};
    evk::launch(k, dim3((n + 255) / 256), dim3(256), args);
    EVK_CUDA_LAST();
    EVK_CUDA(cudaDeviceSynchronize());
  }
  std::vector<float> result() {
    std::vector<float> r(n);
    EVK_CUDA(cudaMemcpy(r.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    return r;
  }
};
}  // namespace

TEST(GpuSmoke, DeviceQuery) {
  EVK_REQUIRE_GPU();
  const auto& env = evk::gpu_environment();
  const auto& d = env.devices[0];
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.cc_major, 3);
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.total_mem, 0u);
  EXPECT_GT(env.driver_version, 0);
  std::printf("GPU 0: %s cc %d.%d, %d SMs, L2 %zu B, driver %s, runtime %s\n", d.name.c_str(), d.cc_major,
              d.cc_minor, d.sm_count, d.l2_bytes, evk::format_cuda_version(env.driver_version).c_str(),
              evk::format_cuda_version(env.runtime_version).c_str());
}

TEST(GpuSmoke, EmbeddedFatbinKernel) {
  EVK_REQUIRE_GPU();
  const auto& img = evk_smoke_kernel();
  ASSERT_GT(img.fatbin_size, 0u);
  evk::CudaLibrary lib(img.fatbin);
  Buffers b(100003);  // not a multiple of the block size
  b.run(lib.kernel("evk_smoke_saxpy"), 2.5f);
  auto r = b.result();
  // nvcc contracts a*x+y into one fused multiply-add: the exact reference is fmaf.
  for (int i = 0; i < b.n; ++i) ASSERT_EQ(r[i], std::fmaf(2.5f, b.x[i], b.y[i]) + 0.0f) << i;
}

TEST(GpuSmoke, NvrtcKernel) {
  EVK_REQUIRE_GPU();
  const auto& d = evk::gpu_environment().devices[0];
  evk::NvrtcRequest req;
  req.source = std::string(evk_smoke_kernel().text());
  req.options = {"-DOFFSET=1.0f"};
  req.cc = d.cc();
  auto c = evk::nvrtc_compile(req);
  ASSERT_TRUE(c.ok) << c.log;
  evk::CudaLibrary lib(c.cubin.data());
  Buffers b(4097);
  b.run(lib.kernel("evk_smoke_saxpy"), -1.0f);
  auto r = b.result();
  for (int i = 0; i < b.n; ++i) ASSERT_EQ(r[i], std::fmaf(-1.0f, b.x[i], b.y[i]) + 1.0f) << i;
}

TEST(GpuSmoke, MissingKernelNameThrows) {
  EVK_REQUIRE_GPU();
  evk::CudaLibrary lib(evk_smoke_kernel().fatbin);
  EXPECT_THROW(lib.kernel("no_such_kernel"), evk::CudaError);
}

TEST(GpuSmoke, TimerMeasuresSomething) {
  EVK_REQUIRE_GPU();
  evk::CudaLibrary lib(evk_smoke_kernel().fatbin);
  cudaKernel_t k = lib.kernel("evk_smoke_saxpy");
  Buffers b(1 << 24);
  float a = 1.0001f;
  void* args[] = {&b.n, &a, &b.dx, &b.dy};
  auto t = evk::time_gpu([&](cudaStream_t s) { evk::launch(k, dim3((b.n + 255) / 256), dim3(256), args, 0, s); });
  EXPECT_GT(t.median_ms, 0.0);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_GE(t.repeats, 3);
  // 16 Mi floats: 3 x 64 MiB moved; a GPU does that in well under 100 ms.
  EXPECT_LT(t.median_ms, 100.0);
  std::printf("saxpy 16M: median %.4f ms (min %.4f, max %.4f, %d repeats) = %.0f GB/s\n", t.median_ms, t.min_ms,
              t.max_ms, t.repeats, 3.0 * 4 * b.n / (t.median_ms * 1e6));
}
