// The expert dense-field kernel as a GI problem: evolves kernels/original/reg_deform/field_expert.cu
// from its own seed; the paper's tile kernel stays the problem of `reg_deform gi` (gi_problem.cpp).
// Cases are those of the paper problem (gi_case_data); the reference is the CPU's dense field of
// every voxel (identity outside the mask), the output poisoned with NaN, the paper's penalties.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/field/field_cpu.hpp"
#include "core/kernel_config.hpp"
#include "evk/error.hpp"
#include "evk_kernels/reg_field_expert.hpp"
#include "gi/gi_problem.hpp"

#if defined(EVK_HAVE_CUDA)
#include "core/field/gpu_field.hpp"
#include "core/field/gpu_field_expert.hpp"
#include "evk/cuda_check.hpp"
#endif

namespace evk::reg_deform {

namespace {

#if defined(EVK_HAVE_CUDA)
class ExpertEvaluation final : public evk::gi::Evaluation {
 public:
  explicit ExpertEvaluation(const GiCaseData& d)
      : describe_(d.describe), dense_(d.mask.empty()), geo_(d.geo), ref_(compute_field_cpu(d.geo, d.grid, d.mask)) {
    grid_.upload(d.grid);
    tables_ = std::make_unique<gpu::ExpertTables>(geo_, d.grid.sx, d.grid.sy, d.grid.sz, grid_.gx, grid_.gy, grid_.gz);
    if (!d.mask.empty()) mask_.upload(d.mask.data(), d.mask.size());
    out_.resize(ref_.data.size());
    ref_dev_.upload(ref_.data.data(), ref_.data.size());
    EVK_CUDA(cudaDeviceSynchronize());
  }
  std::string describe() const override { return describe_ + " (dense field, " + std::to_string(geo_.voxels()) + " voxels)"; }
  double work_items() const override { return static_cast<double>(geo_.voxels()); }
  evk::gi::Properties properties() const override {
    return {{"voxels", static_cast<double>(geo_.voxels())}, {"spacing", 5}, {"dense", dense_ ? 1.0 : 0.0}};
  }
  void poison(cudaStream_t s) override {
    EVK_CUDA(cudaMemsetAsync(out_.get(), 0xff, out_.size() * sizeof(float), s));  // NaN everywhere
  }
  void launch(cudaKernel_t k, const evk::gi::Config& cfg, cudaStream_t s) override {
    gpu::ExpertLaunch a;
    a.control_points = grid_.data();
    a.gx = grid_.gx;
    a.gy = grid_.gy;
    a.tables = tables_.get();
    a.nx = geo_.nx;
    a.ny = geo_.ny;
    a.nz = geo_.nz;
    a.mask = mask_.size() ? mask_.get() : nullptr;
    a.vox2world = geo_.vox2world;
    a.field = out_.get();
    gpu::launch_expert(k, a, ExpertConfig::from_map(cfg), s);
  }
  evk::gi::Check check(cudaStream_t s) override {
    // planar x/y/z planes, every voxel compared (voxels outside a mask hold the identity)
    const std::size_t n = geo_.voxels();
    const long long planes = static_cast<long long>(n);
    const FieldDiff d =
        gpu::field_diff_gpu(out_.get(), {1, planes}, ref_dev_.get(), {1, planes}, nullptr, n, kTolerance, kWrong, diff_, s);
    return penalize(d, n);
  }

 private:
  std::string describe_;
  bool dense_ = false;
  Geometry geo_;
  Field ref_;
  gpu::DeviceGrid grid_;
  std::unique_ptr<gpu::ExpertTables> tables_;
  gpu::Buffer<std::uint8_t> mask_;
  gpu::Buffer<float> out_;
  gpu::Buffer<float> ref_dev_;
  gpu::Buffer<double> diff_;
};
#endif

class ExpertProblem final : public evk::gi::Problem {
 public:
  explicit ExpertProblem(const GiProblemOptions& o) : opt_(o), paper_(make_gi_problem(o)) {}
  std::string name() const override { return kExpertKernel; }
  std::string kernel_source() const override { return std::string(reg_field_expert().text()); }
  std::string kernel_entry() const override { return "reg_field_expert"; }
  std::vector<evk::gi::ConfigParam> config_params() const override {
    using K = evk::gi::ConfigParam::Kind;
    return {{"TILE_Y", K::number, {"8", "16", "32"}, "32", "rows of a block's 32 x TILE_Y tile (256 threads)"}};
  }
  std::vector<std::string> compile_options(const evk::gi::Config& cfg) const override {
    return ExpertConfig::from_map(cfg).compile_options();
  }
  // the same classes and class rule as the paper problem (one definition)
  std::vector<evk::gi::SizeClass> size_classes() const override { return paper_->size_classes(); }
  std::vector<std::string> property_names() const override { return paper_->property_names(); }
  std::string class_of(const evk::gi::Properties& request) const override { return paper_->class_of(request); }
  std::unique_ptr<evk::gi::Evaluation> make_evaluation(std::uint64_t seed, bool holdout,
                                                       const std::string& cls) const override {
    check_class(cls);
#if defined(EVK_HAVE_CUDA)
    return std::make_unique<ExpertEvaluation>(gi_case_data(seed, holdout, cls, opt_));
#else
    (void)seed;
    (void)holdout;
    throw std::runtime_error("reg_deform_expert: built without CUDA, no GPU evaluation");
#endif
  }
  std::string launch_bounds_threads() const override { return "256"; }
  int default_population() const override { return 300; }
  int default_generations() const override { return 50; }

 private:
  GiProblemOptions opt_;
  std::unique_ptr<evk::gi::Problem> paper_;
};

}  // namespace

std::unique_ptr<evk::gi::Problem> make_expert_gi_problem(const GiProblemOptions& opt) {
  return std::make_unique<ExpertProblem>(opt);
}

}  // namespace evk::reg_deform
