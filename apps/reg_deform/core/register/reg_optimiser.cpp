#include "core/register/reg_optimiser.hpp"

#include <algorithm>
#include <cmath>

namespace evk::reg_deform {

namespace {
// reg_f3d's Optimiser::Optimise: the line search along the current direction.
double line_search(OptimiserProblem& p, double max_length, double small_length, double start, double& best, int& it,
                   int max_it, int& objectives) {
  int line_it = 0;
  double added = 0, length = start;
  while (length > small_length && line_it < 12 && it < max_it) {
    p.step_from_best(-length);
    const double value = p.objective();
    ++objectives;
    if (value > best) {
      p.accept();
      best = value;
      added += length;
      length = std::min(length * 1.1, max_length);
      p.store_best();
    } else {
      length *= 0.5;
    }
    ++it;
    ++line_it;
  }
  p.restore_best();
  return added;
}
}  // namespace

OptimiserTrace optimise_level(OptimiserProblem& p, const OptimiserSettings& s,
                              const std::function<void(int, double, double)>& progress) {
  OptimiserTrace t;
  p.store_best();
  t.best = p.objective();
  ++t.objectives;
  p.accept();
  const double max_step = s.max_step, smallest = max_step / 100;
  double size = max_step;
  bool first = true, just_restarted = false;
  int it = 0;
  while (size > 0) {
    if (it >= s.max_iterations) break;
    p.gradient();
    ++t.gradients;
    ++it;
    const double len = p.max_gradient_length();
    if (len > 0) p.scale_gradient(1.0 / len);
    size = std::min(size, max_step);
    p.conjugate(first || !s.conjugate);
    first = false;
    size = line_search(p, max_step, smallest, size, t.best, it, s.max_iterations, t.objectives);
    if (progress) progress(it, t.best, size);
    if (size == 0) {
      if (!just_restarted && it < s.max_iterations) {
        first = true;  // steepest descent again, full step
        size = max_step;
        just_restarted = true;
      }
    } else {
      just_restarted = false;
    }
  }
  t.iterations = it;
  return t;
}

void HostVectors::resize(std::size_t n) {
  current.resize(n);
  best.resize(n);
  grad.assign(n, 0.0f);
  g_prev.assign(n, 0.0f);
  h.assign(n, 0.0f);
}

double HostVectors::max_length() const {
  const std::size_t np = grad.size() / 3;
  double m = 0;
  for (std::size_t i = 0; i < np; ++i) {
    const double x = grad[i], y = grad[np + i], z = grad[2 * np + i];
    m = std::max(m, std::sqrt(x * x + y * y + z * z));
  }
  return m;
}

void HostVectors::scale(double f) {
  for (float& g : grad) g = static_cast<float>(g * f);
}

void HostVectors::conjugate(bool first) {
  const std::size_t n = grad.size();
  if (first) {
    for (std::size_t i = 0; i < n; ++i) h[i] = g_prev[i] = -grad[i];
    return;
  }
  double gg = 0, dgg = 0;
  for (std::size_t i = 0; i < n; ++i) {
    gg += double(h[i]) * g_prev[i];
    dgg += (double(grad[i]) + g_prev[i]) * grad[i];
  }
  const double gam = gg != 0 ? dgg / gg : 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    g_prev[i] = -grad[i];
    h[i] = static_cast<float>(g_prev[i] + gam * h[i]);
    grad[i] = -h[i];
  }
}

void HostVectors::step_from_best(double scale) {
  for (std::size_t i = 0; i < current.size(); ++i) current[i] = static_cast<float>(best[i] + scale * grad[i]);
}

}  // namespace evk::reg_deform
