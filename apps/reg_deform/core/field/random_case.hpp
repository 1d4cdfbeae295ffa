// The paper's random test case: a cube (217^3 at 1 mm) holding a deformed white-noise sphere, its
// mask, and a control-point grid at spacing 5 with random displacements. Deterministic per seed on
// every platform (own splitmix64 generator, no std distributions).
#pragma once
#include <cstdint>

#include "core/field/splitmix.hpp"
#include "core/types.hpp"

namespace evk::reg_deform {

struct RandomCaseOptions {
  std::uint64_t seed = 1;
  int size = 217;               // cube side in voxels (1 mm)
  double radius = 74;           // base sphere radius (voxels): ~1.7 M active voxels at 217^3
  double variation = 0.05;      // radius, centre and per-axis compression each vary by +-5%
  double spacing = 5;           // control-point spacing (voxels)
  double max_displacement = 5;  // control points move uniformly within +-this (mm) per axis
};

struct RandomCase {
  Volume image;  // white noise in [0, 1) inside the ellipsoid, 0 outside
  Mask mask;     // the ellipsoid
  Grid grid;     // identity grid + random displacements
};

RandomCase make_random_case(const RandomCaseOptions& opt);


}  // namespace evk::reg_deform
