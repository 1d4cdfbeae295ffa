// One level of `register` as the optimiser sees it: a backend (CPU or GPU) holding the level's
// images, masks and control points, evaluating the objective and its gradient through the stages
// (field, warp, measure, measure gradient, adjoint, penalties). The driver builds one per level.
#pragma once
#include <functional>
#include <memory>

#include "core/register/reg_optimiser.hpp"
#include "core/register/reg_options.hpp"
#include "core/types.hpp"

namespace evk::reg_deform {

struct LevelWeights {
  double similarity = 0.989, bending = 0, linear = 0, jacobian = 0;
};

struct LevelInput {
  Volume ref, flo;          // level images, rescaled for the measure (NMI bins or SSD [0, 1])
  Mask ref_mask, flo_mask;  // level masks (empty: every voxel)
  Grid grid;                // initial control points on `ref`
  Similarity similarity = Similarity::nmi;
  int bins = 64;
  LevelWeights weights;
  int threads = 0;
};

class LevelEngine : public OptimiserProblem {
 public:
  // The terms of the best accepted objective() (last_: of the last one).
  const ObjectiveTerms& best_terms() const { return best_; }
  void accept() override { best_ = last_; }
  // The current control points (on the GPU: downloaded).
  virtual Grid grid() = 0;
  // Seconds spent in stage 1 (grid -> deformation) so far.
  virtual double field_seconds() const = 0;

 protected:
  ObjectiveTerms last_, best_;
};

using EngineFactory = std::function<std::unique_ptr<LevelEngine>(const LevelInput&)>;

std::unique_ptr<LevelEngine> make_cpu_engine(const LevelInput& in);

}  // namespace evk::reg_deform
