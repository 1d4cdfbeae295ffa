// Stage 3 of `register`: the similarity measure of the warped floating image against the reference.
// NMI as reg_f3d computes it by default: each level image rescaled by its own min..max onto
// [2, bins + 1] of bins + 4 histogram bins; the joint histogram of the integer parts of the two
// intensities over the voxels where both are defined, smoothed along both axes with the cubic
// B-spline kernel [1/6, 2/3, 1/6] (reg_f3d's approximation of cubic B-spline Parzen windows);
// normalised, marginals, entropies; NMI = (H(R) + H(W)) / H(R, W).
// SSD as reg_f3d's --ssd: both images rescaled by their joint min..max onto [0, 1]; value
// -mean((R - W)^2) over the voxels where both are defined (maximised like NMI).
#pragma once
#include <cstddef>
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

inline double spline_basis(double x) {  // cubic B-spline, support (-2, 2)
  x = x < 0 ? -x : x;
  if (x >= 2) return 0;
  if (x < 1) return 2.0 / 3.0 + (0.5 * x - 1.0) * x * x;
  x -= 2;
  return -x * x * x / 6.0;
}
inline double spline_basis_derivative(double ox) {
  double x = ox < 0 ? -ox : ox;
  if (x >= 2) return 0;
  if (x < 1) return (1.5 * x - 2.0) * ox;
  x -= 2;
  const double v = -0.5 * x * x;
  return ox < 0 ? -v : v;
}

// min..max of the finite values -> [2, bins + 1] (in place). A constant image maps to 2.
void rescale_for_nmi(Volume& v, int bins);
// Both images by their joint min..max onto [0, 1] (in place).
void rescale_for_ssd(Volume& ref, Volume& flo);

struct NmiHistogram {
  int nb = 68;                 // bins + 4
  std::vector<double> prob;    // nb*nb joint (index r + nb*w), then nb reference, nb warped marginals
  std::vector<double> logp;    // log of each nonzero entry of prob (0 elsewhere)
  double h_ref = 0, h_war = 0, h_joint = 0;
  double total = 0;            // sum of the smoothed counts (reg_f3d's entropyValues[3])
  double nmi() const { return h_joint > 0 ? (h_ref + h_war) / h_joint : 0; }
};

// Joint counts counts[r + nb*w] of (int)ref, (int)warped over mask voxels where both are finite
// and inside [0, nb). counts: nb*nb entries (overwritten).
void nmi_counts_cpu(const float* ref, const float* warped, const Mask& mask, std::size_t nv, int nb,
                    std::vector<double>& counts, int threads = 0);
// Smoothing, normalisation, marginals, entropies and logs from the counts (all in double).
void nmi_from_counts(const std::vector<double>& counts, int nb, NmiHistogram& h);

// -mean((R - W)^2) over mask voxels where both are finite; *n gets their number.
double ssd_value_cpu(const float* ref, const float* warped, const Mask& mask, std::size_t nv, std::size_t* n,
                     int threads = 0);

}  // namespace evk::reg_deform
