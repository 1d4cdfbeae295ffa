// Resampling exactly as NiftyReg 2.0's reg_resample / reg_measure do it (the drop-in commands
// follow NiftyReg where it differs from `reg_deform resample`):
// - interpolation orders 0 (nearest), 1 (linear), 3 (cubic convolution, Catmull-Rom: NiftyReg's
//   "cubic spline" interpolates the samples directly, no B-spline prefilter) and 4 (windowed sinc,
//   6 taps); other orders are 3, as in NiftyReg;
// - every kernel tap that falls outside the floating image contributes the padding value (a
//   sample in the image's last half-voxel mixes image and padding; `reg_deform resample` pads the
//   whole sample instead);
// - float arithmetic in NiftyReg's order; positions through the floating image's float
//   world-to-voxel matrix (sform, else qform).
// The values are the floating image's stored values (no scl_slope); the caller writes them in the
// floating image's datatype (NiftyReg truncates toward zero and clamps to the type's range:
// write_stored_volume does the same).
#pragma once
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

// NiftyReg's kernels for fractional position `relative` in [0, 1) (basis[] of 2, 2, 4 or 6 taps).
int niftyreg_kernel_taps(int inter);  // 2, 2, 4, 6 for 0, 1, 3, 4 (anything else: 3's)
void niftyreg_kernel(int inter, float relative, float* basis);

// The warped values on the field's grid. `field` holds world positions (a displacement field is
// converted first); NaN `pad` marks outside samples as undefined, as reg_measure's default does.
// mask: empty or field.geo.voxels() entries; voxels with mask 0 get `pad`.
std::vector<float> resample_niftyreg(const Volume& flo, const Field& field, int inter, float pad,
                                     const std::vector<std::uint8_t>& mask = {}, int threads = 0);

// The deformation field of an affine transformation (reference world -> floating world) on the
// reference grid, as NiftyReg computes it (float matrix affine x ref voxel-to-world, double sums).
Field affine_field(const Geometry& ref, const Mat44& affine);

}  // namespace evk::reg_deform
