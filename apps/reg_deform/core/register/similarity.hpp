// Similarity of a reference and a warped image, as NiftyReg 2.0 computes it (reg_measure, and the
// registration's cost): voxels where either value is NaN, or where the mask is 0, are left out.
// - NMI: both images rescaled to [2, bins - 3] (bins = 68: NiftyReg's 64 bins + 4 for the Parzen
//   window), the joint histogram of the truncated values smoothed by the cubic B-spline kernel
//   [1/6, 2/3, 1/6] along each axis, NMI = (H(ref) + H(warped)) / H(joint) (natural logs);
// - NCC: Pearson correlation; SSD: minus the mean squared difference.
// The CPU reference; exact, double accumulation.
#pragma once
#include <cstdint>
#include <vector>

namespace evk::reg_deform {

struct NmiOptions {
  int bins = 68;  // NiftyReg's reg_nmi default (64 + 4)
};

// ref and warped: same length; mask empty or same length (nonzero = active).
double nmi_niftyreg(const std::vector<float>& ref, const std::vector<float>& warped,
                    const std::vector<std::uint8_t>& mask = {}, const NmiOptions& opt = {});
double ncc_niftyreg(const std::vector<float>& ref, const std::vector<float>& warped,
                    const std::vector<std::uint8_t>& mask = {});
double ssd_niftyreg(const std::vector<float>& ref, const std::vector<float>& warped,
                    const std::vector<std::uint8_t>& mask = {});

// NiftyReg's reg_intensityRescale of one volume to [lo, hi] (min/max over the non-NaN values; NaN
// stays NaN), float results.
std::vector<float> rescale_niftyreg(const std::vector<float>& v, float lo, float hi);

}  // namespace evk::reg_deform
