// reg_deform's one facade: every job (field, resample, affine, register) from a request struct to a
// result, on the backend (auto | cpu | gpu) and, on the GPU, with the field kernel variant chosen
// (registry: built-in, installed, overlay, --kernel FILE). The CLI, the drop-in NiftyReg commands and
// the Python module all call it; no printing, no files.
//
// A job is planned first (plan_run: backend + kernel, InputError naming the option when the choice
// cannot be met), then run with its plan; the plan's info says what runs, for -v and --json.
#pragma once
#include <cstddef>
#include <string>

#include "core/affine/affine_reg.hpp"
#include "core/field/resample_cpu.hpp"
#include "core/register/reg_register.hpp"
#include "core/types.hpp"
#include "evk/cli.hpp"
#include "evk/dispatch.hpp"
#include "gi/kernel_variant.hpp"

namespace evk::reg_deform {

struct RunOptions {
  std::string backend = "auto";  // auto | cpu | gpu
  std::string kernel = "auto";   // auto | original | evolved | expert | genome FILE
  int device = 0;
  int threads = 0;  // CPU threads (<= 0: all cores)
};

struct RunInfo {
  std::string backend;  // "cpu" or "gpu"
  // The field kernel: on the GPU the variant and why ("sm90-h200-paper217 (exact device match)",
  // "expert (--kernel expert)"); on the CPU "cpu", or "cpu (genome FILE checked, not used by the CPU
  // reference)" for a genome file. Jobs without a field kernel (affine): "cpu" / "block-matching".
  std::string kernel;
  std::string device;  // GPU name ("" on the CPU)
  std::string reason;  // why this backend
};

struct Plan {
  BackendChoice backend;
  KernelChoice kernel;  // the field kernel (GPU)
  RunInfo info;
  int threads = 0;
  bool gpu() const { return backend.backend == Backend::gpu; }
};

// Backend and field kernel for a job of `request` (field_request / register_request). On the GPU
// the device becomes current. A genome FILE is checked on the CPU too (bad input is reported).
Plan plan_run(const RunOptions& run, const Request& request = {});
// Backend only (jobs without a field kernel: affine).
Plan plan_backend(const RunOptions& run);
// Makes a GPU plan's device the calling thread's current one (a thread that runs a plan made on
// another thread calls it first); nothing for a CPU plan.
void bind_device(const Plan& p);

// What a field job asks of a kernel variant (size class, voxels, spacing in voxels).
Request field_request(const Geometry& ref, const Grid& grid);
// The same for a registration: the reference and the final control-point spacing (mm > 0, voxels < 0).
Request register_request(const Geometry& ref, double spacing);

// ---- field ----
struct FieldRequest {
  const Geometry& ref;
  const Grid& grid;
  const Mask* mask = nullptr;  // voxels where it is 0 get the identity (null or empty: every voxel)
  bool displacement = false;
};
struct FieldResult {
  Field field;
  std::size_t active_voxels = 0;
  std::string gpu_path;       // GPU: "tile5 (1x5x5 tiles)", "generic ...", "expert ..."
  std::string kernel_origin;  // GPU: "embedded fatbin", "NVRTC sm_90 ..."
};
FieldResult compute_field(const FieldRequest& req, const Plan& plan);

// ---- resample ----
// `flo` resampled into `ref` through a transformation: a grid (its field on the plan's backend) or a
// deformation/displacement field on `ref`.
struct ResampleRequest {
  const Geometry& ref;
  const Volume& flo;
  const Transformation& trans;
  ResampleOptions options;  // options.threads <= 0: the plan's threads
};
struct ResampleResult {
  Volume image;
  FieldResult field;    // a grid's field (field.field empty for a field transformation)
  double field_ms = 0;  // time spent computing it
};
ResampleResult resample(const ResampleRequest& req, const Plan& plan);

// ---- affine ----
struct AffineRequest {
  const Volume& ref;
  const Volume& flo;
  const Mask& rmask;
  const Mask& fmask;
  Mat44 init;
  AffineOptions options;  // options.threads <= 0: the plan's threads
  AffineProgress progress = {};
};
AffineResult register_affine(const AffineRequest& req, const Plan& plan);

// ---- register ----
// The inputs are checked (check_register_inputs with `names`); options.affine is the start.
struct RegisterRequest {
  const Volume& ref;
  const Volume& flo;
  const Mask& rmask;
  const Mask& fmask;
  RegisterOptions options;  // options.threads <= 0: the plan's threads
  InputNames names = {};
  RegisterCallbacks callbacks = {};
};
RegisterResult register_nonrigid(const RegisterRequest& req, const Plan& plan);

}  // namespace evk::reg_deform
