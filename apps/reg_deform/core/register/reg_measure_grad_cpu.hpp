// Stage 4 of `register`: the voxel-wise gradient of the measure with respect to the deformation,
// d(-measure)/d(position) = d(-measure)/dW * grad W at every reference voxel (reg_f3d's sign: the
// optimiser steps against it). NMI: exact derivative of the cubic B-spline Parzen window of the
// warped intensity against the log-probabilities of the (approximated) histogram, as reg_f3d:
// (sum B(r - i) B'(w - j) [log p_r(i) + log p_w(j) - NMI log p(i, j)]) / (H(R, W) * total).
// SSD: -2 (R - W) / n * grad W. Voxels outside the mask or with an undefined value get 0.
#pragma once
#include <cstddef>

#include "core/register/reg_measure_cpu.hpp"

namespace evk::reg_deform {

// grad: 3 * nv (world-unit spatial gradient of the warped image); out: 3 * nv (overwritten).
void nmi_voxel_gradient_cpu(const float* ref, const float* warped, const float* grad, const Mask& mask,
                            std::size_t nv, const NmiHistogram& h, float* out, int threads = 0);
void ssd_voxel_gradient_cpu(const float* ref, const float* warped, const float* grad, const Mask& mask,
                            std::size_t nv, std::size_t n_valid, float* out, int threads = 0);

}  // namespace evk::reg_deform
