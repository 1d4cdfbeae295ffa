#include "compute.hpp"

#include "evk/cli.hpp"
#include "evk/dispatch.hpp"
#include "evk/error.hpp"
#include "field_cpu.hpp"
#include "kernel_config.hpp"
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include "evk/cuda_check.hpp"
#include "gpu_field.hpp"
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

}  // namespace evk::reg_deform
