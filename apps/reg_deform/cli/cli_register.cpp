// `reg_deform register`: argument parsing and printing only (the registration is core/reg_*).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "core/affine/affine_init.hpp"
#include "core/field/resample_cpu.hpp"
#include "core/register/reg_jacobian_cpu.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/affine_text.hpp"
#include "io/nifti_io.hpp"

namespace evk::reg_deform {

namespace {

struct RegisterArgs {
  CommonOptions c;
  std::string ref, flo, aff, rmask, fmask, cpp, res, pad = "nan";
  RegisterOptions o;
  bool nmi = false, ssd = false, res_float = false;
  int threads = 0;
};

nlohmann::json terms_json(const ObjectiveTerms& t) {
  return {{"objective", t.total}, {"similarity_weighted", t.similarity}, {"measure", t.measure},
          {"bending_weighted", t.bending}, {"linear_weighted", t.linear}, {"jacobian_weighted", t.jacobian}};
}

std::string terms_line(const ObjectiveTerms& t, bool nmi) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "objective %.6f  %s %.6f  BE %.3g  LE %.3g  JL %.3g", t.total, nmi ? "NMI" : "-SSD",
                nmi ? t.measure : -t.measure, t.bending, t.linear, t.jacobian);
  return buf;
}

// Wall time per CLI stage (read, register, write, jacobian) for --json.
struct Laps {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  nlohmann::json times = nlohmann::json::object();
  void lap(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    times[name] = std::chrono::duration<double, std::milli>(now - t0).count();
    t0 = now;
  }
};

struct RegisterInputs {
  Volume ref, flo;
  Mask rmask, fmask;
  RegisterOptions o;  // with the initial affine
  std::string init;   // how it was initialised, for -v and --json
};

// The images, masks and start (--aff, else the centres of mass aligned: reg_f3d would start from
// the identity); unwritable outputs fail here, before computing.
RegisterInputs read_inputs(const RegisterArgs& a, const Volume& ref) {
  RegisterInputs in;
  in.o = a.o;
  in.flo = read_volume(a.flo);
  in.rmask = a.rmask.empty() ? Mask{} : read_mask(a.rmask, ref.geo);
  in.fmask = a.fmask.empty() ? Mask{} : read_mask(a.fmask, in.flo.geo);
  in.init = "affine " + a.aff;
  if (!a.aff.empty()) in.o.affine = read_affine(a.aff);  // strict: InputError naming the file
  check_register_inputs(ref, in.flo, in.rmask, in.fmask, in.o, {a.ref, a.flo, a.rmask, a.fmask});
  if (a.aff.empty()) {
    in.o.affine = init_centres_of_mass(ref, in.rmask, in.flo, in.fmask);
    in.init = "centres of mass";
  }
  in.o.has_affine = true;
  verbose_line(a.c, "initial transformation: " + in.init);
  { AtomicOutput probe(a.cpp); }
  if (!a.res.empty()) { AtomicOutput probe(a.res); }
  return in;
}

// Progress on stderr: per level (a terminal or -v), per iteration (-v, or one line on a terminal).
RegisterCallbacks progress(const RegisterArgs& a, const RegisterOptions& o) {
  const bool tty = isatty(fileno(stderr)) != 0, verbose = a.c.verbose;
  const bool nmi = o.similarity == Similarity::nmi;
  const int lp = o.levels_used > 0 ? o.levels_used : o.levels;
  RegisterCallbacks cb;
  cb.level_start = [=](const LevelReport& r) {
    if (!tty && !verbose) return;
    std::fprintf(stderr, "level %d/%d: reference %dx%dx%d, grid %dx%dx%d (spacing %.3g voxels); initial %s\n", r.level + 1,
                 lp, r.nx, r.ny, r.nz, r.gx, r.gy, r.gz, r.spacing_voxels[0], terms_line(r.initial, nmi).c_str());
  };
  cb.iteration = [=](const IterationReport& r) {
    if (verbose) std::fprintf(stderr, "  [%d] %s  step %.3g mm\n", r.iteration, terms_line(r.best, nmi).c_str(), r.step_mm);
    else if (tty)
      std::fprintf(stderr, "\r  [%d] %s  step %.3g mm   ", r.iteration, terms_line(r.best, nmi).c_str(), r.step_mm);
  };
  cb.level_done = [=](const LevelReport& r) {
    if (tty && !verbose) std::fprintf(stderr, "\n");
    if (!tty && !verbose) return;
    std::fprintf(stderr, "level %d/%d done: %d iterations (%d gradients, %d objectives) in %.2f s; %s\n", r.level + 1, lp,
                 r.iterations, r.gradient_evaluations, r.objective_evaluations, r.seconds,
                 terms_line(r.final_terms, nmi).c_str());
  };
  return cb;
}

// --res: the floating image resampled through the final grid (cubic, --pad) on the plan's backend
// (on a GPU the field and the resampling stay on the device) and written in the floating image's
// datatype; returns its NMI as reg_measure gives it.
double write_warped(const RegisterArgs& a, const Plan& p, const RegisterInputs& in, const Volume& ref, const Grid& grid,
                    Laps& laps) {
  Transformation t;
  t.kind = TransKind::grid;
  t.grid = grid;
  ResampleOptions ro;
  ro.interp = Interp::cubic;
  ro.pad = parse_pad(a.pad);
  ro.threads = a.threads;
  const ResampleResult rr = resample({.ref = ref.geo, .flo = in.flo, .trans = t, .options = ro}, p);
  laps.times["res_field"] = rr.field_ms;
  laps.lap("res_resample");  // field and resampling
  const Volume written = write_as_floating(a.res, rr.image, stored_info(a.flo), a.res_float, "Warped image (reg_deform register)");
  laps.lap("res_write");
  const double nmi = nmi_like_reg_measure(ref, written);
  laps.lap("res_nmi");
  return nmi;
}

nlohmann::json register_json(const RegisterArgs& a, const Plan& p, const RegisterInputs& in, const RegisterResult& result,
                             const nlohmann::json& final_info, const nlohmann::json& times) {
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& r : result.levels)
    levels.push_back({{"level", r.level},
                      {"reference_dims", {r.nx, r.ny, r.nz}},
                      {"grid_dims", {r.gx, r.gy, r.gz}},
                      {"spacing_voxels", {r.spacing_voxels[0], r.spacing_voxels[1], r.spacing_voxels[2]}},
                      {"iterations", r.iterations},
                      {"gradient_evaluations", r.gradient_evaluations},
                      {"objective_evaluations", r.objective_evaluations},
                      {"initial", terms_json(r.initial)},
                      {"final", terms_json(r.final_terms)},
                      {"seconds", r.seconds},
                      {"field_seconds", r.field_seconds}});
  return {{"command", "register"},
          {"backend", p.info.backend},
          {"device", p.info.device},
          {"kernel", p.info.kernel},
          {"genome", p.kernel.genome},
          {"similarity", in.o.similarity == Similarity::nmi ? "nmi" : "ssd"},
          {"initial_transformation", in.init},
          {"cpp", a.cpp},
          {"res", a.res},
          {"levels", levels},
          {"final", final_info},
          {"register_seconds", result.seconds},
          {"times_ms", times}};
}

void run_register(RegisterArgs& a) {
  Laps laps;
  if (a.nmi && a.ssd) input_error("--ssd", "cannot be combined with --nmi");
  a.o.similarity = a.ssd ? Similarity::ssd : Similarity::nmi;
  a.o.threads = a.threads;
  parse_pad(a.pad);
  if (a.o.levels_used > a.o.levels) input_error("--lp", "must not exceed --ln (" + std::to_string(a.o.levels) + ")");
  std::future<Plan> backend = start_backend(a.c, a.threads);  // the device starts while the images are read
  const Volume ref = read_volume(a.ref);
  const RegisterInputs in = read_inputs(a, ref);
  laps.lap("read");
  backend.get();
  laps.lap("device_start");  // what the start took beyond the reading
  // The field kernel as the registry picks it for the finest level: the reference's size and the
  // final control-point spacing in voxels.
  const Plan p = plan_verbose(a.c, register_request(ref.geo, a.o.spacing), "field kernel", a.threads);
  laps.lap("plan");
  const RegisterResult result = register_nonrigid(
      {.ref = ref, .flo = in.flo, .rmask = in.rmask, .fmask = in.fmask, .options = in.o,
       .names = {a.ref, a.flo, a.rmask, a.fmask}, .callbacks = progress(a, in.o)},
      p);
  laps.lap("register");
  write_grid(a.cpp, result.grid);
  laps.lap("write_grid");
  nlohmann::json final_info = nlohmann::json::object();
  if (!a.res.empty()) final_info["nmi_reg_measure"] = write_warped(a, p, in, ref, result.grid, laps);
  const JacobianStats js = voxel_jacobian_stats(ref.geo, result.grid, in.rmask, a.threads);
  final_info["min_jacobian"] = js.min;
  final_info["max_jacobian"] = js.max;
  final_info["folded_voxels"] = js.folded;
  final_info["unfold"] = {{"folded_before", result.unfold.folded_before}, {"min_jacobian_before", result.unfold.min_det_before},
                          {"rounds", result.unfold.rounds}, {"control_point_moves", result.unfold.moves},
                          {"seconds", result.unfold.seconds}};
  if (!result.levels.empty()) final_info["objective"] = terms_json(result.levels.back().final_terms);
  laps.lap("jacobian");
  if (isatty(fileno(stderr)) != 0 || a.c.verbose)
    std::fprintf(stderr, "registration %.2f s; min Jacobian determinant %.4f (%zu folded voxels)\n", result.seconds, js.min,
                 js.folded);
  if (a.c.json) std::cout << register_json(a, p, in, result, final_info, laps.times).dump(2) << "\n";
}

}  // namespace

void add_grid_options(CLI::App* cmd, RegisterOptions& o) {
  cmd->add_option("--sx", o.spacing, "Final control-point spacing: > 0 mm, < 0 reference voxels")->capture_default_str();
  cmd->add_option("--ln", o.levels, "Pyramid levels")->capture_default_str();
  cmd->add_option("--maxit", o.max_iterations, "Iterations at the final level (doubled per coarser level)")->capture_default_str();
  cmd->add_option("--be", o.bending, "Bending energy weight")->capture_default_str();
  cmd->add_option("--le", o.linear, "Linear elasticity weight")->capture_default_str();
  cmd->add_option("--jl", o.jacobian_log, "Jacobian log weight")->capture_default_str();
  cmd->add_flag("--allow-folding{false}", o.unfold,
                "Keep the grid as optimised: by default its folds (voxels with det J <= 0) are removed at the end");
}

void add_register_command(CLI::App& app) {
  auto a = std::make_shared<RegisterArgs>();
  auto* cmd = app.add_subcommand("register", "Non-rigid registration (NiftyReg reg_f3d's method): cubic B-spline grid");
  cmd->add_option("--ref", a->ref, "Reference image (NIfTI)")->required();
  cmd->add_option("--flo", a->flo, "Floating image (NIfTI)")->required();
  cmd->add_option("--aff", a->aff, "Initial affine, NiftyReg text 4x4 (reference world -> floating world)");
  cmd->add_option("--rmask", a->rmask, "Reference mask (nonzero = used)");
  cmd->add_option("--fmask", a->fmask, "Floating mask (voxels warped from outside it are left out)");
  cmd->add_option("--cpp", a->cpp, "Output control-point grid (NiftyReg cpp, .nii[.gz])")->required();
  cmd->add_option("--res", a->res, "Output warped floating image (cubic; in the floating image's datatype, as NiftyReg)");
  cmd->add_flag("--res-float", a->res_float, "Write --res as float32 whatever the floating image's datatype");
  add_grid_options(cmd, a->o);
  cmd->add_option("--lp", a->o.levels_used, "Levels performed (default: all)");
  cmd->add_option("--bins", a->o.bins, "NMI histogram bins per image")->capture_default_str();
  cmd->add_flag("--nmi", a->nmi, "Normalised mutual information (default)");
  cmd->add_flag("--ssd", a->ssd, "Sum of squared differences instead of NMI");
  cmd->add_option("--smooR", a->o.smooth_ref, "Gaussian smoothing of the reference, sigma in mm")->capture_default_str();
  cmd->add_option("--smooF", a->o.smooth_flo, "Gaussian smoothing of the floating image, sigma in mm")->capture_default_str();
  cmd->add_option("--pad", a->pad, "Value of --res outside the floating image (a number or nan)")->capture_default_str();
  cmd->add_option("--threads", a->threads, "CPU threads (default: all cores)");
  add_common_options(cmd, a->c);
  cmd->callback([a] { run_register(*a); });
}

}  // namespace evk::reg_deform
