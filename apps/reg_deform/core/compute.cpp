#include "compute.hpp"

#include "evk/cli.hpp"
#include "evk/dispatch.hpp"
#include "evk/error.hpp"
#include "field_cpu.hpp"
#include "kernel_config.hpp"
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include "evk/cuda_check.hpp"
#include "gpu_affine.hpp"
#include "gpu_field.hpp"
#include "gpu_pyramid.hpp"
#include "reg_engine_gpu.hpp"
#endif

namespace evk::reg_deform {

namespace {

struct Plan {
  BackendChoice backend;
  KernelChoice kernel;
};

Plan plan_for(const RunOptions& run, RunInfo& info) {
  if (run.backend != "auto" && run.backend != "cpu" && run.backend != "gpu")
    input_error("--backend " + run.backend, "must be auto, cpu or gpu");
  CommonOptions c;
  c.backend = run.backend;
  c.kernel = run.kernel;
  c.device = run.device;
  Plan p;
  p.backend = choose_backend(c);
  info.reason = p.backend.reason;
  Registry reg = make_registry();
  const bool file = run.kernel != "auto" && run.kernel != "original" && run.kernel != "evolved";
  if (p.backend.backend == Backend::gpu) {
    const auto overlay = default_overlay_dir();
    if (!overlay.empty()) reg.load_overlay(overlay);
    const auto& d = p.backend.device;
    const Selection s = reg.select("reg_deform", DeviceKey{d.cc(), d.name}, run.kernel);
    p.kernel = kernel_for_variant(s.variant);
    info.backend = "gpu";
    info.device = d.name;
    info.kernel = s.variant.id + " (" + s.rule + ")";
#if defined(EVK_HAVE_CUDA)
    EVK_CUDA(cudaSetDevice(d.index));
#endif
  } else {
    if (file) kernel_for_variant(reg.select("reg_deform", DeviceKey{}, run.kernel).variant);  // bad genome: error
    info.backend = "cpu";
    info.kernel = "cpu-reference";
  }
  return p;
}

}  // namespace

Field compute_field(const Geometry& ref, const Grid& grid, const Mask& mask, bool displacement, const RunOptions& run,
                    RunInfo* info) {
  RunInfo local;
  RunInfo& i = info ? *info : local;
  check_grid_fits(ref, grid, "cpp");
  if (!mask.empty() && mask.size() != ref.voxels()) input_error("mask", "size differs from the reference's voxels");
  const Plan p = plan_for(run, i);
#if defined(EVK_HAVE_CUDA)
  if (p.backend.backend == Backend::gpu) {
    gpu::FieldOptions fo;
    fo.config = p.kernel.config;
    fo.source = p.kernel.source;
    gpu::FieldEngine eng(ref, mask, grid.sx, grid.sy, grid.sz, fo);
    eng.set_grid(grid);
    eng.compute(displacement);
    return eng.download(displacement);
  }
#endif
  FieldOptions fo;
  fo.displacement = displacement;
  fo.threads = run.threads;
  return compute_field_cpu(ref, grid, mask, fo);
}

Volume resample_volume(const Volume& flo, const Field& field, const ResampleOptions& opt, const RunOptions& run,
                       RunInfo* info) {
  RunInfo local;
  RunInfo& i = info ? *info : local;
  if (field.data.size() != 3 * field.geo.voxels()) input_error("trans", "field size does not match its geometry");
  if (flo.data.size() != flo.geo.voxels()) input_error("flo", "data size does not match its geometry");
  const Plan p = plan_for(run, i);
  (void)p;
#if defined(EVK_HAVE_CUDA)
  if (p.backend.backend == Backend::gpu) return gpu::resample(flo, field, opt);
#endif
  ResampleOptions o = opt;
  if (o.threads <= 0) o.threads = run.threads;
  return resample_cpu(flo, field, o);
}

AffineResult affine_register(const Volume& ref, const Volume& flo, const Mask& rmask, const Mask& fmask,
                             const Mat44& init, const AffineOptions& opt, const RunOptions& run, RunInfo* info,
                             const AffineProgress& progress) {
  RunInfo local;
  RunInfo& i = info ? *info : local;
  check_affine_options(opt);
  const Plan p = plan_for(run, i);
  AffineOptions o = opt;
  if (o.threads <= 0) o.threads = run.threads;
  AffineEngine engine = cpu_matcher(o.threads);
#if defined(EVK_HAVE_CUDA)
  if (p.backend.backend == Backend::gpu) engine = gpu::affine_engine();
#else
  (void)p;
#endif
  return register_affine(ref, flo, rmask, fmask, init, o, engine, progress);
}

RegisterResult nonrigid_register(const Volume& ref, const Volume& flo, const Mask& rmask, const Mask& fmask,
                                 const RegisterOptions& opt, const RunOptions& run, RunInfo* info,
                                 const RegisterCallbacks& cb) {
  RunInfo local;
  RunInfo& i = info ? *info : local;
  RegisterOptions o = opt;
  if (o.threads <= 0) o.threads = run.threads;
  check_register_inputs(ref, flo, rmask, fmask, o);
  const Plan p = plan_for(run, i);
  EngineFactory factory = make_cpu_engine;
#if defined(EVK_HAVE_CUDA)
  if (p.backend.backend == Backend::gpu) {
    GpuEngineOptions go;
    go.field.config = p.kernel.config;
    go.field.source = p.kernel.source;
    factory = [go](const LevelInput& in) { return make_gpu_engine(in, go); };
    o.pyramid = [](const Volume& v, int levels, int used) { return gpu::make_image_pyramid(v, levels, used); };
  }
#else
  (void)p;
#endif
  return register_images(ref, flo, rmask, fmask, o, factory, cb);
}

}  // namespace evk::reg_deform
