// Resampling the floating image onto the reference grid through an affine matrix (reference world
// -> floating world), any interpolation: the `--res` output of `affine` (cubic, as reg_aladin's).
#pragma once
#include "core/field/resample_cpu.hpp"
#include "core/types.hpp"

namespace evk::reg_deform {
Volume warp_affine_cpu(const Geometry& ref, const Volume& flo, const Mat44& ref2flo, const ResampleOptions& opt = {});
}
