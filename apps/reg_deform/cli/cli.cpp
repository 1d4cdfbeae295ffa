// reg_deform command line: the subcommands (one file each, commands.hpp) and the gi commands.
#include "cli/commands.hpp"
#include "evk/gi/cli.hpp"
#include "gi/gi_problem.hpp"
#include "gi/kernel_variant.hpp"
#include "io/nifti_io.hpp"

namespace rd = evk::reg_deform;

namespace {

// The GI problems read the head classes' geometry through the NIfTI reader (core has none) from
// the shared data directory (evk::data_dir()'s, or ../shared/data beside the checkout).
rd::GiProblemOptions gi_options() {
  rd::GiProblemOptions o;
  o.read_geometry = [](const std::string& path) { return rd::read_volume(path).geo; };
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  auto app = evk::make_app("reg_deform", "Cubic B-spline deformation fields and resampling for brain MRI (NiftyReg's kernel, genetically improved per GPU)");
  evk::add_devices_command(*app, "reg_deform", rd::make_registry);
  rd::add_field_command(*app);
  rd::add_resample_command(*app);
  rd::add_jacobian_command(*app);
  rd::add_grid_command(*app);
  rd::add_random_case_command(*app);
  rd::add_snapshot_command(*app);
  rd::add_affine_command(*app);
  rd::add_register_command(*app);
  rd::add_cohort_command(*app);
  evk::gi::add_gi_command(*app, [] { return rd::make_gi_problem(gi_options()); }, rd::make_registry);
  evk::gi::add_gi_command(
      *app, [] { return rd::make_expert_gi_problem(gi_options()); }, {}, "gi-expert",
      "Genetic improvement of the expert dense-field kernel (problem reg_deform_expert, seed "
      "kernels/original/reg_deform/field_expert.cu): the same commands as gi");
  // reg_deform's --kernel also takes "expert" (the expert dense-field kernel; kernel_variant.hpp)
  for (CLI::App* sub : app->get_subcommands({}))
    if (CLI::Option* k = sub->get_option_no_throw("--kernel"))
      k->description("Field kernel: auto (evolved for this GPU when available), original (the paper's tile kernel), "
                     "evolved, expert (the expert dense-field kernel), or a genome FILE (of either kernel)");
  return evk::run_cli(*app, argc, argv);
}
