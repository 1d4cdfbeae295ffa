// Stereo throughput: disparity evaluations per second (W x H x D / time) and frames per second for
// the CPU reference, the GPU original (CUDA events, warm-up, L2 flushed, median of repeats) and,
// in bench_stereo_opencv, OpenCV's StereoBM (same window, same number of disparities) as the peer.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "core/reference.hpp"
#include "core/synthetic.hpp"
#include "evk/device.hpp"
#include "evk/parallel.hpp"

#if defined(EVK_HAVE_CUDA)
#include "evk/cuda_check.hpp"
#include "evk/gpu_timer.hpp"
#include "core/gpu_frame.hpp"
#include "core/sgm_gpu.hpp"
#include "evk/cuda_library.hpp"
#include "gi/gi_problem.hpp"
#include "core/ssd_expert.hpp"
#endif
#if defined(EVK_BENCH_OPENCV)
#include <cstdlib>
#include <filesystem>
#include <opencv2/calib3d.hpp>

#include "core/eval.hpp"
#include "io/io.hpp"
#endif

using namespace evk::stereo;

namespace {
struct Size {
  int w, h, maxd;
};
const Size kSizes[] = {{320, 240, 50}, {1282, 1110, 50}, {1920, 1080, 63}, {1920, 1080, 127}, {1920, 1080, 255}};

const SyntheticPair& pair_for(int i) {
  static SyntheticPair p[5] = {make_synthetic_pair(320, 240, 50, 1), make_synthetic_pair(1282, 1110, 50, 2),
                               make_synthetic_pair(1920, 1080, 63, 3), make_synthetic_pair(1920, 1080, 127, 4),
                               make_synthetic_pair(1920, 1080, 255, 5)};
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

// The expert SSD kernels, same results as the original: range(1) 0 = v2 (kernels/original/stereo/
// ssd_expert.cu, the fatbin's default configuration), 1 = v1 (apps/stereo/core/src/ssd_expert_v1.cu).
void BM_gpu_expert(benchmark::State& st) {
  if (!evk::gpu_environment().usable()) {
    st.SkipWithError("no usable GPU");
    return;
  }
  const Size& s = kSizes[st.range(0)];
  const SyntheticPair& p = pair_for(static_cast<int>(st.range(0)));
  Params prm;
  prm.max_disparity = s.maxd;
  const SsdExpertVersion v = st.range(1) == 0 ? SsdExpertVersion::v2 : SsdExpertVersion::v1;
  auto dev = cuda_sgm_device(0);
  SsdExpert k(*dev, s.w, s.h, v);
  k.poison();
  if (k.run(p.left, p.right, prm).d != disparity_cpu(p.left, p.right, prm).d) {
    st.SkipWithError("GPU output differs from the CPU reference");
    return;
  }
  auto stream = static_cast<cudaStream_t>(cuda_sgm_stream(*dev));
  evk::TimingStats last;
  for (auto _ : st) {
    last = evk::time_gpu([&](cudaStream_t) { k.compute(prm); }, stream);
    st.SetIterationTime(last.median_ms / 1000.0);
  }
  counters(st, s, last.median_ms / 1000.0);
  st.counters["median_ms"] = last.median_ms;
  st.counters["min_ms"] = last.min_ms;
  st.counters["max_ms"] = last.max_ms;
  st.counters["spread"] = last.spread();
  st.counters["repeats"] = last.repeats;
  st.SetLabel(evk::gpu_environment().devices[0].name + " " + k.kernel_name(prm.radius()));
}

// v2's configuration sweep (the GI problem's parameters EX_TY, EX_DC, EX_DS; NVRTC from the kernel
// text, launched as the GI problem does): which tile/chunk sizes matter at which size.
// Args: size, EX_TY, EX_DC, EX_DS.
void BM_gpu_expert_config(benchmark::State& st) {
  if (!evk::gpu_environment().usable()) {
    st.SkipWithError("no usable GPU");
    return;
  }
  const Size& s = kSizes[st.range(0)];
  const SyntheticPair& p = pair_for(static_cast<int>(st.range(0)));
  Params prm;
  prm.max_disparity = s.maxd;
  SsdExpertConfig cfg;
  cfg.ty = static_cast<int>(st.range(1));
  cfg.dc = static_cast<int>(st.range(2));
  cfg.ds = static_cast<int>(st.range(3));
  evk::NvrtcRequest req;
  req.source = make_expert_gi_problem()->kernel_source();
  req.options = cfg.compile_options(prm.radius());
  req.cc = evk::gpu_environment().devices[0].cc();
  const evk::NvrtcResult r = evk::CompileCache().compile(req);
  if (!r.ok) {
    st.SkipWithError(("NVRTC: " + r.log.substr(0, 300)).c_str());
    return;
  }
  evk::CudaLibrary lib(r.cubin.data());
  cudaKernel_t kern = lib.kernel("ssd_expert");
  const SsdExpertLaunch l = ssd_expert_launch(s.w, s.h, prm.radius(), cfg);
  if (l.smem > 48 * 1024)
    EVK_CUDA(cudaFuncSetAttribute(reinterpret_cast<const void*>(kern), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(l.smem)));
  const std::size_t n = static_cast<std::size_t>(s.w) * s.h;
  void *dl = nullptr, *dr = nullptr, *dout = nullptr;
  EVK_CUDA(cudaMalloc(&dl, n));
  EVK_CUDA(cudaMalloc(&dr, n));
  EVK_CUDA(cudaMalloc(&dout, n * 4));
  EVK_CUDA(cudaMemcpy(dl, p.left.pixels.data(), n, cudaMemcpyHostToDevice));
  EVK_CUDA(cudaMemcpy(dr, p.right.pixels.data(), n, cudaMemcpyHostToDevice));
  int W = s.w, H = s.h, dmin = prm.min_disparity, dmax = prm.max_disparity, min_ssd = prm.min_ssd;
  void* args[] = {&dl, &dr, &dout, &W, &H, &dmin, &dmax, &min_ssd};
  cudaStream_t stream;
  EVK_CUDA(cudaStreamCreate(&stream));
  auto run = [&](cudaStream_t s2) {
    evk::launch(kern, dim3(l.grid_x, l.grid_y), dim3(l.threads), args, l.smem, s2);
    EVK_CUDA_LAST();
  };
  EVK_CUDA(cudaMemsetAsync(dout, 0xA5, n * 4, stream));
  run(stream);
  std::vector<int> got(n);
  EVK_CUDA(cudaMemcpyAsync(got.data(), dout, n * 4, cudaMemcpyDeviceToHost, stream));
  EVK_CUDA(cudaStreamSynchronize(stream));
  bool ok = got == disparity_cpu(p.left, p.right, prm).d;
  evk::TimingStats last;
  if (ok)
    for (auto _ : st) {
      last = evk::time_gpu(run, stream);
      st.SetIterationTime(last.median_ms / 1000.0);
    }
  EVK_CUDA(cudaStreamDestroy(stream));
  cudaFree(dl);
  cudaFree(dr);
  cudaFree(dout);
  if (!ok) {
    st.SkipWithError("GPU output differs from the CPU reference");
    return;
  }
  counters(st, s, last.median_ms / 1000.0);
  st.counters["median_ms"] = last.median_ms;
  st.counters["spread"] = last.spread();
  st.counters["smem_KiB"] = static_cast<double>(l.smem) / 1024.0;
  st.SetLabel(evk::gpu_environment().devices[0].name + " expert v2 NVRTC");
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

// OpenCV StereoSGBM as the accuracy peer of our SGM on the real pairs (bench/stereo/sgm_vs_libsgm.sh
// measures libSGM on the GPU host, which has no OpenCV): 8 paths (MODE_HH), block 3, the documented
// P1 = 8 cn block^2 = 72, P2 = 32 cn block^2 = 288, dense (no uniqueness, speckle, LR check), or
// with its LR check (disp12MaxDiff 1) and uniqueness 5. Counters: bad-1/bad-2 (%) non-occluded
// (aloe: all known pixels), invalid counted as bad, the same rule as `stereo eval`.
void BM_opencv_sgbm_accuracy(benchmark::State& st) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("EVK_SHARED_DATA");
  const fs::path shared = env ? fs::path(env) : fs::path(EVK_SOURCE_DIR) / ".." / "shared" / "data";
  const fs::path project = std::getenv("EVK_DATA_DIR") ? fs::path(std::getenv("EVK_DATA_DIR")) : fs::path(EVK_SOURCE_DIR) / "data";
  struct Scene {
    fs::path l, r, gt, mask;
    double scale;
    int nd;
  } scenes[] = {{shared / "stereo/Tsukuba/imL.png", shared / "stereo/Tsukuba/imR.png", shared / "stereo/Tsukuba/groundtruth.png",
                 shared / "stereo/Tsukuba/nonocc.png", 16, 64},
                {shared / "stereo/Venus/imL.png", shared / "stereo/Venus/imR.png", shared / "stereo/Venus/groundtruth.png",
                 shared / "stereo/Venus/nonocc.png", 8, 64},
                {project / "stereo/aloeL.jpg", project / "stereo/aloeR.jpg", project / "stereo/aloeGT.png", {}, 1, 256}};
  const Scene& sc = scenes[st.range(0)];
  if (!fs::exists(sc.l)) {
    st.SkipWithError(("absent: " + sc.l.string()).c_str());
    return;
  }
  const Image8 L = read_gray(sc.l), R = read_gray(sc.r);
  cv::Mat ml(L.height, L.width, CV_8U, const_cast<std::uint8_t*>(L.pixels.data()));
  cv::Mat mr(R.height, R.width, CV_8U, const_cast<std::uint8_t*>(R.pixels.data()));
  const bool lr = st.range(1) != 0;
  auto sgbm = cv::StereoSGBM::create(0, sc.nd, 3, 72, 288, lr ? 1 : -1, 0, lr ? 5 : 0, 0, 0, cv::StereoSGBM::MODE_HH);
  cv::Mat disp;
  for (auto _ : st) sgbm->compute(ml, mr, disp);
  FloatMap d{L.width, L.height, std::vector<float>(L.pixels.size())};
  for (int y = 0; y < L.height; ++y)
    for (int x = 0; x < L.width; ++x) {
      const short v = disp.at<short>(y, x);
      d.v[static_cast<std::size_t>(y) * L.width + x] = v < 0 ? std::numeric_limits<float>::infinity() : v / 16.0f;
    }
  const FloatMap gt = read_disparity(sc.gt, sc.scale);
  Image8 mask;
  if (!sc.mask.empty()) mask = read_mask(sc.mask);
  const EvalResult e = evaluate(d, gt, sc.mask.empty() ? nullptr : &mask, {1.0, 2.0});
  st.counters["bad1"] = e.percent(e.bad[0]);
  st.counters["bad2"] = e.percent(e.bad[1]);
  st.counters["invalid"] = e.percent(e.invalid);
  st.SetLabel(sc.l.parent_path().filename().string() + "/" + sc.l.filename().string() + (lr ? " lr" : " dense"));
}
#endif

}  // namespace

BENCHMARK(BM_cpu_reference)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
#if defined(EVK_HAVE_CUDA)
BENCHMARK(BM_gpu_original)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {40, 5}})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime()
    ->Iterations(3);
// original vs v1 vs v2: BM_gpu_(original|expert)/[234]/ = 1920x1080 at 64, 128, 256 disparities
BENCHMARK(BM_gpu_expert)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime()
    ->Iterations(3);
// 1920x1080 at 128 (and 64, 256) disparities: EX_TY x EX_DC at EX_DS 128, then EX_DS for the default
BENCHMARK(BM_gpu_expert_config)
    ->ArgsProduct({{3}, {16, 24, 32, 40, 64}, {2, 3, 4, 6}, {128}})
    ->ArgsProduct({{2, 3, 4}, {32}, {3}, {64, 256}})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime()
    ->Iterations(3);
#endif
#if defined(EVK_BENCH_OPENCV)
BENCHMARK(BM_opencv_sgbm_accuracy)->ArgsProduct({{0, 1, 2}, {0, 1}})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_opencv_stereobm)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
#endif

BENCHMARK_MAIN();
