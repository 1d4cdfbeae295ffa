// `register` (reg_f3d-class non-rigid registration): the options with reg_f3d's defaults, the
// objective's terms, and the per-level / per-iteration reports the driver hands to its callback.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/pyramid.hpp"
#include "core/register/reg_unfold.hpp"
#include "core/types.hpp"

namespace evk::reg_deform {

enum class Similarity { nmi, ssd };

struct RegisterOptions {
  // Final control-point spacing: > 0 in mm, < 0 in reference voxels (reg_f3d's -sx; default -5).
  double spacing = -5;
  int levels = 3;             // --ln: pyramid levels
  int levels_used = 0;        // --lp: levels performed (0: all)
  int max_iterations = 150;   // --maxit: at the finest level (doubled per coarser level)
  double bending = 0.001;     // --be
  double linear = 0.01;       // --le
  double jacobian_log = 0.01;  // --jl (reg_f3d's default is 0: with 0.01 far fewer folds are left to unfold)
  bool unfold = true;          // the final grid made fold-free (unfold_grid); --allow-folding: false
  int bins = 64;              // NMI bins per image
  Similarity similarity = Similarity::nmi;
  double smooth_ref = 0, smooth_flo = 0;  // Gaussian sigma (mm) applied to every level
  bool has_affine = false;    // affine (reference world -> floating world) initialises the grid
  Mat44 affine;
  int threads = 0;            // CPU backend: <= 0 all cores
  // How the image pyramids are built (make_image_pyramid's contract, index 0 = coarsest used level):
  // empty = make_image_pyramid on the CPU with `threads`; the GPU backend passes
  // gpu::make_image_pyramid (the same levels bit for bit: 11 ms instead of ~190 ms for the 1 mm pair).
  std::function<ImagePyramid(const Volume& v, int levels, int used)> pyramid;
};

// Objective = similarity_weight * similarity - bending - linear - jacobian (all weighted), as
// reg_f3d's GetObjectiveFunctionValue; nmi / ssd hold the unweighted measure.
struct ObjectiveTerms {
  double total = 0;
  double similarity = 0;  // weighted
  double measure = 0;     // NMI, or -mean squared difference for SSD (unweighted)
  double bending = 0, linear = 0, jacobian = 0;  // weighted penalties
};

struct IterationReport {
  int level = 0;           // 0 = coarsest performed level
  int iteration = 0;       // reg_f3d's iteration counter (gradients + line-search evaluations)
  ObjectiveTerms best;     // after this line search
  double step_mm = 0;      // total length moved along the direction in this line search
};

struct LevelReport {
  int level = 0;
  int nx = 0, ny = 0, nz = 0;          // reference level dims
  int gx = 0, gy = 0, gz = 0;          // control-point grid dims
  double spacing_voxels[3] = {0, 0, 0};
  int iterations = 0;
  int gradient_evaluations = 0, objective_evaluations = 0;
  ObjectiveTerms initial, final_terms;
  double seconds = 0;
  double field_seconds = 0;            // time in the field (grid -> deformation) stage
};

struct RegisterResult {
  Grid grid;                     // final control points on the input reference
  std::vector<LevelReport> levels;
  UnfoldReport unfold;           // what unfolding the final grid did (rounds 0: nothing folded, or not asked)
  double seconds = 0;
};

struct RegisterCallbacks {
  std::function<void(const LevelReport&)> level_start;  // dims and initial terms set
  std::function<void(const IterationReport&)> iteration;
  std::function<void(const LevelReport&)> level_done;
};

}  // namespace evk::reg_deform
