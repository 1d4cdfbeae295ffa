// reg_deform as a GI problem (gi/include/evk/gi/problem.hpp): the paper's tile kernel, its six
// configuration macros + block size, the CPU field on the active tiles as reference, the paper's
// penalties, and cases in three size classes: `paper` (a new random case per seed: the deformed
// white-noise sphere in a 217^3 cube), `head1mm` and `head2mm` (dense whole-head volumes at 1 and
// 2 mm: the shared brains' geometry when ../shared/data is present, else the same sizes, with a grid
// at spacing 5 perturbed by up to 5 mm per axis, as `reg_deform grid --perturb 5` makes it).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "core/field/field_diff.hpp"
#include "core/types.hpp"
#include "evk/gi/problem.hpp"

namespace evk::reg_deform {

struct GiProblemOptions {
  int case_size = 217;  // random-case cube side
  // The brains' directory parent (holding brain/): the GI cases' data directory. Empty:
  // ../shared/data (beside a checkout, relative to the working directory).
  std::filesystem::path shared_data;
  // Reads a volume's geometry (the tool passes its NIfTI reader; core has none). Unset: the head
  // classes use synthetic geometries of the brains' sizes.
  std::function<Geometry(const std::string& path)> read_geometry;
};
std::filesystem::path gi_shared_data_dir(const GiProblemOptions& opt);

// What case (seed, holdout) of a class is (CPU only): hold-out cases use odd, training cases even
// case seeds, so they never overlap.
struct GiCaseSpec {
  std::string size_class;
  std::uint64_t seed = 0;
  bool holdout = false;
  std::uint64_t case_seed = 0;  // random case / grid perturbation seed
  std::string head;             // head classes: the brain file under brain/ whose geometry is used
};
GiCaseSpec gi_case_spec(std::uint64_t seed, bool holdout, const std::string& size_class);  // InputError: unknown class

// The case itself: geometry, mask (empty: dense), grid, description.
struct GiCaseData {
  Geometry geo;
  Mask mask;
  Grid grid;
  std::string describe;
};
GiCaseData gi_case_data(std::uint64_t seed, bool holdout, const std::string& size_class, const GiProblemOptions& opt);

// The paper's penalty constant (its fitness unit was GPU clock ticks / 10).
inline constexpr double kPenaltyScale = 213748364.0;

// The paper's penalties for one run: worst voxel error > 0.001 -> K * (error + 0.1), capped at K;
// unset voxels -> K * their fraction; any error > 0.1 -> K * the fraction of such voxels.
evk::gi::Check penalize(double worst, std::size_t unset, std::size_t wrong, std::size_t bad_over_tol, std::size_t total);
// The same for the figures of field_diff_cpu / field_diff_gpu with tolerances kTolerance and kWrong.
inline constexpr double kTolerance = 0.001, kWrong = 0.1;
evk::gi::Check penalize(const FieldDiff& d, std::size_t total);

std::unique_ptr<evk::gi::Problem> make_gi_problem(const GiProblemOptions& opt = {});

// The expert dense-field kernel as a second GI problem ("reg_deform_expert",
// kernels/original/reg_deform/field_expert.cu, entry reg_field_expert, config TILE_Y): the same
// cases and size classes, the CPU's dense field (every voxel, identity outside the mask) as the
// reference, the same penalties; `reg_deform gi-expert ...` runs the GI commands on it.
std::unique_ptr<evk::gi::Problem> make_expert_gi_problem(const GiProblemOptions& opt = {});

}  // namespace evk::reg_deform
