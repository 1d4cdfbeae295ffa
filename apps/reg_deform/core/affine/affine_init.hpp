// Initial affine transformations (reference world -> floating world) for global registration,
// reg_aladin's choices: the geometric image centres (its default: voxel n/2 of each axis, mapped to
// world), or the centres of mass (reg_aladin -comi: intensity-weighted, within the masks when given).
// Both give a pure translation. Shared by `affine` and `register`.
#pragma once
#include <array>
#include <string>

#include "core/types.hpp"

namespace evk::reg_deform {

// Translation taking the reference's centre (voxel (nx/2, ny/2, nz/2)) to the floating image's.
Mat44 init_centres(const Geometry& ref, const Geometry& flo);

// World position of the intensity-weighted centre of mass of the voxels in `mask` (empty: all).
// Negative and non-finite intensities are ignored. InputError `what` when the weight is zero
// (an empty mask or an image with no positive intensity there).
std::array<double, 3> centre_of_mass(const Volume& v, const Mask& mask, const std::string& what);

// Translation taking the reference's centre of mass to the floating image's.
Mat44 init_centres_of_mass(const Volume& ref, const Mask& rmask, const Volume& flo, const Mask& fmask);

}  // namespace evk::reg_deform
