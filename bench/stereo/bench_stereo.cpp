// Stereo throughput: disparity evaluations per second (W x H x D / time) and frames per second for
// the CPU reference, the GPU original (CUDA events, warm-up, L2 flushed, median of repeats) and,
// in bench_stereo_opencv, OpenCV's StereoBM (same window, same number of disparities) as the peer.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "evk/device.hpp"
#include "evk/parallel.hpp"
#include "evk/stereo/reference.hpp"
#include "evk/stereo/synthetic.hpp"

#if defined(EVK_HAVE_CUDA)
#include "evk/cuda_check.hpp"
#include "evk/gpu_timer.hpp"
#include "evk/stereo/gpu_frame.hpp"
#endif
#if defined(EVK_BENCH_OPENCV)
#include <opencv2/calib3d.hpp>
#endif

using namespace evk::stereo;

namespace {
struct Size {
  int w, h, maxd;
};
const Size kSizes[] = {{320, 240, 50}, {1282, 1110, 50}, {1920, 1080, 63}};

const SyntheticPair& pair_for(int i) {
  static SyntheticPair p[3] = {make_synthetic_pair(320, 240, 50, 1), make_synthetic_pair(1282, 1110, 50, 2),
                               make_synthetic_pair(1920, 1080, 63, 3)};
  return p[i];
}

void counters(benchmark::State& st, const Size& s, double seconds_per_frame) {
  const double evals = double(s.w) * s.h * (s.maxd + 1);
  st.counters["disp_evals_per_s"] = benchmark::Counter(evals / seconds_per_frame);
  st.counters["fps"] = benchmark::Counter(1.0 / seconds_per_frame);
  st.counters["W"] = s.w;
  st.counters["H"] = s.h;
  st.counters["D"] = s.maxd + 1;
}

// Per-iteration work as rates over the measured (real) time.
void rate_counters(benchmark::State& st, const Size& s, int d) {
  st.counters["disp_evals_per_s"] =
      benchmark::Counter(double(s.w) * s.h * d, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["fps"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["W"] = s.w;
  st.counters["H"] = s.h;
  st.counters["D"] = d;
}

void BM_cpu_reference(benchmark::State& st) {
  const Size& s = kSizes[st.range(0)];
  const SyntheticPair& p = pair_for(static_cast<int>(st.range(0)));
  Params prm;
  prm.max_disparity = s.maxd;
  for (auto _ : st) benchmark::DoNotOptimize(disparity_cpu(p.left, p.right, prm));
  rate_counters(st, s, s.maxd + 1);
  st.counters["threads"] = evk::default_threads();
}

#if defined(EVK_HAVE_CUDA)
// GPU original: rows = the paper's default 40 (and the paper's pre-tuned 5 for reference).
void BM_gpu_original(benchmark::State& st) {
  if (!evk::gpu_environment().usable()) {
    st.SkipWithError("no usable GPU");
    return;
  }
  const Size& s = kSizes[st.range(0)];
  const SyntheticPair& p = pair_for(static_cast<int>(st.range(0)));
  Params prm;
  prm.max_disparity = s.maxd;
  KernelSettings ks = KernelSettings::from({{"ROWSperTHREAD", std::to_string(st.range(1))}});
  LoadedKernel k = load_kernel(ks, evk::gpu_environment().devices[0].cc());
  DeviceFrame f;
  f.upload(p.left, p.right);
  cudaStream_t stream;
  EVK_CUDA(cudaStreamCreate(&stream));
  evk::TimingStats last;
  for (auto _ : st) {
    last = evk::time_gpu([&](cudaStream_t s2) { f.launch(k.kernel, ks, prm, s2); }, stream);
    st.SetIterationTime(last.median_ms / 1000.0);
  }
  // Identity guard: a benchmark of a wrong kernel is worthless.
  f.poison(stream);
  f.launch(k.kernel, ks, prm, stream);
  DisparityMap g = to_disparity(f.download(ks, stream), prm);
  if (g.d != disparity_cpu(p.left, p.right, prm).d) st.SkipWithError("GPU output differs from the CPU reference");
  EVK_CUDA(cudaStreamDestroy(stream));
  counters(st, s, last.median_ms / 1000.0);
  st.counters["median_ms"] = last.median_ms;
  st.counters["min_ms"] = last.min_ms;
  st.counters["max_ms"] = last.max_ms;
  st.counters["spread"] = last.spread();
  st.counters["repeats"] = last.repeats;
  st.SetLabel(evk::gpu_environment().devices[0].name + " " + k.origin);
}
#endif

#if defined(EVK_BENCH_OPENCV)
// StereoBM: window 11, numDisparities = D rounded up to a multiple of 16, no pre-filter/texture
// /uniqueness/speckle post-processing (closest to plain SSD/SAD block matching).
void BM_opencv_stereobm(benchmark::State& st) {
  const Size& s = kSizes[st.range(0)];
  const SyntheticPair& p = pair_for(static_cast<int>(st.range(0)));
  cv::Mat L(s.h, s.w, CV_8U, const_cast<std::uint8_t*>(p.left.pixels.data()));
  cv::Mat R(s.h, s.w, CV_8U, const_cast<std::uint8_t*>(p.right.pixels.data()));
  const int nd = ((s.maxd + 1 + 15) / 16) * 16;
  auto bm = cv::StereoBM::create(nd, 11);
  bm->setTextureThreshold(0);
  bm->setUniquenessRatio(0);
  bm->setSpeckleWindowSize(0);
  cv::Mat disp;
  for (auto _ : st) bm->compute(L, R, disp);
  rate_counters(st, s, nd);
  st.counters["threads"] = cv::getNumThreads();
  st.counters["D_opencv"] = nd;
}
#endif

}  // namespace

BENCHMARK(BM_cpu_reference)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
#if defined(EVK_HAVE_CUDA)
BENCHMARK(BM_gpu_original)
    ->ArgsProduct({{0, 1, 2}, {40, 5}})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime()
    ->Iterations(3);
#endif
#if defined(EVK_BENCH_OPENCV)
BENCHMARK(BM_opencv_stereobm)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
#endif

BENCHMARK_MAIN();
