// Resampling a floating image through a deformation (or displacement) field defined on the
// reference: each reference voxel -> world mm (field) -> floating voxel (its sform/qform) ->
// nearest, trilinear or cubic B-spline interpolation (prefiltered, so it interpolates the samples);
// positions outside the floating image get `pad`.
#pragma once
#include <string>
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

enum class Interp { nearest, linear, cubic };
Interp parse_interp(const std::string& s);  // InputError naming --interp
const char* to_string(Interp i);

struct ResampleOptions {
  Interp interp = Interp::linear;
  float pad = 0;
  int threads = 0;
};

// Cubic B-spline interpolation coefficients of a volume (separable recursive prefilter, mirror
// boundaries): evaluating the cubic B-spline of the coefficients at voxel centres returns the input.
std::vector<float> bspline_coefficients(const Volume& v, int threads = 0);

// Floating-image voxel coordinates of every reference voxel, planar (3 * ref voxels).
std::vector<float> floating_coordinates(const Field& field, const Geometry& flo, int threads = 0);

// Samples volume data (or cubic coefficients) at one voxel position; returns pad outside.
float sample(const float* data, const Geometry& g, double px, double py, double pz, Interp interp, float pad);

Volume resample_cpu(const Volume& flo, const Field& field, const ResampleOptions& opt = {});

}  // namespace evk::reg_deform
