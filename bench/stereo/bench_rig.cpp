// A camera rig at frame rate, from files: raw 8-bit PGM pairs on disk -> read and decoded (reader
// threads) -> rectified on the device -> SGM -> metric depth through Q written as PFM by writer
// threads (or nothing): the stream engine of `stereo video LEFT RIGHT --rig RIG --depth` with its
// defaults (3 slots, 2 readers, 2 writers). The rig's maps are made here (synthetic_rectify_maps:
// a 0.6 degree rotation, barrel distortion k1 -0.06) rather than read from a rig file, which needs
// OpenCV, absent from the GPU bundle; they are built once per run and take no part in the frame rate.
// Frames: one synthetic pair (libSGM-like texture, disparities up to D - 1) saved as 30 pairs of
// files, read again each round (from the page cache, as a warm SSD would give them); a depth file
// per frame. Checked once
// per configuration: the first frame's disparities equal sgm_cpu of the pair rectified by remap_cpu.
// args: width, height, disparities, output (0: none, 1: depth PFM), writer threads (the engine's
// default 2; with depth files the writers bound the rate). Counters: frames/s end to end, per-frame
// stage times, and the stage that bounds the rate.
#include <benchmark/benchmark.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "core/rectify.hpp"
#include "core/rig.hpp"
#include "core/sgm.hpp"
#include "core/stream.hpp"
#include "core/synthetic.hpp"
#include "evk/device.hpp"
#include "io/io.hpp"
#include "io/points.hpp"

namespace fs = std::filesystem;
using namespace evk::stereo;

namespace {

constexpr int kFiles = 30, kFrames = 120;

// A rig whose Q gives depth f * B / d (OpenCV's layout: focal length 1000 px, baseline 0.1).
Rig bench_rig(int w, int h) {
  Rig r;
  r.width = w;
  r.height = h;
  r.Q = {1, 0, 0, -w / 2.0, 0, 1, 0, -h / 2.0, 0, 0, 0, 1000, 0, 0, 10, 0};
  return r;
}

SgmParams rig_params(int D) {  // the default setting of sgm_vs_libsgm.sh: uniqueness, LR check, median
  SgmParams p;
  p.max_disparity = D - 1;
  p.paths = 8;
  p.post.uniqueness = 5;
  p.post.lr_check = 1;
  p.post.median = 3;
  return p;
}

void BM_rig_files(benchmark::State& st) {
#if !defined(EVK_HAVE_CUDA)
  st.SkipWithError("built without CUDA");
  return;
#endif
  if (!evk::gpu_environment().usable()) {
    st.SkipWithError("no usable GPU");
    return;
  }
  const int w = static_cast<int>(st.range(0)), h = static_cast<int>(st.range(1)), D = static_cast<int>(st.range(2));
  const bool depth = st.range(3) == 1;
  StreamOptions so;
  so.writers = static_cast<int>(st.range(4));
  const fs::path dir = fs::temp_directory_path() / ("evk-rig-" + std::to_string(w) + "x" + std::to_string(h));
  fs::create_directories(dir / "out");
  const SyntheticPair s = make_synthetic_pair(w, h, D - 1, 5);
  for (int i = 0; i < kFiles; ++i) {
    write_pgm8(dir / ("l" + std::to_string(i) + ".pgm"), s.left);
    write_pgm8(dir / ("r" + std::to_string(i) + ".pgm"), s.right);
  }
  auto maps = std::make_shared<const RectifyMaps>(synthetic_rectify_maps(w, h, 0.01, -0.06));
  const SgmParams p = rig_params(D);
  const Rig rig = bench_rig(w, h);
  auto m = sgm_gpu_matcher(p, 0, 3, {}, maps);
  auto load = [&](int i) {
    Frame f;
    f.left = read_gray16(dir / ("l" + std::to_string(i % kFiles) + ".pgm"));
    f.right = read_gray16(dir / ("r" + std::to_string(i % kFiles) + ".pgm"));
    return f;
  };
  std::atomic<bool> checked{false}, same{true};
  auto store = [&](int i, StereoResult& r) {
    if (!checked.exchange(true)) {  // the device's map equals the CPU reference on the rectified pair
      Image8 L = s.left, R = s.right;
      remap_cpu(s.left.pixels.data(), w, h, maps->x[0].data(), maps->y[0].data(), L.pixels.data());
      remap_cpu(s.right.pixels.data(), w, h, maps->x[1].data(), maps->y[1].data(), R.pixels.data());
      same = sgm_cpu(L, R, p).left.q == r.left.q;
    }
    if (depth) write_depth_pfm(dir / "out" / ("z" + std::to_string(i) + ".pfm"), rig, r.left);
  };
  run_stream(6, load, *m, store, so);  // warm-up: pipelines, pinned buffers, the check
  if (!same) {
    fs::remove_all(dir);
    st.SkipWithError("the device's disparities differ from sgm_cpu on the rectified pair");
    return;
  }
  StreamStats t;
  for (auto _ : st) {
    t = run_stream(kFrames, load, *m, store, so);
    st.SetIterationTime(t.seconds);
    fs::remove_all(dir / "out");  // a file per frame, as a user's run writes them
    fs::create_directories(dir / "out");
  }
  const double f = static_cast<double>(t.frames);
  st.counters["frames_per_s"] = t.fps;
  st.counters["read_ms"] = t.read_ms / f;
  st.counters["upload_ms"] = t.upload_ms / f;
  st.counters["kernels_ms"] = t.kernel_ms / f;
  st.counters["download_ms"] = t.download_ms / f;
  st.counters["write_ms"] = t.write_ms / f;
  st.SetLabel(std::string(depth ? "depth PFM" : "no output") + ", " + std::to_string(so.writers) + " writers, bound: " + t.bound + ", " +
              evk::gpu_environment().devices[0].name);
  fs::remove_all(dir);
}

}  // namespace

BENCHMARK(BM_rig_files)
    ->Args({1920, 1080, 128, 0, 2})
    ->Args({1920, 1080, 128, 1, 2})
    ->Args({1920, 1080, 128, 1, 4})
    ->Args({3840, 2160, 256, 0, 2})
    ->Args({3840, 2160, 256, 1, 2})
    ->Args({3840, 2160, 256, 1, 4})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(3);

BENCHMARK_MAIN();
