#include "core/register/reg_register.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/pyramid.hpp"
#include "core/register/reg_grid.hpp"
#include "core/register/reg_measure_cpu.hpp"
#include "evk/error.hpp"

namespace evk::reg_deform {

namespace {
using Clock = std::chrono::steady_clock;

void check_volume(const Volume& v, const std::string& what) {
  if (v.geo.voxels() == 0 || v.data.size() != v.geo.voxels()) input_error(what, "holds no voxels");
  bool nonzero = false;
  float lo = 0, hi = 0;
  bool first = true;
  for (float x : v.data) {
    if (!std::isfinite(x)) input_error(what, "contains NaN or infinite intensities");
    nonzero |= x != 0;
    if (first || x < lo) lo = x;
    if (first || x > hi) hi = x;
    first = false;
  }
  if (!nonzero) input_error(what, "is all zero");
  if (!(hi > lo)) input_error(what, "is constant (no intensity range to register)");
}

void check_mask(const Mask& m, std::size_t n, const std::string& what) {
  if (m.empty()) return;
  if (m.size() != n) input_error(what, "size does not match its image");
  for (auto x : m)
    if (x) return;
  input_error(what, "has no nonzero voxel");
}

// Gaussian smoothing with sigma in mm (per-axis voxels), as reg_f3d's --smooR/--smooF.
void smooth_mm(Volume& v, double sigma_mm, int threads) {
  if (sigma_mm <= 0) return;
  v.data = gaussian_smooth3(v.geo, v.data, {sigma_mm / v.geo.dx, sigma_mm / v.geo.dy, sigma_mm / v.geo.dz}, threads);
}
}  // namespace

namespace {
// Whether any reference voxel (sampled on a lattice of about 40 per axis) lands inside the floating
// image through the initial transformation (the affine, else world to world as reg_f3d starts).
bool overlaps(const Volume& ref, const Volume& flo, const RegisterOptions& opt) {
  Mat44 to_flo;
  try {
    to_flo = flo.geo.vox2world.inverse() * (opt.has_affine ? opt.affine : Mat44::identity()) * ref.geo.vox2world;
  } catch (const std::exception&) {
    return true;  // a singular geometry is reported by check_volume
  }
  const int n[3] = {ref.geo.nx, ref.geo.ny, ref.geo.nz}, f[3] = {flo.geo.nx, flo.geo.ny, flo.geo.nz};
  const int step[3] = {std::max(1, n[0] / 40), std::max(1, n[1] / 40), std::max(1, n[2] / 40)};
  for (int k = 0; k < n[2]; k += step[2])
    for (int j = 0; j < n[1]; j += step[1])
      for (int i = 0; i < n[0]; i += step[0]) {
        const std::array<double, 3> p = to_flo.apply(i, j, k);
        bool in = true;
        for (int a = 0; a < 3; ++a) in = in && p[static_cast<std::size_t>(a)] > -0.5 && p[static_cast<std::size_t>(a)] < f[a] - 0.5;
        if (in) return true;
      }
  return false;
}
}  // namespace

void check_register_inputs(const Volume& ref, const Volume& flo, const Mask& ref_mask, const Mask& flo_mask,
                           const RegisterOptions& opt, const InputNames& names) {
  if (opt.levels < 1) input_error("--ln", "must be >= 1");
  if (opt.levels_used < 0) input_error("--lp", "must be >= 1");
  if (opt.levels_used > opt.levels) input_error("--lp", "must not exceed --ln (" + std::to_string(opt.levels) + ")");
  if (opt.max_iterations < 1) input_error("--maxit", "must be >= 1");
  if (opt.bins < 2 || opt.bins > 1024) input_error("--bins", "must be in [2, 1024]");
  if (!(opt.bending >= 0) || !(opt.linear >= 0) || !(opt.jacobian_log >= 0))
    input_error("--be/--le/--jl", "penalty weights must be >= 0");
  if (!(opt.smooth_ref >= 0) || !(opt.smooth_flo >= 0)) input_error("--smooR/--smooF", "sigma must be >= 0");
  if (!std::isfinite(opt.spacing) || opt.spacing == 0) input_error("--sx", "must be nonzero");
  check_volume(ref, names.ref);
  check_volume(flo, names.flo);
  if ((ref.geo.nz == 1) != (flo.geo.nz == 1))
    input_error(names.flo, "dimensionality differs from the reference (2-D vs 3-D)");
  check_mask(ref_mask, ref.geo.voxels(), names.ref_mask);
  check_mask(flo_mask, flo.geo.voxels(), names.flo_mask);
  const double d[3] = {ref.geo.dx, ref.geo.dy, ref.geo.dz};
  for (int a = 0; a < 3; ++a) {
    const double s_vox = opt.spacing < 0 ? -opt.spacing : opt.spacing / d[a];
    if (s_vox < 1) input_error("--sx", "control-point spacing is smaller than a reference voxel");
  }
  if (opt.has_affine) {
    try {
      (void)opt.affine.inverse();
    } catch (const std::exception&) {
      input_error("--aff", "singular affine matrix");
    }
  }
  if (!overlaps(ref, flo, opt))
    input_error(opt.has_affine ? "--aff" : names.flo, std::string("the floating image does not overlap the reference") +
                                                          (opt.has_affine ? " once the affine is applied" : " in world space") +
                                                          ": nothing to register");
}

namespace {

// A level's engine as the optimiser's problem, calling on_first before the first gradient: the
// initial objective is evaluated inside optimise_level, so the level start is reported after it.
struct StartHook final : OptimiserProblem {
  LevelEngine& e;
  std::function<void()> on_first;
  bool fired = false;
  StartHook(LevelEngine& eng, std::function<void()> f) : e(eng), on_first(std::move(f)) {}
  double objective() override { return e.objective(); }
  void gradient() override {
    if (!fired) {
      fired = true;
      on_first();
    }
    e.gradient();
  }
  double max_gradient_length() override { return e.max_gradient_length(); }
  void scale_gradient(double f) override { e.scale_gradient(f); }
  void conjugate(bool first) override { e.conjugate(first); }
  void store_best() override { e.store_best(); }
  void restore_best() override { e.restore_best(); }
  void step_from_best(double s) override { e.step_from_best(s); }
  void accept() override { e.accept(); }
};

// A level's images: smoothed (--smooR / --smooF on every level), rescaled for the similarity, masked.
LevelInput level_images(const Volume& ref, const Volume& flo, const Mask& ref_mask, const Mask& flo_mask,
                        const RegisterOptions& opt) {
  LevelInput in;
  in.ref = ref;
  in.flo = flo;
  smooth_mm(in.ref, opt.smooth_ref, opt.threads);
  smooth_mm(in.flo, opt.smooth_flo, opt.threads);
  in.ref_mask = ref_mask;
  in.flo_mask = flo_mask;
  if (opt.similarity == Similarity::nmi) {
    rescale_for_nmi(in.ref, opt.bins);
    rescale_for_nmi(in.flo, opt.bins);
  } else {
    rescale_for_ssd(in.ref, in.flo);
  }
  return in;
}

// A level's report before it runs: its image and grid sizes and the grid's spacing in voxels.
LevelReport level_report(int l, const Geometry& ref, const Grid& grid) {
  LevelReport rep;
  rep.level = l;
  rep.nx = ref.nx;
  rep.ny = ref.ny;
  rep.nz = ref.nz;
  rep.gx = grid.geo.nx;
  rep.gy = grid.geo.ny;
  rep.gz = grid.geo.nz;
  rep.spacing_voxels[0] = grid.sx;
  rep.spacing_voxels[1] = grid.sy;
  rep.spacing_voxels[2] = grid.sz;
  return rep;
}

}  // namespace

RegisterResult register_images(const Volume& ref, const Volume& flo, const Mask& ref_mask, const Mask& flo_mask,
                               const RegisterOptions& opt, const EngineFactory& factory, const RegisterCallbacks& cb) {
  check_register_inputs(ref, flo, ref_mask, flo_mask, opt);
  const auto t_start = Clock::now();
  const int ln = opt.levels, lp = opt.levels_used > 0 ? opt.levels_used : opt.levels;
  const auto pyramid = [&](const Volume& v) {
    return opt.pyramid ? opt.pyramid(v, ln, lp) : make_image_pyramid(v, ln, lp, opt.threads);
  };
  const ImagePyramid ref_p = pyramid(ref), flo_p = pyramid(flo);
  const auto rmask_p = make_mask_pyramid(ref.geo, ref_mask, ln, lp);
  const auto fmask_p = make_mask_pyramid(flo.geo, flo_mask, ln, lp);
  // Final spacing in mm per axis (negative: voxels of the input reference), then the first level's.
  const double sp[3] = {opt.spacing < 0 ? -opt.spacing * ref.geo.dx : opt.spacing,
                        opt.spacing < 0 ? -opt.spacing * ref.geo.dy : opt.spacing,
                        opt.spacing < 0 ? -opt.spacing * ref.geo.dz : opt.spacing};
  const double coarse = std::pow(2.0, ln - 1);
  // Weights (reg_f3d's CheckParameters and InitCurrentLevel).
  double be = opt.bending, le = opt.linear, jl = opt.jacobian_log, sim = 0;
  const double sum = be + le + jl;
  if (sum >= 1) {
    be /= sum;
    le /= sum;
    jl /= sum;
  } else {
    sim = 1 - sum;
  }
  be /= std::pow(16.0, ln - 1);
  le /= std::pow(3.0, ln - 1);
  int max_it = opt.max_iterations * (1 << (lp - 1));

  RegisterResult result;
  Grid grid;
  for (int l = 0; l < lp; ++l) {
    const auto t_level = Clock::now();
    if (l > 0) {
      be *= 16;
      le *= 3;
    }
    LevelInput in = level_images(ref_p[l], flo_p[l], rmask_p[l], fmask_p[l], opt);
    if (l == 0) {
      const std::array<double, 3> s = {sp[0] * coarse / in.ref.geo.dx, sp[1] * coarse / in.ref.geo.dy,
                                       sp[2] * coarse / in.ref.geo.dz};
      grid = make_grid3(in.ref.geo, s, opt.has_affine ? opt.affine : Mat44::identity());
    } else {
      grid = refine_grid(grid, in.ref.geo);
    }
    in.grid = grid;
    in.similarity = opt.similarity;
    in.bins = opt.bins;
    in.weights = {sim, be, le, jl};
    in.threads = opt.threads;
    auto engine = factory(in);

    LevelReport rep = level_report(l, in.ref.geo, grid);
    OptimiserSettings os;
    os.max_step = std::max({in.ref.geo.dx, in.ref.geo.dy, in.ref.geo.dz});
    os.max_iterations = max_it;
    bool started = false;
    auto progress = [&](int it, double best, double step) {
      if (!cb.iteration) return;
      IterationReport r;
      r.level = l;
      r.iteration = it;
      r.best = engine->best_terms();
      r.best.total = best;
      r.step_mm = step;
      cb.iteration(r);
    };
    StartHook hook(*engine, [&] {
      started = true;
      rep.initial = engine->best_terms();
      if (cb.level_start) cb.level_start(rep);
    });
    const OptimiserTrace tr = optimise_level(hook, os, progress);
    if (!started) {
      rep.initial = engine->best_terms();
      if (cb.level_start) cb.level_start(rep);
    }
    grid = engine->grid();
    // the coarser levels' folds removed too, so that the finer ones start from a fold-free grid
    if (opt.unfold && l + 1 < lp) unfold_grid(in.ref.geo, grid, opt.threads);
    rep.iterations = tr.iterations;
    rep.gradient_evaluations = tr.gradients;
    rep.objective_evaluations = tr.objectives;
    rep.final_terms = engine->best_terms();
    rep.seconds = std::chrono::duration<double>(Clock::now() - t_level).count();
    rep.field_seconds = engine->field_seconds();
    if (cb.level_done) cb.level_done(rep);
    result.levels.push_back(rep);
    max_it /= 2;
  }
  result.grid = grid;
  if (opt.unfold) result.unfold = unfold_grid(ref.geo, result.grid, opt.threads);
  result.seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  return result;
}

}  // namespace evk::reg_deform
