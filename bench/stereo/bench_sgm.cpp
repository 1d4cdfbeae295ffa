// SGM throughput: disparity evaluations per second (W x H x D / time) and frames per second of the
// GPU pipeline (device-resident: CUDA events, warm-up, L2 flushed before every repeat, median), per
// stage, host-to-host (pageable and pinned buffers, wall clock) and the CPU reference.
//
// Settings (third argument) mirror libSGM's, so bench/stereo/sgm_vs_libsgm.sh can set ratios:
//   0 dense     median 3x3 only              (libsgm_bench --lr -1 --uniq 1.0)
//   1 default   uniqueness 5 %, median, LR 1 (libsgm_bench defaults: uniq 0.95, LR 1)
//   2 subpixel  default + parabola           (libsgm_bench --subpixel)
// Input: a synthetic 1920x1080 pair, or EVK_BENCH_LEFT / EVK_BENCH_RIGHT (8-bit binary PGM, e.g.
// libsgm_bench --save-pair) of any size. Unless flags say otherwise, the policy table picks the
// aggregation kernel and its lane width (sgm_choose); the flags (SgmTuning, before or among Google
// Benchmark's) force them: --sgm-agg=1|2|3 (the seed, aggregate_fast.cu, aggregate_vec.cu),
// --sgm-k3=4|8|16 (kernel 3's lanes' K), --sgm-split3=0|1, --sgm-k=8|16|32,
// --sgm-loads=staged|direct|prefetch (the seed's census loads), --sgm-wta=1|2|3, and the host-to-host
// settings --sgm-bands=N, --sgm-copy-threads=N, --sgm-copy-chunk=KiB. The label names what ran
// ("agg2 K16 wta2").
// Every GPU configuration's output is checked once against the CPU reference at 640x360
// (SkipWithError when it differs). BM_sgm_gpu_rectify times the rectification stage (raw frames
// and a rig-like map at 1920x1080 and 3840x2160) before SGM.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/rectify.hpp"
#include "core/sgm.hpp"
#include "core/sgm_gpu.hpp"
#include "core/stream.hpp"
#include "core/synthetic.hpp"
#include "evk/device.hpp"
#include "evk/parallel.hpp"

#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include "evk/cuda_check.hpp"
#include "evk/gpu_timer.hpp"
#endif

using namespace evk::stereo;

namespace {
SgmTuning g_tuning;  // the --sgm-* flags

// Takes the --sgm-NAME=VALUE flags out of argv (Google Benchmark rejects flags it does not know).
bool take_tuning_flags(int& argc, char** argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const std::size_t eq = a.find('=');
    if (a.rfind("--sgm-", 0) != 0 || eq == std::string::npos) {
      argv[out++] = argv[i];
      continue;
    }
    const std::string name = a.substr(6, eq - 6), v = a.substr(eq + 1);
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    const bool number = !v.empty() && *end == '\0' && n >= 0;
    const std::pair<const char*, int*> ints[] = {
        {"k", &g_tuning.k},         {"agg", &g_tuning.agg},     {"k3", &g_tuning.k3},
        {"wta", &g_tuning.wta},     {"bands", &g_tuning.bands}, {"copy-threads", &g_tuning.copy_threads},
        {"copy-chunk", &g_tuning.copy_chunk_kib}};
    int* dst = nullptr;
    for (const auto& [key, field] : ints)
      if (name == key) dst = field;
    if (name == "loads" && (v == "staged" || v == "direct" || v == "prefetch")) {
      g_tuning.staged = v == "staged";
      g_tuning.direct = v == "direct";
      g_tuning.prefetch = v == "prefetch";
    } else if (number && name == "split3") {
      g_tuning.split3 = n != 0 ? 1 : 0;
    } else if (number && dst) {
      *dst = static_cast<int>(n);
    } else {
      std::fprintf(stderr, "bench_stereo_sgm: %s: unknown flag or bad value\n", a.c_str());
      return false;
    }
  }
  argc = out;
  argv[argc] = nullptr;
  return true;
}
}  // namespace

namespace {

const char* kSetting[] = {"dense", "default", "subpixel"};

SgmParams make_params(int D, int paths, int setting) {
  SgmParams p;
  p.min_disparity = 0;
  p.max_disparity = D - 1;
  p.paths = paths;
  p.post.median = 3;
  if (setting >= 1) {
    p.post.uniqueness = 5;
    p.post.lr_check = 1;
  }
  if (setting == 2) p.post.subpixel = Subpixel::parabola;
  return p;
}

Image8 read_pgm8(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  int w = 0, h = 0, mx = 0;
  Image8 im;
  if (f && std::fscanf(f, "P5 %d %d %d", &w, &h, &mx) == 3 && mx == 255) {
    std::fgetc(f);
    im = Image8{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h)};
    if (std::fread(im.pixels.data(), 1, im.pixels.size(), f) != im.pixels.size()) im = Image8{};
  }
  if (f) std::fclose(f);
  return im;
}

// The benchmark pair: EVK_BENCH_LEFT/RIGHT when set, else a synthetic 1920x1080 pair.
const std::pair<Image8, Image8>& bench_pair() {
  static const std::pair<Image8, Image8> p = [] {
    const char* l = std::getenv("EVK_BENCH_LEFT");
    const char* r = std::getenv("EVK_BENCH_RIGHT");
    if (l && r) {
      Image8 L = read_pgm8(l), R = read_pgm8(r);
      if (L.width > 0 && L.width == R.width && L.height == R.height) return std::pair{L, R};
      std::fprintf(stderr, "bench_sgm: cannot read EVK_BENCH_LEFT/RIGHT as 8-bit PGM; using a synthetic pair\n");
    }
    SyntheticPair s = make_synthetic_pair(1920, 1080, 100, 5);
    return std::pair{s.left, s.right};
  }();
  return p;
}


void rate_counters(benchmark::State& st, int w, int h, int d, double seconds) {
  st.counters["disp_evals_per_s"] = benchmark::Counter(double(w) * h * d / seconds);
  st.counters["fps"] = benchmark::Counter(1.0 / seconds);
  st.counters["W"] = w;
  st.counters["H"] = h;
  st.counters["D"] = d;
}

void BM_sgm_cpu(benchmark::State& st) {
  const auto& [L, R] = bench_pair();
  const SgmParams p = make_params(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  for (auto _ : st) benchmark::DoNotOptimize(sgm_cpu(L, R, p));
  st.counters["disp_evals_per_s"] = benchmark::Counter(double(L.width) * L.height * p.count(),
                                                       benchmark::Counter::kIsIterationInvariantRate);
  st.counters["fps"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = evk::default_threads();
  st.SetLabel(kSetting[st.range(2)]);
}

#if defined(EVK_HAVE_CUDA)
bool gpu_ok(benchmark::State& st) {
  if (!evk::gpu_environment().usable()) {
    st.SkipWithError("no usable GPU");
    return false;
  }
  return true;
}

// Once per configuration: the GPU output on a 640x360 crop equals sgm_cpu.
bool identical_once(const SgmParams& p, const SgmTuning& tune) {
  static std::map<std::string, bool> seen;
  const std::string key = std::to_string(p.count()) + "/" + std::to_string(p.paths) + "/" +
                          std::to_string(p.post.lr_check) + std::to_string(static_cast<int>(p.post.subpixel)) + "/" +
                          std::to_string(tune.k) + (tune.staged ? "s" : (tune.prefetch ? "p" : "d")) + std::to_string(tune.agg) +
                          std::to_string(tune.wta) + "/" + std::to_string(tune.k3);
  if (auto it = seen.find(key); it != seen.end()) return it->second;
  SyntheticPair s = make_synthetic_pair(640, 360, p.count() / 2, 9);
  auto dev = cuda_sgm_device(0);
  SgmPipeline pl(*dev, p, 640, 360, 8, tune);
  pl.poison();
  const bool ok = pl.run(s.left, s.right).left.q == sgm_cpu(s.left, s.right, p).left.q;
  return seen[key] = ok;
}

std::string choice_label(const SgmPipeline& pl) {
  const SgmChoice& c = pl.choice();
  return "agg" + std::to_string(c.agg) + " K" + std::to_string(pl.layout().K) + (c.agg == 3 ? " K3_" + std::to_string(c.k3) : "") +
         (c.agg == 3 && c.split3 ? " split" : "") +
         (c.staged ? " staged" : "") + (c.prefetch ? " prefetch" : "") + " wta" + std::to_string(c.wta);
}

void timing_counters(benchmark::State& st, const evk::TimingStats& t) {
  st.counters["median_ms"] = t.median_ms;
  st.counters["min_ms"] = t.min_ms;
  st.counters["max_ms"] = t.max_ms;
  st.counters["spread"] = t.spread();
  st.counters["repeats"] = t.repeats;
}

// Device-resident: the pair uploaded once, all stages timed together.
void BM_sgm_gpu(benchmark::State& st) {
  if (!gpu_ok(st)) return;
  const auto& [L, R] = bench_pair();
  const int D = static_cast<int>(st.range(0));
  const SgmParams p = make_params(D, static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  if (!identical_once(p, g_tuning)) {
    st.SkipWithError("GPU output differs from the CPU reference");
    return;
  }
  auto dev = cuda_sgm_device(0);
  SgmPipeline pl(*dev, p, L.width, L.height, 8, g_tuning);
  pl.upload(L.pixels.data(), R.pixels.data());
  auto stream = static_cast<cudaStream_t>(cuda_sgm_stream(*dev));
  evk::TimingStats t;
  for (auto _ : st) {
    t = evk::time_gpu([&](cudaStream_t) { pl.compute(); }, stream);
    st.SetIterationTime(t.median_ms / 1000.0);
  }
  rate_counters(st, L.width, L.height, D, t.median_ms / 1000.0);
  timing_counters(st, t);
  st.counters["K"] = pl.layout().K;
  st.counters["agg"] = pl.choice().agg;
  st.counters["staged"] = pl.choice().staged;
  st.counters["device_MiB"] = static_cast<double>(pl.device_bytes() >> 20);
  st.SetLabel(std::string(kSetting[st.range(2)]) + " " + choice_label(pl) + " " + evk::gpu_environment().devices[0].name);
}

// Each device stage alone (median of repeats, L2 flushed): where the time goes. census (or the
// sad/ssd volume), the aggregation of all directions in one launch and of each direction alone
// (agg_dirN_ms; the launch of all overlaps them), wta (+ uniqueness, sub-pixel, right map: compare
// setting 1 and 2 for the sub-pixel fit), median, LR check. Traffic: the path volumes are written
// once and read once by the wta, paths x (1 or 2) bytes per pixel and disparity each way.
void BM_sgm_gpu_stages(benchmark::State& st) {
  if (!gpu_ok(st)) return;
  const auto& [L, R] = bench_pair();
  const int D = static_cast<int>(st.range(0));
  const SgmParams p = make_params(D, static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  auto dev = cuda_sgm_device(0);
  SgmPipeline pl(*dev, p, L.width, L.height, 8, g_tuning);
  pl.upload(L.pixels.data(), R.pixels.data());
  pl.compute();
  auto stream = static_cast<cudaStream_t>(cuda_sgm_stream(*dev));
  evk::TimingStats c, a, w, md, lr;
  std::vector<evk::TimingStats> dir(static_cast<std::size_t>(p.paths));
  for (auto _ : st) {
    c = evk::time_gpu([&](cudaStream_t) { pl.enqueue_cost(); }, stream);
    a = evk::time_gpu([&](cudaStream_t) { pl.enqueue_aggregate(); }, stream);
    for (int d = 0; d < p.paths; ++d)
      dir[static_cast<std::size_t>(d)] = evk::time_gpu([&](cudaStream_t) { pl.enqueue_aggregate(d); }, stream);
    pl.enqueue_aggregate();  // every volume again before the wta
    w = evk::time_gpu([&](cudaStream_t) { pl.enqueue_wta(); }, stream);
    md = evk::time_gpu([&](cudaStream_t) { pl.enqueue_median(); }, stream);
    lr = evk::time_gpu([&](cudaStream_t) { pl.enqueue_lr_check(); }, stream);
    st.SetIterationTime((c.median_ms + a.median_ms + w.median_ms + md.median_ms + lr.median_ms) / 1000.0);
  }
  st.counters["census_ms"] = c.median_ms;
  st.counters["aggregate_ms"] = a.median_ms;
  for (int d = 0; d < p.paths; ++d) st.counters["agg_dir" + std::to_string(d) + "_ms"] = dir[static_cast<std::size_t>(d)].median_ms;
  st.counters["wta_ms"] = w.median_ms;
  st.counters["median_ms"] = md.median_ms;
  st.counters["lr_ms"] = lr.median_ms;
  st.counters["post_ms"] = md.median_ms + lr.median_ms;
  const double vol = static_cast<double>(pl.layout().volume_bytes(p.paths));
  const double cells = static_cast<double>(L.width) * L.height * D;
  st.counters["aggregate_GBps"] = vol / (a.median_ms / 1000.0) / 1e9;  // path volumes written
  st.counters["wta_GBps"] = vol / (w.median_ms / 1000.0) / 1e9;        // path volumes read
  st.counters["path_bytes_per_px_d"] = 2 * vol / cells;                // written + read
  st.counters["agg"] = pl.choice().agg;
  st.counters["K"] = pl.layout().K;
  st.SetLabel(std::string(kSetting[st.range(2)]) + " " + choice_label(pl));
}

// Host to host: upload, all stages, download, synchronise (wall clock). range(3): 1 = pinned buffers.
void BM_sgm_gpu_host(benchmark::State& st) {
  if (!gpu_ok(st)) return;
  const auto& [L, R] = bench_pair();
  const int D = static_cast<int>(st.range(0));
  const SgmParams p = make_params(D, static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  const bool pinned = st.range(3) != 0;
  auto dev = cuda_sgm_device(0);
  SgmPipeline pl(*dev, p, L.width, L.height, 8, g_tuning);
  const std::size_t n = static_cast<std::size_t>(L.width) * L.height;
  std::uint8_t *hl = nullptr, *hr = nullptr;
  std::int16_t* ho = nullptr;
  std::vector<std::int16_t> out(n);
  if (pinned) {
    EVK_CUDA(cudaMallocHost(&hl, n));
    EVK_CUDA(cudaMallocHost(&hr, n));
    EVK_CUDA(cudaMallocHost(&ho, n * 2));
    std::copy(L.pixels.begin(), L.pixels.end(), hl);
    std::copy(R.pixels.begin(), R.pixels.end(), hr);
  }
  // SgmPipeline::process: the upload (pageable buffers staged through pinned ones by host threads),
  // every stage, the wta in row bands whose post-processing and download overlap the next band
  // (--sgm-bands), the left map back in host memory
  auto once = [&] { pl.process(pinned ? hl : L.pixels.data(), pinned ? hr : R.pixels.data(), pinned ? ho : out.data(), nullptr); };
  for (int i = 0; i < 3; ++i) once();
  std::vector<double> ms;
  for (auto _ : st) {
    ms.clear();
    for (int i = 0; i < 21; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      once();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    const evk::TimingStats t = evk::summarize(ms);
    st.SetIterationTime(t.median_ms / 1000.0);
    rate_counters(st, L.width, L.height, D, t.median_ms / 1000.0);
    timing_counters(st, t);
  }
  if (pinned) {
    cudaFreeHost(hl);
    cudaFreeHost(hr);
    cudaFreeHost(ho);
  }
  st.SetLabel(std::string(kSetting[st.range(2)]) + (pinned ? " pinned" : " pageable"));
}

// The overlapped frame engine (stream.hpp) on in-memory frames: range(3) slots (CUDA streams),
// frames decoded and stored as no-ops, so this is the device pipeline's frame rate with pinned
// copies overlapping kernels (1 slot: no overlap).
void BM_sgm_gpu_stream(benchmark::State& st) {
  if (!gpu_ok(st)) return;
  const auto& [L, R] = bench_pair();
  const int D = static_cast<int>(st.range(0));
  const SgmParams p = make_params(D, static_cast<int>(st.range(1)), static_cast<int>(st.range(2)));
  const int slots = static_cast<int>(st.range(3)), n = 60;
  auto m = sgm_gpu_matcher(p, 0, slots, g_tuning);
  Frame proto;
  proto.left = to_image16(L);
  proto.right = to_image16(R);
  m->prepare(proto);
  auto load = [&](int) { return proto; };
  auto store = [](int, StereoResult&) {};
  run_stream(6, load, *m, store);  // warm-up: pipelines and pinned buffers
  StreamStats s;
  for (auto _ : st) {
    s = run_stream(n, load, *m, store);
    st.SetIterationTime(s.seconds);
  }
  const double f = static_cast<double>(s.frames);
  rate_counters(st, L.width, L.height, D, s.seconds / f);
  st.counters["upload_ms"] = s.upload_ms / f;
  st.counters["kernels_ms"] = s.kernel_ms / f;
  st.counters["download_ms"] = s.download_ms / f;
  st.counters["slots"] = slots;
  st.SetLabel(std::string(kSetting[st.range(2)]) + ", bound: " + s.bound);
}

// Rectification on the device before SGM (--rig on the GPU backend): a synthetic pair of
// range(0) x range(1) as the raw frames, a rig-like map (a 0.6 degree rotation, barrel distortion
// k1 -0.06: synthetic_rectify_maps), device-resident. rectify_ms: both images through the maps
// (sgm_rectify_u8); sgm_ms: every SGM stage after it; total_ms: the two together. The rectified
// images are checked once against remap_cpu (SkipWithError when they differ).
void BM_sgm_gpu_rectify(benchmark::State& st) {
  if (!gpu_ok(st)) return;
  const int w = static_cast<int>(st.range(0)), h = static_cast<int>(st.range(1)), D = static_cast<int>(st.range(2));
  const SgmParams p = make_params(D, 8, 1);
  const SyntheticPair s = make_synthetic_pair(w, h, D - 1, 5);
  const RectifyMaps maps = synthetic_rectify_maps(w, h, 0.01, -0.06);
  auto dev = cuda_sgm_device(0);
  SgmPipeline pl(*dev, p, w, h, 8, g_tuning);
  pl.set_rectify(maps);
  pl.upload(s.left.pixels.data(), s.right.pixels.data());  // raw: rectified on the device
  for (int k = 0; k < 2; ++k) {
    std::vector<std::uint8_t> got(s.left.pixels.size()), want(got.size());
    pl.download_image(k, got.data());
    dev->synchronize();
    remap_cpu((k ? s.right : s.left).pixels.data(), w, h, maps.x[k].data(), maps.y[k].data(), want.data());
    if (got != want) {
      st.SkipWithError("rectified image differs from remap_cpu");
      return;
    }
  }
  auto stream = static_cast<cudaStream_t>(cuda_sgm_stream(*dev));
  evk::TimingStats r, g, t;
  for (auto _ : st) {
    r = evk::time_gpu([&](cudaStream_t) { pl.enqueue_rectify(); }, stream);
    g = evk::time_gpu([&](cudaStream_t) { pl.compute(); }, stream);
    t = evk::time_gpu([&](cudaStream_t) { pl.enqueue_rectify(), pl.compute(); }, stream);
    st.SetIterationTime(t.median_ms / 1000.0);
  }
  rate_counters(st, w, h, D, t.median_ms / 1000.0);
  timing_counters(st, t);
  st.counters["rectify_ms"] = r.median_ms;
  st.counters["sgm_ms"] = g.median_ms;
  st.counters["total_ms"] = t.median_ms;
  // bytes moved by the rectification: the two maps (8 bytes a pixel) and the rectified image per
  // camera, the raw pixels at least once
  st.counters["rectify_GBps"] = 2.0 * w * h * (8 + 1 + 1) / (r.median_ms / 1000.0) / 1e9;
  st.SetLabel(std::string(kSetting[1]) + " " + choice_label(pl) + " " + evk::gpu_environment().devices[0].name);
}
#endif

}  // namespace

// args: disparities, paths, setting
BENCHMARK(BM_sgm_cpu)->Args({64, 8, 0})->Args({128, 8, 1})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
#if defined(EVK_HAVE_CUDA)
BENCHMARK(BM_sgm_gpu)
    ->ArgsProduct({{64, 128, 256}, {4, 8}, {0, 1, 2}})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK(BM_sgm_gpu_stages)->ArgsProduct({{64, 128, 256}, {4, 8}, {1, 2}})->Unit(benchmark::kMicrosecond)->UseManualTime()->Iterations(1);
BENCHMARK(BM_sgm_gpu_host)
    ->ArgsProduct({{64, 128, 256}, {4, 8}, {0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK(BM_sgm_gpu_stream)->ArgsProduct({{128}, {8}, {1}, {1, 2, 3, 4}})->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);
// args: width, height, disparities
BENCHMARK(BM_sgm_gpu_rectify)->Args({1920, 1080, 128})->Args({3840, 2160, 128})->Unit(benchmark::kMicrosecond)->UseManualTime()->Iterations(1);
#endif

int main(int argc, char** argv) {
  if (!take_tuning_flags(argc, argv)) return 2;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
