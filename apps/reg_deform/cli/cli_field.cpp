// `reg_deform field`, `reg_deform resample` and `reg_deform jacobian`: parsing and printing (the jobs
// are compute.hpp's; the Jacobian's is core/register/reg_jacobian_cpu.hpp's).
#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "core/register/reg_jacobian_cpu.hpp"
#include "io/nifti_io.hpp"

namespace evk::reg_deform {

namespace {

struct FieldArgs {
  CommonOptions c;
  std::string ref, cpp, out, mask;
  bool displacement = false;
  int nifti = 1;
};

// The field's --json keys of the GPU path and its active voxels.
void field_info(nlohmann::json& j, const Plan& p, const FieldResult& r) {
  if (p.gpu()) {
    j["gpu_path"] = r.gpu_path;
    j["kernel_origin"] = r.kernel_origin;
  }
  j["active_voxels"] = r.active_voxels;
}

void run_field(const FieldArgs& a) {
  Stages st{a.c};
  check_not_an_input(a.out, {a.ref, a.cpp, a.mask});
  const Volume ref = read_volume(a.ref);
  const Grid grid = read_grid(a.cpp, ref.geo);
  const Plan p = plan_verbose(a.c, field_request(ref.geo, grid));
  const Mask mask = a.mask.empty() ? Mask{} : read_mask(a.mask, ref.geo);
  { AtomicOutput probe(a.out); }  // unwritable output: fail before computing
  st.done("read");
  const FieldResult r = compute_field({.ref = ref.geo, .grid = grid, .mask = &mask, .displacement = a.displacement}, p);
  if (p.gpu()) verbose_line(a.c, "kernel loaded from " + r.kernel_origin);
  st.done("compute");
  write_field(a.out, r.field, {a.nifti});
  st.done("write");
  auto j = summary("field", p, st);
  field_info(j, p, r);
  j["output"] = a.out;
  j["dims"] = {ref.geo.nx, ref.geo.ny, ref.geo.nz};
  j["spacing_voxels"] = {grid.sx, grid.sy, grid.sz};
  j["displacement"] = a.displacement;
  print_json(j, a.c);
}

struct ResampleArgs {
  CommonOptions c;
  std::string ref, flo, trans, out, interp = "linear";
  float pad = 0;
  int nifti = 1;
};

void run_resample(const ResampleArgs& a) {
  Stages st{a.c};
  check_not_an_input(a.out, {a.ref, a.flo, a.trans});
  ResampleOptions ro;
  ro.interp = parse_interp(a.interp);
  ro.pad = a.pad;
  const Volume ref = read_volume(a.ref);
  const Volume flo = read_volume(a.flo);
  const Transformation t = read_transformation(a.trans, ref.geo);
  const bool grid_in = t.kind == TransKind::grid;
  const Plan p = plan_verbose(a.c, grid_in ? field_request(ref.geo, t.grid) : Request{});
  { AtomicOutput probe(a.out); }  // unwritable output: fail before computing
  st.done("read");
  const ResampleResult r = resample({.ref = ref.geo, .flo = flo, .trans = t, .options = ro}, p);
  if (grid_in && p.gpu()) verbose_line(a.c, "kernel loaded from " + r.field.kernel_origin);
  if (grid_in) st.done_part("field", r.field_ms);
  st.done("resample");
  write_volume(a.out, r.image, {a.nifti});
  st.done("write");
  auto j = summary("resample", p, st);
  if (grid_in) field_info(j, p, r.field);
  j["output"] = a.out;
  j["interp"] = to_string(ro.interp);
  j["transformation"] = grid_in ? "grid" : t.kind == TransKind::displacement ? "displacement" : "deformation";
  print_json(j, a.c);
}

struct JacobianArgs {
  std::string ref, cpp, mask;
  int threads = 0;
  bool json = false;
};

// The determinant of the Jacobian of any tool's control-point grid (NiftyReg layout: ours, reg_f3d's)
// at every reference voxel, as `register` reports it for its own.
void run_jacobian(const JacobianArgs& a) {
  const Volume ref = read_volume(a.ref);
  const Grid grid = read_grid(a.cpp, ref.geo);
  const Mask mask = a.mask.empty() ? Mask{} : read_mask(a.mask, ref.geo);
  const JacobianStats js = voxel_jacobian_stats(ref.geo, grid, mask, a.threads);
  if (a.json) {
    std::printf("%s\n", nlohmann::json{{"command", "jacobian"}, {"cpp", a.cpp}, {"min_jacobian", js.min}, {"max_jacobian", js.max},
                                       {"folded_voxels", js.folded}, {"voxels", js.voxels}}
                            .dump(2)
                            .c_str());
    return;
  }
  std::printf("min Jacobian determinant %.4f, max %.4f; %zu of %zu voxels folded (determinant <= 0)\n", js.min, js.max,
              js.folded, js.voxels);
}

}  // namespace

void add_jacobian_command(CLI::App& app) {
  auto a = std::make_shared<JacobianArgs>();
  auto* cmd = app.add_subcommand("jacobian", "Jacobian determinant of a control-point grid at every reference voxel: "
                                             "min, max and folded voxels (any tool's NiftyReg cpp)");
  cmd->add_option("--ref", a->ref, "Reference image (NIfTI)")->required();
  cmd->add_option("--cpp", a->cpp, "Control-point grid (NIfTI, NiftyReg cpp)")->required();
  cmd->add_option("--mask", a->mask, "Reference mask: only voxels inside are counted");
  cmd->add_option("--threads", a->threads, "CPU threads (0: all cores)")->capture_default_str();
  cmd->add_flag("--json", a->json, "Machine-readable summary on stdout");
  cmd->callback([a] { run_jacobian(*a); });
}

void add_field_command(CLI::App& app) {
  auto a = std::make_shared<FieldArgs>();
  auto* cmd = app.add_subcommand("field", "Deformation (or displacement) field of a control-point grid");
  cmd->add_option("--ref", a->ref, "Reference image (NIfTI)")->required();
  cmd->add_option("--cpp", a->cpp, "Control-point grid (NIfTI, NiftyReg cpp)")->required();
  cmd->add_option("-o,--output", a->out, "Output field (.nii or .nii.gz)")->required();
  cmd->add_flag("--displacement", a->displacement, "Write a displacement field (intent_p1 1) instead of positions");
  cmd->add_option("--mask", a->mask, "Reference mask: voxels outside get the identity");
  cmd->add_option("--nifti", a->nifti, "Output NIfTI version (1 or 2)")->check(CLI::IsMember({1, 2}));
  add_common_options(cmd, a->c);
  cmd->callback([a] { run_field(*a); });
}

void add_resample_command(CLI::App& app) {
  auto a = std::make_shared<ResampleArgs>();
  auto* cmd = app.add_subcommand("resample", "Resample a floating image into the reference through a transformation");
  cmd->add_option("--ref", a->ref, "Reference image (NIfTI)")->required();
  cmd->add_option("--flo", a->flo, "Floating image (NIfTI)")->required();
  cmd->add_option("--trans", a->trans, "Deformation field, displacement field or control-point grid (by intent_p1)")
      ->required();
  cmd->add_option("-o,--output", a->out, "Output image (.nii or .nii.gz)")->required();
  cmd->add_option("--interp", a->interp, "nearest, linear or cubic (B-spline)")->capture_default_str();
  cmd->add_option("--pad", a->pad, "Value outside the floating image")->capture_default_str();
  cmd->add_option("--nifti", a->nifti, "Output NIfTI version (1 or 2)")->check(CLI::IsMember({1, 2}));
  add_common_options(cmd, a->c);
  cmd->callback([a] { run_resample(*a); });
}

}  // namespace evk::reg_deform
