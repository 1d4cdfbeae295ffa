// Stage 7 of `register`: reg_f3d's conjugate-gradient optimiser with its line search, written once
// over an abstract problem whose parameter vectors live wherever the backend keeps them (host
// vectors for the CPU, device buffers for the GPU): only scalars cross.
//  * per iteration: gradient (counted as an iteration), normalised by its largest control-point
//    length, conjugate direction (Polak-Ribiere as reg_f3d: gam = sum (g + g_prev') g / sum h g_prev'),
//    then the line search from the best parameters: step = min(previous total, max step); a step
//    that improves the objective is kept and grows by 1.1 (capped at the max step), one that does
//    not halves; at most 12 trials, down to max step / 100; every trial counts as an iteration;
//  * a line search that moves nothing restarts the conjugate direction once (steepest descent, full
//    step) before the level ends; the level ends at the iteration limit.
#pragma once
#include <functional>
#include <vector>

namespace evk::reg_deform {

class OptimiserProblem {
 public:
  virtual ~OptimiserProblem() = default;
  virtual double objective() = 0;                  // at the current parameters (maximised)
  virtual void gradient() = 0;                     // -d objective / d parameters at the current ones
  virtual double max_gradient_length() = 0;        // largest 3-vector (control point) length
  virtual void scale_gradient(double f) = 0;
  virtual void conjugate(bool first) = 0;          // gradient <- conjugate direction (reg_f3d's sign)
  virtual void store_best() = 0;                   // best <- current
  virtual void restore_best() = 0;                 // current <- best
  virtual void step_from_best(double scale) = 0;   // current <- best + scale * gradient
  virtual void accept() {}                         // the last objective() is the new best
};

struct OptimiserSettings {
  double max_step = 1;      // mm: the level reference's largest voxel size
  int max_iterations = 150;
  bool conjugate = true;
};

struct OptimiserTrace {
  int iterations = 0;
  int gradients = 0, objectives = 0;
  double best = 0;
};

// Runs one level from the current parameters (which become the initial best). progress(iteration,
// best objective, step) after each line search.
OptimiserTrace optimise_level(OptimiserProblem& p, const OptimiserSettings& s,
                              const std::function<void(int, double, double)>& progress = {});

// Host implementation of the vector part of OptimiserProblem (the CPU engine and the tests):
// current (the parameters), best, gradient and the two conjugate-gradient arrays, float as reg_f3d,
// reductions in double in a fixed order. Vectors are planar x, y, z (points = size / 3).
class HostVectors {
 public:
  std::vector<float> current, best, grad, g_prev, h;
  void resize(std::size_t n);
  double max_length() const;
  void scale(double f);
  void conjugate(bool first);
  void store_best() { best = current; }
  void restore_best() { current = best; }
  void step_from_best(double scale);
};

}  // namespace evk::reg_deform
