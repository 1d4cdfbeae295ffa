// bench_reg_deform: the B-spline deformation field on the paper's 217^3 random case (~1.7 M active
// voxels, masked) and on the dense 1 mm ICBM152 brain (8.7 M voxels): CPU reference (all cores)
// and the GPU original in all 64 macro combinations, a block-size sweep, and the generic kernel.
// GPU times: kernel only, CUDA events, warm-up, L2 flushed before every repeat, median (manual
// time); counters: active voxels per second, median/min/max kernel time in us, relative spread.
// EVK_REG_GENOME=FILE adds an evolved genome (and the NVRTC-compiled original) on both cases.
// dense_field/: the whole dense planar field (what register and `field` consume) from the paper's
// kernel + scatter (original, and the shipped evolved variant the registry picks on this GPU) and
// from the expert dense-field kernel (TILE_Y 8/16/32), beside the write floor: a cudaMemset of the
// same 12 bytes per voxel, and a device-to-device copy of them (read + write). Counter
// field_voxels_per_s = all voxels of the field / median time. Without the shared brain the 1 mm case
// is the ICBM 2009a geometry (197x233x189) with the same perturbed grid.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "evk/device.hpp"
#include "evk/dispatch.hpp"
#include "evk/parallel.hpp"
#include "core/field/active.hpp"
#include "core/field/field_cpu.hpp"
#include "core/field/grid_make.hpp"
#include "gi/kernel_variant.hpp"
#include "io/nifti_io.hpp"
#include "core/field/random_case.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/field/gpu_field.hpp"
#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/gpu_timer.hpp"
#include "gi/gi_problem.hpp"
#endif

namespace rd = evk::reg_deform;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name;
  rd::Geometry geo;
  rd::Mask mask;
  rd::Grid grid;
  std::size_t active = 0;
};

fs::path shared_data() {
  if (const char* e = std::getenv("EVK_SHARED_DATA"); e && *e) return e;
  return fs::path(EVK_SOURCE_DIR) / ".." / "shared" / "data";
}

std::vector<std::shared_ptr<Case>> load_cases() {
  std::vector<std::shared_ptr<Case>> cases;
  {
    rd::RandomCaseOptions o;
    o.seed = 1;
    rd::RandomCase rc = rd::make_random_case(o);
    auto c = std::make_shared<Case>();
    c->name = "random217";
    c->geo = rc.image.geo;
    c->mask = std::move(rc.mask);
    c->grid = std::move(rc.grid);
    c->active = rd::count_active(c->geo, c->mask);
    cases.push_back(c);
  }
  const fs::path brain = shared_data() / "brain" / "icbm152_2009a_t1_1mm.nii.gz";
  {
    auto c = std::make_shared<Case>();
    const bool real = fs::exists(brain);
    c->name = real ? "icbm152_1mm_dense" : "head1mm_synthetic_dense";
    c->geo = real ? rd::read_volume(brain).geo : rd::Geometry::make(197, 233, 189, 1, 1, 1, {-98, -134, -72});
    c->grid = rd::make_grid(c->geo, 5);
    rd::SplitMix64 rng(7);
    for (auto& v : c->grid.data) v = static_cast<float>(v + rng.uniform(-5, 5));
    c->active = c->geo.voxels();
    cases.push_back(c);
  }
  return cases;
}

void set_rate(benchmark::State& st, const Case& c, double seconds_per_run) {
  st.counters["active_voxels"] = static_cast<double>(c.active);
  st.counters["voxels_per_s"] = benchmark::Counter(static_cast<double>(c.active) / seconds_per_run);
}

void bench_cpu(benchmark::State& st, std::shared_ptr<Case> c) {
  for (auto _ : st) {
    rd::Field f = rd::compute_field_cpu(c->geo, c->grid, c->mask);
    benchmark::DoNotOptimize(f.data.data());
  }
  st.counters["active_voxels"] = static_cast<double>(c->active);
  st.counters["voxels_per_s"] = benchmark::Counter(static_cast<double>(c->active), benchmark::Counter::kIsIterationInvariantRate);
  st.counters["threads"] = evk::default_threads();
}

#if defined(EVK_HAVE_CUDA)
enum class Part { kernel, kernel_assemble, assemble };
void bench_gpu(benchmark::State& st, std::shared_ptr<Case> c, rd::gpu::FieldOptions fo, Part part) {
  if (!evk::gpu_environment().usable()) {
    st.SkipWithError(("no usable GPU: " + evk::gpu_environment().status).c_str());
    return;
  }
  try {
    rd::gpu::FieldEngine eng(c->geo, c->mask, c->grid.sx, c->grid.sy, c->grid.sz, fo);
    eng.set_grid(c->grid);
    if (part == Part::assemble) eng.run_kernel();  // the compact input of the assemble step
    cudaStream_t s;
    EVK_CUDA(cudaStreamCreate(&s));
    evk::TimingOptions to;
    to.warmup = 3;
    to.repeats = 31;
    const evk::TimingStats t = evk::time_gpu(
        [&](cudaStream_t ss) {
          if (part != Part::assemble) eng.run_kernel(ss);
          if (part != Part::kernel) eng.assemble(false, ss);
        },
        s, to);
    EVK_CUDA(cudaStreamDestroy(s));
    for (auto _ : st) st.SetIterationTime(t.median_ms / 1e3);
    set_rate(st, *c, t.median_ms / 1e3);
    st.counters["median_us"] = t.median_ms * 1e3;
    st.counters["min_us"] = t.min_ms * 1e3;
    st.counters["max_us"] = t.max_ms * 1e3;
    st.counters["spread"] = t.spread();
    st.counters["computed_voxels"] = static_cast<double>(eng.tiled() ? eng.compact_entries() : eng.active_voxels());
    st.counters["repeats"] = t.repeats;
    st.counters["field_voxels_per_s"] = static_cast<double>(c->geo.voxels()) / (t.median_ms / 1e3);
    st.counters["expert"] = eng.expert() ? 1 : 0;
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
  }
}

// The write floor of a dense planar field: 12 bytes per voxel written once (memset), or copied
// device to device (12 bytes read + 12 written per voxel).
void bench_floor(benchmark::State& st, std::shared_ptr<Case> c, bool copy) {
  if (!evk::gpu_environment().usable()) {
    st.SkipWithError(("no usable GPU: " + evk::gpu_environment().status).c_str());
    return;
  }
  const std::size_t bytes = 12 * c->geo.voxels();
  void *a = nullptr, *b = nullptr;
  EVK_CUDA(cudaMalloc(&a, bytes));
  if (copy) EVK_CUDA(cudaMalloc(&b, bytes));
  evk::TimingOptions to;
  to.warmup = 3;
  to.repeats = 31;
  const evk::TimingStats t = evk::time_gpu(
      [&](cudaStream_t ss) {
        if (copy) EVK_CUDA(cudaMemcpyAsync(a, b, bytes, cudaMemcpyDeviceToDevice, ss));
        else EVK_CUDA(cudaMemsetAsync(a, 0, bytes, ss));
      },
      nullptr, to);
  cudaFree(a);
  if (b) cudaFree(b);
  for (auto _ : st) st.SetIterationTime(t.median_ms / 1e3);
  st.counters["median_us"] = t.median_ms * 1e3;
  st.counters["min_us"] = t.min_ms * 1e3;
  st.counters["max_us"] = t.max_ms * 1e3;
  st.counters["field_voxels_per_s"] = static_cast<double>(c->geo.voxels()) / (t.median_ms / 1e3);
  st.counters["written_GB_per_s"] = static_cast<double>(bytes) / (t.median_ms / 1e3) / 1e9;
}

void precompile_all() {
  if (!evk::gpu_environment().usable()) return;
  rd::gpu::Kernels::precompile(rd::KernelConfig::all_combinations(), evk::gpu_environment().devices[0].cc());
}
#endif

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const auto cases = load_cases();
  for (const auto& c : cases)
    benchmark::RegisterBenchmark(("cpu/" + c->name + "/all_cores").c_str(), bench_cpu, c)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3)
        ->UseRealTime();
#if defined(EVK_HAVE_CUDA)
  precompile_all();
  for (const auto& c : cases) {
    for (const auto& cfg : rd::KernelConfig::all_combinations(192)) {
      rd::gpu::FieldOptions fo;
      fo.config = cfg;
      benchmark::RegisterBenchmark(("gpu/" + c->name + "/tile5/" + cfg.describe()).c_str(), bench_gpu, c, fo, Part::kernel)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    }
    for (int bs = 32; bs <= 1024; bs += 32) {
      rd::gpu::FieldOptions fo;
      fo.config.block_size = bs;
      if (bs != 192)
        benchmark::RegisterBenchmark(("gpu/" + c->name + "/tile5/" + fo.config.describe()).c_str(), bench_gpu, c, fo, Part::kernel)
            ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    }
    for (int bs : {64, 128, 192, 256, 512}) {
      rd::gpu::FieldOptions fo;
      fo.generic = true;
      fo.config.block_size = bs;
      benchmark::RegisterBenchmark(("gpu/" + c->name + "/generic/bs" + std::to_string(bs)).c_str(), bench_gpu, c, fo, Part::kernel)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    }
    // An evolved genome (EVK_REG_GENOME=FILE, e.g. from `reg_deform gi tune`) through the app's
    // path (FieldEngine, NVRTC), beside the NVRTC-compiled original at the same configuration.
    if (const char* gfile = std::getenv("EVK_REG_GENOME"); gfile && *gfile) {
      try {
        const rd::KernelChoice k = rd::kernel_for_variant(evk::read_genome_file(gfile));
        rd::gpu::FieldOptions ev, og;
        ev.config = k.config;
        ev.source = k.source;
        og.source = rd::make_gi_problem()->kernel_source();  // the original text, via NVRTC
        for (Part part : {Part::kernel, Part::kernel_assemble}) {
          const std::string what = part == Part::kernel ? "/tile5/" : "/tile5+assemble/";
          benchmark::RegisterBenchmark(("gpu/" + c->name + what + "original_nvrtc bs192").c_str(), bench_gpu, c, og, part)
              ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
          benchmark::RegisterBenchmark(("gpu/" + c->name + what + "evolved " + k.config.describe()).c_str(), bench_gpu, c, ev, part)
              ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_reg_deform: EVK_REG_GENOME: %s\n", e.what());
        return 2;
      }
    }
    // The dense field: paper kernel + scatter (original; the shipped evolved variant the tool's
    // registry picks for this GPU and request), the expert kernel, and the write floor.
    {
      auto reg = [&](const std::string& what, const rd::gpu::FieldOptions& fo) {
        benchmark::RegisterBenchmark(("gpu/" + c->name + "/dense_field/" + what).c_str(), bench_gpu, c, fo,
                                     Part::kernel_assemble)
            ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
      };
      reg("original_tile5+scatter", rd::gpu::FieldOptions{});
      if (evk::gpu_environment().usable()) {
        const auto& d = evk::gpu_environment().devices[0];
        const rd::KernelPick k = rd::pick_kernel(rd::make_registry(), evk::DeviceKey{d.cc(), d.name}, "auto",
                                                 rd::make_request(c->geo.nx, c->geo.ny, c->geo.nz, 5, 5, 5));
        if (k.kernel.evolved()) {
          rd::gpu::FieldOptions fo;
          fo.config = k.kernel.config;
          fo.source = k.kernel.source;
          reg("shipped_evolved_tile5+scatter_" + k.variant.substr(0, k.variant.find(' ')), fo);
        }
      }
      for (int tile_y : {32, 16, 8}) {
        rd::gpu::FieldOptions fo;
        fo.expert = true;
        fo.expert_config.tile_y = tile_y;
        reg("expert_32x" + std::to_string(tile_y), fo);
      }
      benchmark::RegisterBenchmark(("gpu/" + c->name + "/dense_field/write_floor_memset").c_str(), bench_floor, c, false)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("gpu/" + c->name + "/dense_field/write_floor_copy").c_str(), bench_floor, c, true)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    }
    // End to end (kernel + compact -> dense planar field) and the assemble step alone, with the
    // transposed scatter (default) and the first one-thread-per-entry scatter.
    for (bool naive : {false, true}) {
      rd::gpu::FieldOptions fo;
      fo.naive_scatter = naive;
      const std::string sc = naive ? "naive_scatter" : "transposed_scatter";
      benchmark::RegisterBenchmark(("gpu/" + c->name + "/tile5+assemble/" + sc).c_str(), bench_gpu, c, fo, Part::kernel_assemble)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("gpu/" + c->name + "/assemble/" + sc).c_str(), bench_gpu, c, fo, Part::assemble)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    }
  }
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
