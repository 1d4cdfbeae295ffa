// `reg_deform register`: argument parsing and printing only (the registration is core/reg_*).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "affine_init.hpp"
#include "affine_text.hpp"
#include "cli_register.hpp"
#include "evk/atomic_file.hpp"
#include "evk/cli.hpp"
#include "evk/error.hpp"
#include "field_cpu.hpp"
#include "kernel_config.hpp"
#include "nifti_io.hpp"
#include "reg_jacobian_cpu.hpp"
#include "reg_register.hpp"
#include "resample_cpu.hpp"
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include "evk/cuda_check.hpp"
#include "gpu_field.hpp"
#include "gpu_pyramid.hpp"
#include "reg_engine_gpu.hpp"
#endif

namespace rd = evk::reg_deform;

namespace {

struct RegisterArgs {
  evk::CommonOptions c;
  std::string ref, flo, aff, rmask, fmask, cpp, res, pad = "nan";
  rd::RegisterOptions o;
  bool nmi = false, ssd = false;
  int threads = 0;
};

nlohmann::json terms_json(const rd::ObjectiveTerms& t) {
  return {{"objective", t.total}, {"similarity_weighted", t.similarity}, {"measure", t.measure},
          {"bending_weighted", t.bending}, {"linear_weighted", t.linear}, {"jacobian_weighted", t.jacobian}};
}

std::string terms_line(const rd::ObjectiveTerms& t, bool nmi) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "objective %.6f  %s %.6f  BE %.3g  LE %.3g  JL %.3g", t.total, nmi ? "NMI" : "-SSD",
                nmi ? t.measure : -t.measure, t.bending, t.linear, t.jacobian);
  return buf;
}

float parse_pad(const std::string& s) {
  if (s == "nan" || s == "NaN") return std::numeric_limits<float>::quiet_NaN();
  try {
    std::size_t used = 0;
    const float v = std::stof(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  evk::input_error("--pad", "'" + s + "' is not a number or nan");
}

}  // namespace

void add_register_command(CLI::App& app) {
  auto a = std::make_shared<RegisterArgs>();
  auto* cmd = app.add_subcommand("register", "Non-rigid registration (NiftyReg reg_f3d's method): cubic B-spline grid");
  cmd->add_option("--ref", a->ref, "Reference image (NIfTI)")->required();
  cmd->add_option("--flo", a->flo, "Floating image (NIfTI)")->required();
  cmd->add_option("--aff", a->aff, "Initial affine, NiftyReg text 4x4 (reference world -> floating world)");
  cmd->add_option("--rmask", a->rmask, "Reference mask (nonzero = used)");
  cmd->add_option("--fmask", a->fmask, "Floating mask (voxels warped from outside it are left out)");
  cmd->add_option("--cpp", a->cpp, "Output control-point grid (NiftyReg cpp, .nii[.gz])")->required();
  cmd->add_option("--res", a->res, "Output warped floating image (cubic)");
  cmd->add_option("--sx", a->o.spacing, "Final control-point spacing: > 0 mm, < 0 reference voxels")->capture_default_str();
  cmd->add_option("--ln", a->o.levels, "Pyramid levels")->capture_default_str();
  cmd->add_option("--lp", a->o.levels_used, "Levels performed (default: all)");
  cmd->add_option("--maxit", a->o.max_iterations, "Iterations at the final level (doubled per coarser level)")
      ->capture_default_str();
  cmd->add_option("--be", a->o.bending, "Bending energy weight")->capture_default_str();
  cmd->add_option("--le", a->o.linear, "Linear elasticity weight")->capture_default_str();
  cmd->add_option("--jl", a->o.jacobian_log, "Jacobian log weight")->capture_default_str();
  cmd->add_option("--bins", a->o.bins, "NMI histogram bins per image")->capture_default_str();
  cmd->add_flag("--nmi", a->nmi, "Normalised mutual information (default)");
  cmd->add_flag("--ssd", a->ssd, "Sum of squared differences instead of NMI");
  cmd->add_option("--smooR", a->o.smooth_ref, "Gaussian smoothing of the reference, sigma in mm")->capture_default_str();
  cmd->add_option("--smooF", a->o.smooth_flo, "Gaussian smoothing of the floating image, sigma in mm")->capture_default_str();
  cmd->add_option("--pad", a->pad, "Value of --res outside the floating image (a number or nan)")->capture_default_str();
  cmd->add_option("--threads", a->threads, "CPU threads (default: all cores)");
  evk::add_common_options(cmd, a->c);
  cmd->callback([a] {
    using Clock = std::chrono::steady_clock;
    auto t0 = Clock::now();
    nlohmann::json times = nlohmann::json::object();
    auto lap = [&](const char* name) {
      const auto now = Clock::now();
      times[name] = std::chrono::duration<double, std::milli>(now - t0).count();
      t0 = now;
    };
    if (a->nmi && a->ssd) evk::input_error("--ssd", "cannot be combined with --nmi");
    a->o.similarity = a->ssd ? rd::Similarity::ssd : rd::Similarity::nmi;
    a->o.threads = a->threads;
    const float pad = parse_pad(a->pad);
    if (a->o.levels_used > a->o.levels) evk::input_error("--lp", "must not exceed --ln (" + std::to_string(a->o.levels) + ")");
    const evk::BackendChoice backend = evk::choose_backend(a->c);
    const bool gpu = backend.backend == evk::Backend::gpu;
    const rd::Volume ref = rd::read_volume(a->ref);
    rd::KernelChoice kernel;
    std::string variant = "cpu";
    if (gpu) {
      // The tool's registry (built-in shipped variants, installed ones, the overlay), asked for the
      // finest level: the reference's size and the final control-point spacing in voxels.
      const evk::Registry reg = rd::make_registry();
      const double sp = a->o.spacing;
      const auto vox = [&](double d) { return sp < 0 ? -sp : sp / d; };
      const evk::Request req = rd::make_request(ref.geo.nx, ref.geo.ny, ref.geo.nz, vox(ref.geo.dx), vox(ref.geo.dy),
                                                vox(ref.geo.dz));
      const auto& d = backend.device;
      const rd::KernelPick pick = rd::pick_kernel(reg, evk::DeviceKey{d.cc(), d.name}, a->c.kernel, req);
      kernel = pick.kernel;
      variant = pick.variant;
#if defined(EVK_HAVE_CUDA)
      EVK_CUDA(cudaSetDevice(d.index));
#endif
    }
    evk::verbose_line(a->c, "backend: " + std::string(gpu ? "gpu" : "cpu") + " (" + backend.reason + "), field kernel " +
                                variant + (gpu ? ", " + kernel.describe() : std::string()));
    const rd::Volume flo = rd::read_volume(a->flo);
    const rd::Mask rmask = a->rmask.empty() ? rd::Mask{} : rd::read_mask(a->rmask, ref.geo);
    const rd::Mask fmask = a->fmask.empty() ? rd::Mask{} : rd::read_mask(a->fmask, flo.geo);
    std::string init = "affine " + a->aff;
    if (!a->aff.empty()) a->o.affine = rd::read_affine(a->aff);  // strict: InputError naming the file
    const rd::InputNames names{a->ref, a->flo, a->rmask, a->fmask};
    rd::check_register_inputs(ref, flo, rmask, fmask, a->o, names);
    if (a->aff.empty()) {  // no affine: the centres of mass aligned (reg_f3d would start from the identity)
      a->o.affine = rd::init_centres_of_mass(ref, rmask, flo, fmask);
      init = "centres of mass";
    }
    a->o.has_affine = true;
    evk::verbose_line(a->c, "initial transformation: " + init);
    { evk::AtomicOutput probe(a->cpp); }  // unwritable outputs: fail before computing
    if (!a->res.empty()) { evk::AtomicOutput probe(a->res); }
    lap("read");

    const bool tty = isatty(fileno(stderr)) != 0;
    const bool nmi = a->o.similarity == rd::Similarity::nmi;
    const int lp = a->o.levels_used > 0 ? a->o.levels_used : a->o.levels;
    rd::RegisterCallbacks cb;
    cb.level_start = [&](const rd::LevelReport& r) {
      if (!tty && !a->c.verbose) return;
      std::fprintf(stderr, "level %d/%d: reference %dx%dx%d, grid %dx%dx%d (spacing %.3g voxels); initial %s\n", r.level + 1,
                   lp, r.nx, r.ny, r.nz, r.gx, r.gy, r.gz, r.spacing_voxels[0], terms_line(r.initial, nmi).c_str());
    };
    cb.iteration = [&](const rd::IterationReport& r) {
      if (a->c.verbose)
        std::fprintf(stderr, "  [%d] %s  step %.3g mm\n", r.iteration, terms_line(r.best, nmi).c_str(), r.step_mm);
      else if (tty)
        std::fprintf(stderr, "\r  [%d] %s  step %.3g mm   ", r.iteration, terms_line(r.best, nmi).c_str(), r.step_mm);
    };
    cb.level_done = [&](const rd::LevelReport& r) {
      if (tty && !a->c.verbose) std::fprintf(stderr, "\n");
      if (!tty && !a->c.verbose) return;
      std::fprintf(stderr, "level %d/%d done: %d iterations (%d gradients, %d objectives) in %.2f s; %s\n", r.level + 1, lp,
                   r.iterations, r.gradient_evaluations, r.objective_evaluations, r.seconds,
                   terms_line(r.final_terms, nmi).c_str());
    };
    rd::EngineFactory factory = rd::make_cpu_engine;
    rd::RegisterOptions reg_opt = a->o;
#if defined(EVK_HAVE_CUDA)
    if (gpu) {
      reg_opt.pyramid = [](const rd::Volume& v, int levels, int used) { return rd::gpu::make_image_pyramid(v, levels, used); };
      rd::GpuEngineOptions go;
      go.field.config = kernel.config;
      go.field.source = kernel.source;
      go.field.expert = kernel.expert;
      go.field.expert_config = kernel.expert_config;
      factory = [go](const rd::LevelInput& in) { return rd::make_gpu_engine(in, go); };
    }
#endif
    const rd::RegisterResult result = rd::register_images(ref, flo, rmask, fmask, reg_opt, factory, cb);
    lap("register");

    // Outputs: the grid, and the warped image (cubic, the input floating image).
    rd::write_grid(a->cpp, result.grid);
    nlohmann::json final_info = nlohmann::json::object();
    if (!a->res.empty()) {
      rd::Field f;
#if defined(EVK_HAVE_CUDA)
      if (gpu) {
        rd::gpu::FieldOptions fo;
        fo.config = kernel.config;
        fo.source = kernel.source;
        fo.expert = kernel.expert;
        fo.expert_config = kernel.expert_config;
        rd::gpu::FieldEngine eng(ref.geo, {}, result.grid.sx, result.grid.sy, result.grid.sz, fo);
        eng.set_grid(result.grid);
        eng.compute(false);
        f = eng.download(false);
      } else
#endif
        f = rd::compute_field_cpu(ref.geo, result.grid, {}, rd::FieldOptions{false, a->threads});
      rd::ResampleOptions ro;
      ro.interp = rd::Interp::cubic;
      ro.pad = pad;
      ro.threads = a->threads;
      const rd::Volume warped = rd::resample_cpu(flo, f, ro);
      rd::write_volume(a->res, warped);
      final_info["nmi_reg_measure"] = rd::nmi_like_reg_measure(ref, warped);
    }
    lap("write");
    const rd::JacobianStats js = rd::voxel_jacobian_stats(ref.geo, result.grid, rmask, a->threads);
    final_info["min_jacobian"] = js.min;
    final_info["max_jacobian"] = js.max;
    final_info["folded_voxels"] = js.folded;
    if (!result.levels.empty()) final_info["objective"] = terms_json(result.levels.back().final_terms);
    lap("jacobian");
    if (tty || a->c.verbose)
      std::fprintf(stderr, "registration %.2f s; min Jacobian determinant %.4f (%zu folded voxels)\n", result.seconds, js.min,
                   js.folded);
    if (a->c.json) {
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
      nlohmann::json j = {{"command", "register"},
                          {"backend", gpu ? "gpu" : "cpu"},
                          {"device", gpu ? backend.device.name : ""},
                          {"kernel", variant},
                          {"genome", kernel.genome},
                          {"similarity", nmi ? "nmi" : "ssd"},
                          {"initial_transformation", init},
                          {"cpp", a->cpp},
                          {"res", a->res},
                          {"levels", levels},
                          {"final", final_info},
                          {"register_seconds", result.seconds},
                          {"times_ms", times}};
      std::cout << j.dump(2) << "\n";
    }
  });
}
