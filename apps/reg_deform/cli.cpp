// reg_deform command line: argument parsing and printing only; the work lives in core/ and io/.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "evk/atomic_file.hpp"
#include "evk/cli.hpp"
#include "evk/gi/cli.hpp"
#include "gi_problem.hpp"
#include "evk/error.hpp"
#include "field_cpu.hpp"
#include "active.hpp"
#include "affine_text.hpp"
#include "cli_affine.hpp"
#include "cli_register.hpp"
#include "grid_make.hpp"
#include "kernel_config.hpp"
#include "nifti_io.hpp"
#include "png_slice.hpp"
#include "random_case.hpp"
#include "resample_cpu.hpp"
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include "evk/cuda_check.hpp"
#include "gpu_field.hpp"
#endif

namespace rd = evk::reg_deform;
namespace fs = std::filesystem;

namespace {

// Per-stage wall times for --verbose and --json.
struct Stages {
  const evk::CommonOptions& opt;
  nlohmann::json times = nlohmann::json::object();
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  void done(const std::string& stage) {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - t0).count();
    times[stage] = ms;
    char buf[128];
    std::snprintf(buf, sizeof buf, "  %-10s %9.2f ms", stage.c_str(), ms);
    evk::verbose_line(opt, buf);
    t0 = now;
  }
};

// The backend and, on the GPU, the kernel variant (registry + overlay; a genome is applied to the
// GI problem's kernel and compiled through NVRTC with its configuration).
struct Plan {
  evk::CommonOptions opt;
  evk::BackendChoice backend;
  std::string variant = "cpu";
  rd::KernelChoice kernel;
};
Plan plan_for(const evk::CommonOptions& opt, const evk::Request& request = {}) {
  Plan p;
  p.opt = opt;
  p.backend = evk::choose_backend(opt);
  const bool file = opt.kernel != "auto" && opt.kernel != "original" && opt.kernel != "evolved" && opt.kernel != "expert";
  if (p.backend.backend == evk::Backend::gpu) {
    evk::Registry reg = rd::make_registry();
    const auto overlay = evk::default_overlay_dir();
    if (!overlay.empty()) reg.load_overlay(overlay);
    const auto& d = p.backend.device;
    rd::KernelPick k = rd::pick_kernel(reg, evk::DeviceKey{d.cc(), d.name}, opt.kernel, request);
    p.kernel = k.kernel;
    p.variant = k.variant;
#if defined(EVK_HAVE_CUDA)
    EVK_CUDA(cudaSetDevice(d.index));
#endif
  } else if (file) {
    // A genome file is still checked on the CPU backend (bad input is reported, never ignored).
    evk::Registry reg = rd::make_registry();
    rd::pick_kernel(reg, evk::DeviceKey{}, opt.kernel, request);
    p.variant = "cpu (genome " + opt.kernel + " checked, not used by the CPU reference)";
  }
  std::string k = p.variant;
  if (p.backend.backend == evk::Backend::gpu) k += ", " + p.kernel.describe();
  evk::verbose_line(opt, "backend: " + std::string(p.backend.backend == evk::Backend::gpu ? "gpu" : "cpu") + " (" +
                             p.backend.reason + "), kernel " + k);
  return p;
}

nlohmann::json summary(const std::string& cmd, const Plan& p, const Stages& st) {
  return {{"command", cmd},
          {"backend", p.backend.backend == evk::Backend::gpu ? "gpu" : "cpu"},
          {"device", p.backend.backend == evk::Backend::gpu ? p.backend.device.name : ""},
          {"kernel", p.variant},
          {"genome", p.kernel.genome},
          {"times_ms", st.times}};
}

// Field of a grid on the chosen backend.
rd::Field field_of(const Plan& p, const rd::Geometry& ref, const rd::Grid& grid, const rd::Mask& mask, bool disp,
                   nlohmann::json& info) {
#if defined(EVK_HAVE_CUDA)
  if (p.backend.backend == evk::Backend::gpu) {
    rd::gpu::FieldOptions fo;
    fo.config = p.kernel.config;
    fo.source = p.kernel.source;
    fo.expert = p.kernel.expert;
    fo.expert_config = p.kernel.expert_config;
    rd::gpu::FieldEngine eng(ref, mask, grid.sx, grid.sy, grid.sz, fo);
    eng.set_grid(grid);
    eng.compute(disp);
    info["gpu_path"] = eng.path();
    info["kernel_origin"] = eng.kernel_origin();
    evk::verbose_line(p.opt, "kernel loaded from " + eng.kernel_origin());
    info["active_voxels"] = eng.active_voxels();
    return eng.download(disp);
  }
#endif
  rd::FieldOptions fo;
  fo.displacement = disp;
  info["active_voxels"] = rd::count_active(ref, mask);
  return rd::compute_field_cpu(ref, grid, mask, fo);
}

void print_json(const nlohmann::json& j, const evk::CommonOptions& opt) {
  if (opt.json) std::cout << j.dump(2) << "\n";
}

}  // namespace


int main(int argc, char** argv) {
  auto app = evk::make_app("reg_deform", "Cubic B-spline deformation fields and resampling for brain MRI (NiftyReg's kernel, genetically improved per GPU)");
  evk::add_devices_command(*app, "reg_deform", rd::make_registry);

  // ---- field ----
  struct FieldArgs {
    evk::CommonOptions c;
    std::string ref, cpp, out, mask;
    bool displacement = false;
    int nifti = 1;
  };
  auto fa = std::make_shared<FieldArgs>();
  auto* field = app->add_subcommand("field", "Deformation (or displacement) field of a control-point grid");
  field->add_option("--ref", fa->ref, "Reference image (NIfTI)")->required();
  field->add_option("--cpp", fa->cpp, "Control-point grid (NIfTI, NiftyReg cpp)")->required();
  field->add_option("-o,--output", fa->out, "Output field (.nii or .nii.gz)")->required();
  field->add_flag("--displacement", fa->displacement, "Write a displacement field (intent_p1 1) instead of positions");
  field->add_option("--mask", fa->mask, "Reference mask: voxels outside get the identity");
  field->add_option("--nifti", fa->nifti, "Output NIfTI version (1 or 2)")->check(CLI::IsMember({1, 2}));
  evk::add_common_options(field, fa->c);
  field->callback([fa] {
    Stages st{fa->c};
    evk::check_not_an_input(fa->out, {fa->ref, fa->cpp, fa->mask});
    const rd::Volume ref = rd::read_volume(fa->ref);
    const rd::Grid grid = rd::read_grid(fa->cpp, ref.geo);
    Plan p = plan_for(fa->c, rd::make_request(ref.geo.nx, ref.geo.ny, ref.geo.nz, grid.sx, grid.sy, grid.sz));
    const rd::Mask mask = fa->mask.empty() ? rd::Mask{} : rd::read_mask(fa->mask, ref.geo);
    { evk::AtomicOutput probe(fa->out); }  // unwritable output: fail before computing
    st.done("read");
    nlohmann::json info = nlohmann::json::object();
    const rd::Field f = field_of(p, ref.geo, grid, mask, fa->displacement, info);
    st.done("compute");
    rd::write_field(fa->out, f, {fa->nifti});
    st.done("write");
    auto j = summary("field", p, st);
    j.update(info);
    j["output"] = fa->out;
    j["dims"] = {ref.geo.nx, ref.geo.ny, ref.geo.nz};
    j["spacing_voxels"] = {grid.sx, grid.sy, grid.sz};
    j["displacement"] = fa->displacement;
    print_json(j, fa->c);
  });

  // ---- resample ----
  struct ResampleArgs {
    evk::CommonOptions c;
    std::string ref, flo, trans, out, interp = "linear";
    float pad = 0;
    int nifti = 1;
  };
  auto ra = std::make_shared<ResampleArgs>();
  auto* res = app->add_subcommand("resample", "Resample a floating image into the reference through a transformation");
  res->add_option("--ref", ra->ref, "Reference image (NIfTI)")->required();
  res->add_option("--flo", ra->flo, "Floating image (NIfTI)")->required();
  res->add_option("--trans", ra->trans, "Deformation field, displacement field or control-point grid (by intent_p1)")
      ->required();
  res->add_option("-o,--output", ra->out, "Output image (.nii or .nii.gz)")->required();
  res->add_option("--interp", ra->interp, "nearest, linear or cubic (B-spline)")->capture_default_str();
  res->add_option("--pad", ra->pad, "Value outside the floating image")->capture_default_str();
  res->add_option("--nifti", ra->nifti, "Output NIfTI version (1 or 2)")->check(CLI::IsMember({1, 2}));
  evk::add_common_options(res, ra->c);
  res->callback([ra] {
    Stages st{ra->c};
    evk::check_not_an_input(ra->out, {ra->ref, ra->flo, ra->trans});
    rd::ResampleOptions ro;
    ro.interp = rd::parse_interp(ra->interp);
    ro.pad = ra->pad;
    const rd::Volume ref = rd::read_volume(ra->ref);
    const rd::Volume flo = rd::read_volume(ra->flo);
    rd::Transformation t = rd::read_transformation(ra->trans, ref.geo);
    const bool grid_in = t.kind == rd::TransKind::grid;
    Plan p = plan_for(ra->c, grid_in ? rd::make_request(ref.geo.nx, ref.geo.ny, ref.geo.nz, t.grid.sx, t.grid.sy, t.grid.sz)
                                     : evk::Request{});
    { evk::AtomicOutput probe(ra->out); }  // unwritable output: fail before computing
    st.done("read");
    nlohmann::json info = nlohmann::json::object();
    rd::Field f = t.kind == rd::TransKind::grid ? field_of(p, ref.geo, t.grid, {}, false, info) : std::move(t.field);
    if (t.kind == rd::TransKind::grid) st.done("field");
    rd::Volume out;
#if defined(EVK_HAVE_CUDA)
    if (p.backend.backend == evk::Backend::gpu) out = rd::gpu::resample(flo, f, ro);
    else
#endif
      out = rd::resample_cpu(flo, f, ro);
    st.done("resample");
    rd::write_volume(ra->out, out, {ra->nifti});
    st.done("write");
    auto j = summary("resample", p, st);
    j.update(info);
    j["output"] = ra->out;
    j["interp"] = rd::to_string(ro.interp);
    j["transformation"] = t.kind == rd::TransKind::grid ? "grid" : t.kind == rd::TransKind::displacement ? "displacement" : "deformation";
    print_json(j, ra->c);
  });

  // ---- grid ----
  struct GridArgs {
    evk::CommonOptions c;
    std::string ref, out, affine;
    double spacing = 5, perturb = 0;
    std::uint64_t seed = 1;
    int nifti = 1;
  };
  auto ga = std::make_shared<GridArgs>();
  auto* grid = app->add_subcommand("grid", "Identity or affine control-point grid for a reference (NiftyReg layout)");
  grid->add_option("--ref", ga->ref, "Reference image (NIfTI)")->required();
  grid->add_option("-o,--output", ga->out, "Output grid (.nii or .nii.gz)")->required();
  grid->add_option("--spacing", ga->spacing, "Control-point spacing in reference voxels")->capture_default_str();
  grid->add_option("--affine", ga->affine, "4x4 text matrix (reference world -> floating world)");
  grid->add_option("--perturb", ga->perturb, "Move every control point randomly by up to this many mm per axis");
  grid->add_option("--seed", ga->seed, "Seed for --perturb")->capture_default_str();
  grid->add_option("--nifti", ga->nifti, "Output NIfTI version (1 or 2)")->check(CLI::IsMember({1, 2}));
  evk::add_common_options(grid, ga->c);
  grid->callback([ga] {
    Stages st{ga->c};
    if (!(ga->perturb >= 0)) evk::input_error("--perturb", "must be >= 0");
    evk::check_not_an_input(ga->out, {ga->ref, ga->affine});
    const rd::Volume ref = rd::read_volume(ga->ref);
    const rd::Mat44 aff = ga->affine.empty() ? rd::Mat44::identity() : rd::read_affine(ga->affine);
    st.done("read");
    rd::Grid g = rd::make_grid(ref.geo, ga->spacing, aff);
    if (ga->perturb > 0) rd::perturb_grid(g, ga->perturb, ga->seed);
    st.done("make");
    rd::write_grid(ga->out, g, {ga->nifti});
    st.done("write");
    nlohmann::json j = {{"command", "grid"}, {"output", ga->out}, {"dims", {g.geo.nx, g.geo.ny, g.geo.nz}},
                        {"spacing_voxels", ga->spacing}, {"times_ms", st.times}};
    print_json(j, ga->c);
  });

  // ---- random-case ----
  struct CaseArgs {
    evk::CommonOptions c;
    std::uint64_t seed = 1;
    std::string out;
    int size = 217;
  };
  auto ca = std::make_shared<CaseArgs>();
  auto* rc = app->add_subcommand("random-case", "The paper's random test case: noise ellipsoid, mask and cpp");
  rc->add_option("--seed", ca->seed, "Seed (deterministic)")->required();
  rc->add_option("-o,--output", ca->out, "Output directory (image.nii.gz, mask.nii.gz, cpp.nii.gz)")->required();
  rc->add_option("--size", ca->size, "Cube side in voxels")->capture_default_str()->check(CLI::Range(8, 1024));
  evk::add_common_options(rc, ca->c);
  rc->callback([ca] {
    Stages st{ca->c};
    std::error_code ec;
    fs::create_directories(ca->out, ec);
    if (ec || !fs::is_directory(ca->out)) evk::input_error(ca->out, "cannot create output directory");
    rd::RandomCaseOptions o;
    o.seed = ca->seed;
    o.size = ca->size;
    const rd::RandomCase c = rd::make_random_case(o);
    st.done("make");
    const fs::path dir = ca->out;
    rd::write_volume(dir / "image.nii.gz", c.image);
    rd::write_mask(dir / "mask.nii.gz", c.image.geo, c.mask);
    rd::write_grid(dir / "cpp.nii.gz", c.grid);
    st.done("write");
    std::size_t active = 0;
    for (auto m : c.mask) active += m != 0;
    nlohmann::json j = {{"command", "random-case"}, {"seed", ca->seed}, {"size", ca->size},
                        {"active_voxels", active}, {"output", ca->out}, {"times_ms", st.times}};
    if (ca->c.json) print_json(j, ca->c);
    else std::printf("random case seed %llu: %d^3, %zu active voxels -> %s\n",
                     static_cast<unsigned long long>(ca->seed), ca->size, active, ca->out.c_str());
  });

  // ---- snapshot (demo) ----
  struct SnapArgs {
    evk::CommonOptions c;
    std::string ref, flo, trans, out;
    double spacing = 5;
  };
  auto sa = std::make_shared<SnapArgs>();
  auto* snap = app->add_subcommand("snapshot", "PNG of a middle slice before/after a transformation, grid overlaid");
  snap->add_option("--ref", sa->ref, "Reference image (NIfTI)")->required();
  snap->add_option("--flo", sa->flo, "Floating image (NIfTI): the 'before' panel")->required();
  snap->add_option("--trans", sa->trans, "Deformation/displacement field or control-point grid")->required();
  snap->add_option("-o,--output", sa->out, "Output PNG")->required();
  snap->add_option("--spacing", sa->spacing, "Grid line spacing in floating voxels")->capture_default_str();
  evk::add_common_options(snap, sa->c);
  snap->callback([sa] {
    Stages st{sa->c};
    evk::check_not_an_input(sa->out, {sa->ref, sa->flo, sa->trans});
    const rd::Volume ref = rd::read_volume(sa->ref);
    const rd::Volume flo = rd::read_volume(sa->flo);
    rd::Transformation t = rd::read_transformation(sa->trans, ref.geo);
    rd::Field f = t.kind == rd::TransKind::grid ? rd::compute_field_cpu(ref.geo, t.grid) : std::move(t.field);
    const rd::Volume after = rd::resample_cpu(flo, f);
    rd::write_snapshot(sa->out, flo, after, f, sa->spacing);
    st.done("snapshot");
    print_json({{"command", "snapshot"}, {"output", sa->out}, {"times_ms", st.times}}, sa->c);
  });

  rd::add_affine_command(*app);
  add_register_command(*app);
  evk::gi::add_gi_command(
      *app,
      [] {
        rd::GiProblemOptions o;  // the head classes take the shared brains' geometry through the NIfTI reader
        o.read_geometry = [](const std::string& path) { return rd::read_volume(path).geo; };
        return evk::reg_deform::make_gi_problem(o);
      },
      rd::make_registry);
  evk::gi::add_gi_command(
      *app,
      [] {
        rd::GiProblemOptions o;
        o.read_geometry = [](const std::string& path) { return rd::read_volume(path).geo; };
        return evk::reg_deform::make_expert_gi_problem(o);
      },
      {}, "gi-expert",
      "Genetic improvement of the expert dense-field kernel (problem reg_deform_expert, seed "
      "kernels/original/reg_deform/field_expert.cu): the same commands as gi");
  // reg_deform's --kernel also takes "expert" (the expert dense-field kernel; kernel_config.hpp)
  for (CLI::App* sub : app->get_subcommands({}))
    if (CLI::Option* k = sub->get_option_no_throw("--kernel"))
      k->description("Field kernel: auto (evolved for this GPU when available), original (the paper's tile kernel), "
                     "evolved, expert (the expert dense-field kernel), or a genome FILE (of either kernel)");
  return evk::run_cli(*app, argc, argv);
}
