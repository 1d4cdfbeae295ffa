#include "core/compute.hpp"

#include <chrono>

#include "core/field/active.hpp"
#include "core/field/field_cpu.hpp"
#include "evk/error.hpp"
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include "core/affine/gpu_affine.hpp"
#include "core/field/gpu_field.hpp"
#include "core/gpu_pyramid.hpp"
#include "core/register/reg_engine_gpu.hpp"
#include "evk/cuda_check.hpp"
#endif

namespace evk::reg_deform {

namespace {

bool is_genome_file(const std::string& kernel) {
  return kernel != "auto" && kernel != "original" && kernel != "evolved" && kernel != "expert";
}

#if defined(EVK_HAVE_CUDA)
gpu::FieldOptions gpu_field_options(const KernelChoice& k) {
  gpu::FieldOptions fo;
  fo.config = k.config;
  fo.source = k.source;
  fo.expert = k.expert;
  fo.expert_config = k.expert_config;
  return fo;
}
#endif

}  // namespace

Plan plan_backend(const RunOptions& run) {
  if (run.backend != "auto" && run.backend != "cpu" && run.backend != "gpu")
    input_error("--backend " + run.backend, "must be auto, cpu or gpu");
  CommonOptions c;
  c.backend = run.backend;
  c.kernel = run.kernel;
  c.device = run.device;
  Plan p;
  p.threads = run.threads;
  p.backend = choose_backend(c);
  p.info.reason = p.backend.reason;
  p.info.backend = p.gpu() ? "gpu" : "cpu";
  p.info.device = p.gpu() ? p.backend.device.name : "";
  p.info.kernel = p.gpu() ? "block-matching" : "cpu";
#if defined(EVK_HAVE_CUDA)
  if (p.gpu()) EVK_CUDA(cudaSetDevice(p.backend.device.index));
#endif
  return p;
}

void bind_device(const Plan& p) {
#if defined(EVK_HAVE_CUDA)
  if (p.gpu()) EVK_CUDA(cudaSetDevice(p.backend.device.index));
#else
  (void)p;
#endif
}

Plan plan_run(const RunOptions& run, const Request& request) {
  Plan p = plan_backend(run);
  if (p.gpu()) {
    Registry reg = make_registry();
    const auto overlay = default_overlay_dir();
    if (!overlay.empty()) reg.load_overlay(overlay);
    const auto& d = p.backend.device;
    const KernelPick k = pick_kernel(reg, DeviceKey{d.cc(), d.name}, run.kernel, request);
    p.kernel = k.kernel;
    p.info.kernel = k.variant;
  } else if (is_genome_file(run.kernel)) {
    // A genome file is still checked on the CPU backend (bad input is reported, never ignored).
    pick_kernel(make_registry(), DeviceKey{}, run.kernel, request);
    p.info.kernel = "cpu (genome " + run.kernel + " checked, not used by the CPU reference)";
  } else {
    p.info.kernel = "cpu";
  }
  return p;
}

Request field_request(const Geometry& ref, const Grid& grid) {
  return make_request(ref.nx, ref.ny, ref.nz, grid.sx, grid.sy, grid.sz);
}

Request register_request(const Geometry& ref, double spacing) {
  const auto vox = [&](double d) { return spacing < 0 ? -spacing : spacing / d; };
  return make_request(ref.nx, ref.ny, ref.nz, vox(ref.dx), vox(ref.dy), vox(ref.dz));
}

FieldResult compute_field(const FieldRequest& req, const Plan& plan) {
  static const Mask kEvery;
  const Mask& mask = req.mask ? *req.mask : kEvery;
  check_grid_fits(req.ref, req.grid, "cpp");
  if (!mask.empty() && mask.size() != req.ref.voxels()) input_error("mask", "size differs from the reference's voxels");
  FieldResult r;
#if defined(EVK_HAVE_CUDA)
  if (plan.gpu()) {
    gpu::FieldEngine eng(req.ref, mask, req.grid.sx, req.grid.sy, req.grid.sz, gpu_field_options(plan.kernel));
    eng.set_grid(req.grid);
    eng.compute(req.displacement);
    r.gpu_path = eng.path();
    r.kernel_origin = eng.kernel_origin();
    r.active_voxels = eng.active_voxels();
    r.field = eng.download(req.displacement);
    return r;
  }
#endif
  FieldOptions fo;
  fo.displacement = req.displacement;
  fo.threads = plan.threads;
  r.active_voxels = count_active(req.ref, mask);
  r.field = compute_field_cpu(req.ref, req.grid, mask, fo);
  return r;
}

ResampleResult resample(const ResampleRequest& req, const Plan& plan) {
  ResampleResult r;
  const Field* field = &req.trans.field;
  if (req.trans.kind == TransKind::grid) {
    const auto t0 = std::chrono::steady_clock::now();
    r.field = compute_field({.ref = req.ref, .grid = req.trans.grid}, plan);
    r.field_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    field = &r.field.field;
  }
  if (field->data.size() != 3 * field->geo.voxels()) input_error("trans", "field size does not match its geometry");
  if (req.flo.data.size() != req.flo.geo.voxels()) input_error("flo", "data size does not match its geometry");
  ResampleOptions o = req.options;
  if (o.threads <= 0) o.threads = plan.threads;
#if defined(EVK_HAVE_CUDA)
  if (plan.gpu()) {
    r.image = gpu::resample(req.flo, *field, o);
    return r;
  }
#endif
  r.image = resample_cpu(req.flo, *field, o);
  return r;
}

AffineResult register_affine(const AffineRequest& req, const Plan& plan) {
  check_affine_options(req.options);
  AffineOptions o = req.options;
  if (o.threads <= 0) o.threads = plan.threads;
  AffineEngine engine = cpu_matcher(o.threads);
#if defined(EVK_HAVE_CUDA)
  if (plan.gpu()) engine = gpu::affine_engine();
#endif
  return register_affine(req.ref, req.flo, req.rmask, req.fmask, req.init, o, engine, req.progress);
}

RegisterResult register_nonrigid(const RegisterRequest& req, const Plan& plan) {
  RegisterOptions o = req.options;
  if (o.threads <= 0) o.threads = plan.threads;
  check_register_inputs(req.ref, req.flo, req.rmask, req.fmask, o, req.names);
  EngineFactory factory = make_cpu_engine;
#if defined(EVK_HAVE_CUDA)
  if (plan.gpu()) {
    GpuEngineOptions go;
    go.field = gpu_field_options(plan.kernel);
    factory = [go](const LevelInput& in) { return make_gpu_engine(in, go); };
    o.pyramid = [](const Volume& v, int levels, int used) { return gpu::make_image_pyramid(v, levels, used); };
  }
#endif
  return register_images(req.ref, req.flo, req.rmask, req.fmask, o, factory, req.callbacks);
}

}  // namespace evk::reg_deform
