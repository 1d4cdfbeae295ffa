// `reg_deform grid`, `random-case` and `snapshot`: test inputs and the demo's pictures (CPU only).
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "core/field/field_cpu.hpp"
#include "core/field/grid_make.hpp"
#include "core/field/random_case.hpp"
#include "core/field/resample_cpu.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/affine_text.hpp"
#include "io/nifti_io.hpp"
#include "io/png_slice.hpp"

namespace evk::reg_deform {

namespace {

struct GridArgs {
  CommonOptions c;
  std::string ref, out, affine;
  double spacing = 5, perturb = 0;
  std::uint64_t seed = 1;
  int nifti = 1;
};

void run_grid(const GridArgs& a) {
  Stages st{a.c};
  if (!(a.perturb >= 0)) input_error("--perturb", "must be >= 0");
  check_not_an_input(a.out, {a.ref, a.affine});
  const Volume ref = read_volume(a.ref);
  const Mat44 aff = a.affine.empty() ? Mat44::identity() : read_affine(a.affine);
  st.done("read");
  Grid g = make_grid(ref.geo, a.spacing, aff);
  if (a.perturb > 0) perturb_grid(g, a.perturb, a.seed);
  st.done("make");
  write_grid(a.out, g, {a.nifti});
  st.done("write");
  nlohmann::json j = {{"command", "grid"}, {"output", a.out}, {"dims", {g.geo.nx, g.geo.ny, g.geo.nz}},
                      {"spacing_voxels", a.spacing}, {"times_ms", st.times}};
  print_json(j, a.c);
}

struct CaseArgs {
  CommonOptions c;
  std::uint64_t seed = 1;
  std::string out;
  int size = 217;
};

void run_random_case(const CaseArgs& a) {
  namespace fs = std::filesystem;
  Stages st{a.c};
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec || !fs::is_directory(a.out)) input_error(a.out, "cannot create output directory");
  RandomCaseOptions o;
  o.seed = a.seed;
  o.size = a.size;
  const RandomCase c = make_random_case(o);
  st.done("make");
  const fs::path dir = a.out;
  write_volume(dir / "image.nii.gz", c.image);
  write_mask(dir / "mask.nii.gz", c.image.geo, c.mask);
  write_grid(dir / "cpp.nii.gz", c.grid);
  st.done("write");
  std::size_t active = 0;
  for (auto m : c.mask) active += m != 0;
  nlohmann::json j = {{"command", "random-case"}, {"seed", a.seed}, {"size", a.size},
                      {"active_voxels", active}, {"output", a.out}, {"times_ms", st.times}};
  if (a.c.json) print_json(j, a.c);
  else std::printf("random case seed %llu: %d^3, %zu active voxels -> %s\n", static_cast<unsigned long long>(a.seed),
                   a.size, active, a.out.c_str());
}

struct SnapArgs {
  CommonOptions c;
  std::string ref, flo, trans, out;
  double spacing = 5;
};

void run_snapshot(const SnapArgs& a) {
  Stages st{a.c};
  check_not_an_input(a.out, {a.ref, a.flo, a.trans});
  const Volume ref = read_volume(a.ref);
  const Volume flo = read_volume(a.flo);
  Transformation t = read_transformation(a.trans, ref.geo);
  const Field f = t.kind == TransKind::grid ? compute_field_cpu(ref.geo, t.grid) : std::move(t.field);
  const Volume after = resample_cpu(flo, f);
  write_snapshot(a.out, flo, after, f, a.spacing);
  st.done("snapshot");
  print_json({{"command", "snapshot"}, {"output", a.out}, {"times_ms", st.times}}, a.c);
}

}  // namespace

void add_grid_command(CLI::App& app) {
  auto a = std::make_shared<GridArgs>();
  auto* cmd = app.add_subcommand("grid", "Identity or affine control-point grid for a reference (NiftyReg layout)");
  cmd->add_option("--ref", a->ref, "Reference image (NIfTI)")->required();
  cmd->add_option("-o,--output", a->out, "Output grid (.nii or .nii.gz)")->required();
  cmd->add_option("--spacing", a->spacing, "Control-point spacing in reference voxels")->capture_default_str();
  cmd->add_option("--affine", a->affine, "4x4 text matrix (reference world -> floating world)");
  cmd->add_option("--perturb", a->perturb, "Move every control point randomly by up to this many mm per axis");
  cmd->add_option("--seed", a->seed, "Seed for --perturb")->capture_default_str();
  cmd->add_option("--nifti", a->nifti, "Output NIfTI version (1 or 2)")->check(CLI::IsMember({1, 2}));
  add_common_options(cmd, a->c);
  cmd->callback([a] { run_grid(*a); });
}

void add_random_case_command(CLI::App& app) {
  auto a = std::make_shared<CaseArgs>();
  auto* cmd = app.add_subcommand("random-case", "The paper's random test case: noise ellipsoid, mask and cpp");
  cmd->add_option("--seed", a->seed, "Seed (deterministic)")->required();
  cmd->add_option("-o,--output", a->out, "Output directory (image.nii.gz, mask.nii.gz, cpp.nii.gz)")->required();
  cmd->add_option("--size", a->size, "Cube side in voxels")->capture_default_str()->check(CLI::Range(8, 1024));
  add_common_options(cmd, a->c);
  cmd->callback([a] { run_random_case(*a); });
}

void add_snapshot_command(CLI::App& app) {
  auto a = std::make_shared<SnapArgs>();
  auto* cmd = app.add_subcommand("snapshot", "PNG of a middle slice before/after a transformation, grid overlaid");
  cmd->add_option("--ref", a->ref, "Reference image (NIfTI)")->required();
  cmd->add_option("--flo", a->flo, "Floating image (NIfTI): the 'before' panel")->required();
  cmd->add_option("--trans", a->trans, "Deformation/displacement field or control-point grid")->required();
  cmd->add_option("-o,--output", a->out, "Output PNG")->required();
  cmd->add_option("--spacing", a->spacing, "Grid line spacing in floating voxels")->capture_default_str();
  add_common_options(cmd, a->c);
  cmd->callback([a] { run_snapshot(*a); });
}

}  // namespace evk::reg_deform
