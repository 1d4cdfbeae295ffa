// One call per job, on the chosen backend (auto | cpu | gpu) with the kernel variant chosen as the
// CLI chooses it (registry: installed, overlay, --kernel FILE): the deformation field of a grid and
// resampling through a field. Used by the Python module and the drop-in NiftyReg commands; no
// printing, no files.
#pragma once
#include <string>

#include "affine_reg.hpp"
#include "reg_register.hpp"
#include "resample_cpu.hpp"
#include "types.hpp"

namespace evk::reg_deform {

struct RunOptions {
  std::string backend = "auto";  // auto | cpu | gpu
  std::string kernel = "auto";   // auto | original | evolved | genome FILE
  int device = 0;
  int threads = 0;               // CPU threads (<= 0: all cores)
};

struct RunInfo {
  std::string backend;  // "cpu" or "gpu"
  std::string kernel;   // e.g. "original (no GPU)", "sm90-NVIDIA_H200 (exact device match ...)"
  std::string device;   // GPU name ("" on the CPU)
  std::string reason;   // why this backend
};

// The field of `grid` on `ref` (voxels outside a non-empty mask get the identity); InputError
// naming the option when the backend or kernel choice cannot be met.
Field compute_field(const Geometry& ref, const Grid& grid, const Mask& mask, bool displacement,
                    const RunOptions& run, RunInfo* info = nullptr);

// `flo` resampled through `field` (reg_deform resample's semantics: linear/nearest/cubic B-spline,
// `pad` for positions outside the floating image).
Volume resample_volume(const Volume& flo, const Field& field, const ResampleOptions& opt, const RunOptions& run,
                       RunInfo* info = nullptr);

// Global (rigid/affine) registration, `reg_deform affine`'s method (opt.threads: CPU threads when
// <= 0, run.threads), on the chosen backend (the GPU block matcher and pyramid, or the CPU reference).
AffineResult affine_register(const Volume& ref, const Volume& flo, const Mask& rmask, const Mask& fmask,
                             const Mat44& init, const AffineOptions& opt, const RunOptions& run,
                             RunInfo* info = nullptr, const AffineProgress& progress = {});

// Non-rigid registration, `reg_deform register`'s method, on the chosen backend with the field
// kernel variant chosen as `register` chooses it. The inputs are checked (check_register_inputs).
RegisterResult nonrigid_register(const Volume& ref, const Volume& flo, const Mask& rmask, const Mask& fmask,
                                 const RegisterOptions& opt, const RunOptions& run, RunInfo* info = nullptr,
                                 const RegisterCallbacks& cb = {});

}  // namespace evk::reg_deform
