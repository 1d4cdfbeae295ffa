// bench_reg_register: `register` (reg_f3d's method) on subject_T1_head -> icbm152_2009a_t1_1mm
// (and -> mni152_t1_2mm): the whole registration on the GPU and the CPU (file I/O excluded; the
// initial affine: EVK_REG_AFF=FILE, NiftyReg text, else our GPU affine on the GPU benchmark and the
// centres of mass on the CPU one), and every stage of one iteration at the finest 1 mm level
// (GPU: CUDA events, warm-up, L2 flushed, median; CPU: all cores, wall time).
// Counters: seconds per registration, per level, field-kernel seconds, iterations, NMI (reg_measure's
// way on the cubic-warped image), min Jacobian; per stage: voxels per second.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "core/affine/affine_init.hpp"
#include "core/field/field_cpu.hpp"
#include "core/field/resample_cpu.hpp"
#include "core/register/reg_adjoint_cpu.hpp"
#include "core/register/reg_field_cpu.hpp"
#include "core/register/reg_grid.hpp"
#include "core/register/reg_jacobian_cpu.hpp"
#include "core/register/reg_measure_cpu.hpp"
#include "core/register/reg_measure_grad_cpu.hpp"
#include "core/register/reg_penalty_cpu.hpp"
#include "core/register/reg_register.hpp"
#include "core/register/reg_warp_cpu.hpp"
#include "io/affine_text.hpp"
#include "io/nifti_io.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/affine/affine_reg.hpp"
#include "core/affine/gpu_affine.hpp"
#include "core/field/gpu_field.hpp"
#include "core/gpu_pyramid.hpp"
#include "core/register/reg_engine_gpu.hpp"
#include "core/register/reg_gpu_stages.hpp"
#include "evk/cuda_check.hpp"
#include "evk/device.hpp"
#include "evk/gpu_timer.hpp"
#endif

namespace rd = evk::reg_deform;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
fs::path shared_data() {
  if (const char* e = std::getenv("EVK_SHARED_DATA"); e && *e) return e;
  return fs::path(EVK_SOURCE_DIR) / ".." / "shared" / "data";
}

struct Pair {
  rd::Volume ref, flo;
  bool ok = false;
};
const Pair& pair(const std::string& ref_name) {
  static std::map<std::string, Pair> cache;
  auto& p = cache[ref_name];
  if (!p.ok) {
    const fs::path dir = shared_data() / "brain";
    if (!fs::exists(dir / ref_name)) return p;
    p.ref = rd::read_volume(dir / ref_name);
    p.flo = rd::read_volume(dir / "subject_T1_head.nii.gz");
    p.ok = true;
  }
  return p;
}

rd::Mat44 initial_affine(const Pair& p, bool gpu) {
  if (const char* a = std::getenv("EVK_REG_AFF"); a && *a) return rd::read_affine(a);
  const rd::Mat44 com = rd::init_centres_of_mass(p.ref, {}, p.flo, {});
#if defined(EVK_HAVE_CUDA)
  if (gpu) return rd::register_affine(p.ref, p.flo, {}, {}, com, rd::AffineOptions{}, rd::gpu::affine_matcher()).affine;
#endif
  (void)gpu;
  return com;
}

void report(benchmark::State& st, const Pair& p, const rd::RegisterResult& r, double seconds) {
  st.counters["s_per_registration"] = seconds;
  double field = 0;
  int iterations = 0;
  for (std::size_t l = 0; l < r.levels.size(); ++l) {
    st.counters["level" + std::to_string(l) + "_s"] = r.levels[l].seconds;
    st.counters["level" + std::to_string(l) + "_iterations"] = r.levels[l].iterations;
    field += r.levels[l].field_seconds;
    iterations += r.levels[l].iterations;
  }
  st.counters["field_s"] = field;
  st.counters["iterations"] = iterations;
  st.counters["s_per_iteration"] = seconds / std::max(1, iterations);
  const rd::Field f = rd::compute_field_cpu(p.ref.geo, r.grid);
  rd::ResampleOptions ro;
  ro.interp = rd::Interp::cubic;
  st.counters["nmi"] = rd::nmi_like_reg_measure(p.ref, rd::resample_cpu(p.flo, f, ro));
  st.counters["min_jacobian"] = rd::voxel_jacobian_stats(p.ref.geo, r.grid).min;
}

void BM_RegisterCpu(benchmark::State& st, const std::string& ref_name) {
  const Pair& p = pair(ref_name);
  if (!p.ok) return st.SkipWithError("no shared data");
  rd::RegisterOptions o;
  o.affine = initial_affine(p, false);
  o.has_affine = true;
  rd::RegisterResult r;
  double seconds = 0;
  for (auto _ : st) {
    const auto t0 = Clock::now();
    r = rd::register_images(p.ref, p.flo, {}, {}, o, rd::make_cpu_engine);
    seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    st.SetIterationTime(seconds);
  }
  report(st, p, r, seconds);
}
BENCHMARK_CAPTURE(BM_RegisterCpu, mni152_2mm, std::string("mni152_t1_2mm.nii.gz"))
    ->Unit(benchmark::kSecond)->UseManualTime()->Iterations(1);
BENCHMARK_CAPTURE(BM_RegisterCpu, icbm152_1mm, std::string("icbm152_2009a_t1_1mm.nii.gz"))
    ->Unit(benchmark::kSecond)->UseManualTime()->Iterations(1);

// ---- per stage, CPU, at the finest 1 mm level --------------------------------------------------
struct Level {
  rd::Volume ref, flo;
  rd::Grid grid;
  bool ok = false;
};
const Level& level_1mm() {
  static Level l;
  if (!l.ok) {
    const Pair& p = pair("icbm152_2009a_t1_1mm.nii.gz");
    if (!p.ok) return l;
    l.ref = p.ref;
    l.flo = p.flo;
    rd::rescale_for_nmi(l.ref, 64);
    rd::rescale_for_nmi(l.flo, 64);
    l.grid = rd::make_grid3(l.ref.geo, {5, 5, 5}, rd::init_centres_of_mass(p.ref, {}, p.flo, {}));
    std::uint64_t s = 3;
    for (auto& v : l.grid.data) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      // +-2 mm (signed: the unsigned difference once wrapped to ~1.8e19 for half the points, so every
      // field value of the set-up was huge and BM_StageGpu faulted, later skipped)
      v = static_cast<float>(v + (static_cast<double>((s >> 11) % 2001) - 1000.0) / 500.0);
    }
    l.ok = true;
  }
  return l;
}

void BM_StageCpu(benchmark::State& st, int stage) {
  const Level& l = level_1mm();
  if (!l.ok) return st.SkipWithError("no shared data");
  const std::size_t nv = l.ref.geo.voxels();
  std::vector<float> field(3 * nv), warped(nv), grad(3 * nv), vgrad(3 * nv);
  std::vector<double> node(3 * l.grid.points()), counts;
  rd::NmiHistogram h;
  rd::spline_field_cpu(l.ref.geo, l.grid, {}, field.data());
  rd::warp_field_cpu(l.flo, {}, l.ref.geo, {}, field.data(), warped.data(), grad.data());
  rd::nmi_counts_cpu(l.ref.data.data(), warped.data(), {}, nv, 68, counts);
  rd::nmi_from_counts(counts, 68, h);
  for (auto _ : st) {
    switch (stage) {
      case 1: rd::spline_field_cpu(l.ref.geo, l.grid, {}, field.data()); break;
      case 2: rd::warp_field_cpu(l.flo, {}, l.ref.geo, {}, field.data(), warped.data(), grad.data()); break;
      case 3:
        rd::nmi_counts_cpu(l.ref.data.data(), warped.data(), {}, nv, 68, counts);
        rd::nmi_from_counts(counts, 68, h);
        break;
      case 4: rd::nmi_voxel_gradient_cpu(l.ref.data.data(), warped.data(), grad.data(), {}, nv, h, vgrad.data()); break;
      case 5: rd::spline_adjoint_cpu(l.ref.geo, l.grid, vgrad.data(), node.data()); break;
      case 6:
        benchmark::DoNotOptimize(rd::bending_energy(l.grid));
        rd::bending_energy_gradient(l.grid, 1, node.data());
        benchmark::DoNotOptimize(rd::linear_energy(l.grid));
        rd::linear_energy_gradient(l.grid, 1, node.data());
        break;
    }
  }
  st.counters["voxels_per_s"] = benchmark::Counter(static_cast<double>(nv), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_StageCpu, 1_field, 1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_StageCpu, 2_warp_gradient, 2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_StageCpu, 3_histogram_nmi, 3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_StageCpu, 4_nmi_voxel_gradient, 4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_StageCpu, 5_adjoint, 5)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_StageCpu, 6_penalties_be_le, 6)->Unit(benchmark::kMillisecond)->UseRealTime();

#if defined(EVK_HAVE_CUDA)
bool gpu_ok(benchmark::State& st) {
  if (!evk::gpu_environment().usable()) {
    st.SkipWithError("no usable GPU");
    return false;
  }
  return true;
}

// Whole registration on the GPU. kernel: "original" (the paper's tile kernel), "evolved" (the
// configuration of the shipped genome: c_controlPointVoxelSpacing + constantBasis + BasisA, bs 96) or
// "expert" (the expert dense-field kernel, kernels/original/reg_deform/field_expert.cu).
void BM_RegisterGpu(benchmark::State& st, const std::string& ref_name, const std::string& kernel) {
  const bool evolved = kernel == "evolved";
  if (!gpu_ok(st)) return;
  const Pair& p = pair(ref_name);
  if (!p.ok) return st.SkipWithError("no shared data");
  rd::RegisterOptions o;
  o.affine = initial_affine(p, true);
  o.has_affine = true;
  rd::GpuEngineOptions go;
  if (evolved) {
    go.field.config.const_spacing = go.field.config.constant_basis = go.field.config.basis_a = true;
    go.field.config.block_size = 96;
  }
  go.field.expert = kernel == "expert";
  const rd::EngineFactory f = [go](const rd::LevelInput& in) { return rd::make_gpu_engine(in, go); };
  o.pyramid = [](const rd::Volume& v, int levels, int used) { return rd::gpu::make_image_pyramid(v, levels, used); };
  rd::register_images(p.ref, p.flo, {}, {}, o, f);  // warm-up: module loads, NVRTC cache
  rd::RegisterResult r;
  double seconds = 0;
  for (auto _ : st) {
    const auto t0 = Clock::now();
    r = rd::register_images(p.ref, p.flo, {}, {}, o, f);
    EVK_CUDA(cudaDeviceSynchronize());
    seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    st.SetIterationTime(seconds);
  }
  report(st, p, r, seconds);
}
BENCHMARK_CAPTURE(BM_RegisterGpu, icbm152_1mm_original, std::string("icbm152_2009a_t1_1mm.nii.gz"), std::string("original"))
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_RegisterGpu, icbm152_1mm_evolved, std::string("icbm152_2009a_t1_1mm.nii.gz"), std::string("evolved"))
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_RegisterGpu, icbm152_1mm_expert, std::string("icbm152_2009a_t1_1mm.nii.gz"), std::string("expert"))
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_RegisterGpu, mni152_2mm_original, std::string("mni152_t1_2mm.nii.gz"), std::string("original"))
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);

// One stage of an iteration at the finest 1 mm level on the GPU, set up as GpuEngine sets up a level
// (reg_engine_gpu.cpp): the field engine on the reference geometry with the grid's spacing, the
// control points uploaded planar and converted into the engine's float4 texture memory, every work
// buffer sized as the engine sizes it and zeroed; the set-up's field is checked (all finite, inside
// +-10 m) before anything reads it. field_kernel: "original" (the paper's tile kernel + scatter) or
// "expert" (the expert dense-field kernel).
void stage_gpu(benchmark::State& st, int stage, const std::string& field_kernel);
void BM_StageGpu(benchmark::State& st, int stage, const std::string& field_kernel) {
  if (!gpu_ok(st)) return;
  try {
    stage_gpu(st, stage, field_kernel);
  } catch (const std::exception& e) {  // a CUDA error (evk::CudaError) ends this benchmark, not the run
    st.SkipWithError(e.what());
  }
}
void stage_gpu(benchmark::State& st, int stage, const std::string& field_kernel) {
  const Level& l = level_1mm();
  if (!l.ok) return st.SkipWithError("no shared data");
  namespace sg = rd::gpu_stage;
  using rd::gpu::Buffer;
  const long long nv = static_cast<long long>(l.ref.geo.voxels()), np = static_cast<long long>(l.grid.points());
  const int nb = 64 + 4;  // bins + 4, as the engine
  rd::gpu::FieldOptions fo;
  fo.expert = field_kernel == "expert";
  rd::gpu::FieldEngine eng(l.ref.geo, {}, l.grid.sx, l.grid.sy, l.grid.sz, fo);
  eng.set_grid(l.grid);
  Buffer<float> ref, flo, cp;
  ref.upload(l.ref.data.data(), l.ref.data.size());
  flo.upload(l.flo.data.data(), l.flo.data.size());
  cp.upload(l.grid.data.data(), l.grid.data.size());
  Buffer<float> warped(nv), wgrad(3 * nv), vgrad(3 * nv), grad(3 * np), node(3 * np), gp(3 * np), h(3 * np),
      t1(3ull * l.ref.geo.nz * l.ref.geo.ny * l.grid.geo.nx), t2(3ull * l.ref.geo.nz * l.grid.geo.ny * l.grid.geo.nx);
  Buffer<unsigned> counts(static_cast<std::size_t>(nb) * nb);
  Buffer<double> tmp(static_cast<std::size_t>(nb) * nb), prob(static_cast<std::size_t>(nb) * nb + 2 * nb),
      logp(static_cast<std::size_t>(nb) * nb + 2 * nb), ent(16), part(2 * sg::kMaxBlocks), adj(18 * np);
  for (auto* b : {&warped, &wgrad, &vgrad, &grad, &node, &gp, &h, &t1, &t2})
    EVK_CUDA(cudaMemset(b->get(), 0, b->size() * sizeof(float)));
  for (auto* b : {&tmp, &prob, &logp, &ent, &part, &adj}) EVK_CUDA(cudaMemset(b->get(), 0, b->size() * sizeof(double)));
  EVK_CUDA(cudaDeviceSynchronize());
  sg::to_float4(cp.get(), np, eng.device_control_points());
  eng.compute(false);
  {  // the field every later stage reads: finite and in a sane range, else say so (no fault)
    const rd::Field f = eng.download(false);
    std::size_t bad = 0;
    for (float v : f.data) bad += !(std::fabs(v) < 1e4f);
    if (bad) return st.SkipWithError(("set-up field has " + std::to_string(bad) + " non-finite or huge values").c_str());
  }
  sg::warp_linear(eng.device_field(), nullptr, nv, flo.get(), l.flo.geo, nullptr, warped.get(), wgrad.get());
  sg::nmi_counts(ref.get(), warped.get(), nullptr, nv, nb, counts.get());
  sg::nmi_entropies(counts.get(), nb, tmp.get(), prob.get(), logp.get(), ent.get());
  sg::nmi_voxel_gradient(ref.get(), warped.get(), wgrad.get(), nullptr, nv, nb, logp.get(), ent.get(), vgrad.get());
  sg::cg_first(grad.get(), 3 * np, gp.get(), h.get());
  EVK_CUDA_LAST();
  EVK_CUDA(cudaDeviceSynchronize());
  const auto fn = [&](cudaStream_t) {
    switch (stage) {
      case 1:
        sg::to_float4(cp.get(), np, eng.device_control_points());
        eng.compute(false);
        break;
      case 2: sg::warp_linear(eng.device_field(), nullptr, nv, flo.get(), l.flo.geo, nullptr, warped.get(), wgrad.get()); break;
      case 3:
        sg::nmi_counts(ref.get(), warped.get(), nullptr, nv, nb, counts.get());
        sg::nmi_entropies(counts.get(), nb, tmp.get(), prob.get(), logp.get(), ent.get());
        break;
      case 4: sg::nmi_voxel_gradient(ref.get(), warped.get(), wgrad.get(), nullptr, nv, nb, logp.get(), ent.get(), vgrad.get()); break;
      case 5: sg::adjoint(vgrad.get(), l.ref.geo, l.grid, t1.get(), t2.get(), node.get()); break;
      case 6:
        sg::penalty(0, cp.get(), l.grid, adj.get(), part.get(), ent.get() + 5, 1e-3, grad.get());
        sg::penalty(1, cp.get(), l.grid, adj.get(), part.get(), ent.get() + 6, 1e-3, grad.get());
        break;
      case 7:  // the optimiser's vector work of one iteration + a line-search step
        sg::max_length(grad.get(), np, part.get(), ent.get() + 7);
        sg::scale_copy(grad.get(), 3 * np, 1.0, grad.get());
        sg::cg_update(grad.get(), gp.get(), h.get(), 3 * np, part.get(), ent.get() + 8);
        sg::step(cp.get(), grad.get(), 3 * np, -1e-6, node.get());
        break;
      case 8: {  // one whole objective evaluation: field, warp, histogram, NMI (no penalties)
        sg::to_float4(cp.get(), np, eng.device_control_points());
        eng.compute(false);
        sg::warp_linear(eng.device_field(), nullptr, nv, flo.get(), l.flo.geo, nullptr, warped.get(), nullptr);
        sg::nmi_counts(ref.get(), warped.get(), nullptr, nv, nb, counts.get());
        sg::nmi_entropies(counts.get(), nb, tmp.get(), prob.get(), logp.get(), ent.get());
        break;
      }
    }
  };
  evk::TimingStats ts;
  for (auto _ : st) {
    ts = evk::time_gpu(fn);
    st.SetIterationTime(ts.median_ms / 1000.0);
  }
  st.counters["median_us"] = ts.median_ms * 1e3;
  st.counters["min_us"] = ts.min_ms * 1e3;
  st.counters["max_us"] = ts.max_ms * 1e3;
  st.counters["voxels_per_s"] = static_cast<double>(nv) / (ts.median_ms / 1000.0);
}
// Per-stage times of one iteration at 1 mm (stage 1 with both field kernels). The first version of
// this set-up faulted on the H100 in reg_warp_linear (reads far outside the floating image). Likely
// cause: a field position that was NaN or beyond int range reached `(int)floor(q)` (undefined; on
// the GPU it saturates, and x0 + 1 then wraps past the bounds test), and its work buffers were
// never initialised (cg_update/step read the uninitialised gradient history). Now the warp tests the
// range in double before converting (GPU and CPU, same voxels for every in-range position), every
// buffer is zeroed, and the set-up field is checked (a bad field skips with the count, no fault).
#define EVK_STAGE(name, n, k) \
  BENCHMARK_CAPTURE(BM_StageGpu, name, n, std::string(k))->Unit(benchmark::kMicrosecond)->UseManualTime()->Iterations(1)
EVK_STAGE(1_field_original_tile5_assemble, 1, "original");
EVK_STAGE(1_field_expert, 1, "expert");
EVK_STAGE(2_warp_gradient, 2, "original");
EVK_STAGE(3_histogram_nmi, 3, "original");
EVK_STAGE(4_nmi_voxel_gradient, 4, "original");
EVK_STAGE(5_adjoint_bspline_convolution, 5, "original");
EVK_STAGE(6_penalties_be_le, 6, "original");
EVK_STAGE(7_optimiser, 7, "original");
EVK_STAGE(8_objective_evaluation_original, 8, "original");
EVK_STAGE(8_objective_evaluation_expert, 8, "expert");
#undef EVK_STAGE
#endif
}  // namespace

BENCHMARK_MAIN();
