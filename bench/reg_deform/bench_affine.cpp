// bench_reg_affine: `reg_deform affine` on the 1 mm pair (subject_T1_head -> icbm152_2009a 1 mm),
// reg_aladin's defaults (3 levels, 5 iterations, 50 % blocks, 50 % inliers, symmetric).
//   BM_AffineRegister/gpu  : the whole registration (pyramids, warping and block matching on the GPU,
//                            block selection and LTS on the CPU in double), file reading excluded; wall time,
//                            s per registration. A few repeats (deterministic work). Counters: the
//                            split by stage in ms (AffineStageTimes: pyramid, select, upload, warp,
//                            match, download, lts; GPU stages are kernel times by CUDA events, the
//                            rest wall time) and the LTS refits per level.
//   BM_AffineRegister/cpu  : the same on the CPU backend, all cores (one repeat).
//   BM_AffinePyramids/cpu|gpu : the two image pyramids alone as the registration builds them (all
//                            cores / GPU kept on the device: the inputs' upload, the kernels and the
//                            coarser levels' download; wall), part of the above.
//   BM_AffineWarpKernel / BM_AffineMatchKernel : one warp / one forward matching of the finest
//                            level (32.5 k blocks), kernel only (CUDA events, warm-up, L2 flushed,
//                            median; manual time), counters voxels/s and blocks/s.
//   BM_AffineLts           : one affine LTS fit on the finest level's correspondences (CPU).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/affine/affine_init.hpp"
#include "core/affine/affine_lts.hpp"
#include "core/affine/affine_reg.hpp"
#include "core/affine/block_match.hpp"
#include "core/pyramid.hpp"
#include "evk/parallel.hpp"
#include "io/nifti_io.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/affine/gpu_affine.hpp"
#include "core/gpu_pyramid.hpp"
#include "evk/cuda_check.hpp"
#include "evk/device.hpp"
#include "evk/gpu_timer.hpp"
#endif

namespace rd = evk::reg_deform;
namespace fs = std::filesystem;

namespace {
fs::path evk_bench_shared_data() {
  if (const char* e = std::getenv("EVK_SHARED_DATA"); e && *e) return e;
  const fs::path d = fs::path(EVK_SOURCE_DIR) / ".." / "shared" / "data";
  return fs::exists(d / "brain") ? d : fs::path();
}
struct Pair {
  rd::Volume ref, flo;
  bool ok = false;
};
const Pair& pair_1mm() {
  static Pair p = [] {
    Pair q;
    const fs::path d = evk_bench_shared_data();
    if (d.empty()) return q;
    q.ref = rd::read_volume(d / "brain/icbm152_2009a_t1_1mm.nii.gz");
    q.flo = rd::read_volume(d / "brain/subject_T1_head.nii.gz");
    q.ok = true;
    return q;
  }();
  return p;
}

void BM_AffineRegister(benchmark::State& st, bool gpu) {
  const Pair& p = pair_1mm();
  if (!p.ok) return st.SkipWithError("no ../shared/data/brain");
  rd::AffineEngine f = rd::cpu_matcher();
#if defined(EVK_HAVE_CUDA)
  if (gpu) {
    if (!evk::gpu_environment().usable()) return st.SkipWithError("no usable GPU");
    f = rd::gpu::affine_engine();
  }
#else
  if (gpu) return st.SkipWithError("built without CUDA");
#endif
  const rd::Mat44 init = rd::init_centres(p.ref.geo, p.flo.geo);
  rd::AffineResult r;
  if (gpu) r = rd::register_affine(p.ref, p.flo, {}, {}, init, rd::AffineOptions{}, f);  // warm-up: module loads
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    r = rd::register_affine(p.ref, p.flo, {}, {}, init, rd::AffineOptions{}, f);
    st.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  for (std::size_t l = 0; l < r.levels.size(); ++l) {
    st.counters["level" + std::to_string(l + 1) + "_s"] = r.levels[l].seconds;
    st.counters["level" + std::to_string(l + 1) + "_refits"] = r.levels[l].lts_refits;
  }
  const rd::AffineStageTimes& t = r.times;  // the last repeat's split (ms)
  st.counters["pyramid_ms"] = t.pyramid;
  st.counters["select_ms"] = t.select;
  st.counters["upload_ms"] = t.upload;
  st.counters["warp_ms"] = t.warp;
  st.counters["match_ms"] = t.match;
  st.counters["download_ms"] = t.download;
  st.counters["lts_ms"] = t.lts;
  st.counters["total_ms"] = t.total;
  st.counters["threads"] = evk::default_threads();
  std::printf("%s affine (stages, ms: pyramid %.1f select %.1f upload %.1f warp %.1f match %.1f download %.1f "
              "lts %.1f; total %.1f):\n",
              gpu ? "GPU" : "CPU", t.pyramid, t.select, t.upload, t.warp, t.match, t.download, t.lts, t.total);
  for (int i = 0; i < 4; ++i)
    std::printf("  %.17g %.17g %.17g %.17g\n", r.affine.m[i][0], r.affine.m[i][1], r.affine.m[i][2], r.affine.m[i][3]);
}

void BM_AffinePyramids(benchmark::State& st, bool gpu) {
  const Pair& p = pair_1mm();
  if (!p.ok) return st.SkipWithError("no ../shared/data/brain");
#if defined(EVK_HAVE_CUDA)
  if (gpu && !evk::gpu_environment().usable()) return st.SkipWithError("no usable GPU");
  if (gpu) rd::gpu::make_image_pyramid(p.flo, 3, 3);  // loads the module (warm-up)
#else
  if (gpu) return st.SkipWithError("built without CUDA");
#endif
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    rd::ImagePyramid a, b;
#if defined(EVK_HAVE_CUDA)
    if (gpu) {
      a = rd::gpu::make_image_pyramid(p.ref, 3, 3);
      b = rd::gpu::make_image_pyramid(p.flo, 3, 3);
    }
#endif
    if (!gpu) {
      a = rd::make_image_pyramid(p.ref, 3, 3);
      b = rd::make_image_pyramid(p.flo, 3, 3);
    }
    benchmark::DoNotOptimize(a.levels.data());
    benchmark::DoNotOptimize(b.levels.data());
    st.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
}

void BM_AffineLts(benchmark::State& st) {
  const Pair& p = pair_1mm();
  if (!p.ok) return st.SkipWithError("no ../shared/data/brain");
  const rd::Mat44 t = rd::init_centres(p.ref.geo, p.flo.geo);
  const rd::BlockLayout l = rd::select_blocks(p.ref, {}, 50);
  const auto w = rd::warp_linear_cpu(p.ref.geo, p.flo, t);
  const auto m = rd::match_blocks_cpu(p.ref, {}, w, l);
  std::vector<rd::Point3> from, to;
  rd::block_correspondences(p.ref.geo, l, m, t, from, to);
  rd::LtsResult r;
  for (auto _ : st) benchmark::DoNotOptimize(r = rd::fit_lts(from, to, 50, true));
  st.counters["points"] = static_cast<double>(from.size());
  st.counters["refits"] = r.refits;
}

// Block selection of the finest level, both images (variances on all cores, then the sort).
void BM_AffineSelect(benchmark::State& st) {
  const Pair& p = pair_1mm();
  if (!p.ok) return st.SkipWithError("no ../shared/data/brain");
  std::size_t n = 0;
  for (auto _ : st) {
    const rd::BlockLayout a = rd::select_blocks(p.ref, {}, 50), b = rd::select_blocks(p.flo, {}, 50);
    n = a.active.size() + b.active.size();
    benchmark::DoNotOptimize(n);
  }
  st.counters["blocks"] = static_cast<double>(n);
}

// The symmetric update's log-Euclidean mean of two 4x4 matrices (twice per iteration).
void BM_AffineLogMean(benchmark::State& st) {
  rd::Mat44 a = rd::Mat44::diag(1.03, 1.06, 1.04), b;
  a.m[0][1] = 0.02, a.m[1][2] = -0.2, a.m[2][1] = 0.13, a.m[0][3] = -2.8, a.m[1][3] = 39;
  b = a.inverse();
  b.m[0][3] += 0.3;
  rd::Mat44 r;
  for (auto _ : st) benchmark::DoNotOptimize(r = rd::average_log_euclidean(a, b));
}

#if defined(EVK_HAVE_CUDA)
void BM_AffineKernel(benchmark::State& st, bool match) {
  const Pair& p = pair_1mm();
  if (!p.ok) return st.SkipWithError("no ../shared/data/brain");
  if (!evk::gpu_environment().usable()) return st.SkipWithError("no usable GPU");
  const rd::Mat44 t = rd::init_centres(p.ref.geo, p.flo.geo);
  const rd::BlockLayout l = rd::select_blocks(p.ref, {}, 50);
  rd::gpu::BlockMatcher m(p.ref, {}, l, p.flo);
  m.warp(t);
  EVK_CUDA(cudaDeviceSynchronize());
  evk::TimingStats s;
  for (auto _ : st) {
    s = evk::time_gpu([&](cudaStream_t) { match ? m.enqueue_match() : m.warp(t); });
    st.SetIterationTime(s.median_ms / 1e3);
  }
  st.counters["median_us"] = s.median_ms * 1e3;
  st.counters["min_us"] = s.min_ms * 1e3;
  st.counters["max_us"] = s.max_ms * 1e3;
  if (match) st.counters["blocks_per_s"] = l.active.size() / (s.median_ms / 1e3);
  else st.counters["voxels_per_s"] = p.ref.geo.voxels() / (s.median_ms / 1e3);
}
#endif
}  // namespace

BENCHMARK_CAPTURE(BM_AffineRegister, gpu, true)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK_CAPTURE(BM_AffineRegister, cpu, false)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_AffinePyramids, cpu, false)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_AffinePyramids, gpu, true)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_AffineLts)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AffineSelect)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AffineLogMean)->Unit(benchmark::kMicrosecond);
#if defined(EVK_HAVE_CUDA)
BENCHMARK_CAPTURE(BM_AffineKernel, warp, false)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_AffineKernel, match, true)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(1);
#endif
// Google Benchmark 1.7 (Debian 12) takes --benchmark_min_time as a plain number of seconds; 1.8+
// also takes "0.2s" / "10x". Accept both spellings everywhere: "NUMBERs" becomes NUMBER ("Nx" is
// left to versions that know it). Every benchmark here sets its iterations anyway.
int main(int argc, char** argv) {
  std::vector<std::string> keep(argv, argv + argc);
  std::vector<char*> args;
  const std::string flag = "--benchmark_min_time=";
  for (auto& a : keep) {
    if (a.rfind(flag, 0) == 0 && a.size() > flag.size() + 1 && a.back() == 's') a.pop_back();
    args.push_back(a.data());
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
