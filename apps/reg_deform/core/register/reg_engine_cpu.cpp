// The CPU backend of `register` (the reference): every stage on the host, all cores.
#include <chrono>
#include <cmath>
#include <limits>

#include "core/register/reg_adjoint_cpu.hpp"
#include "core/register/reg_engine.hpp"
#include "core/register/reg_field_cpu.hpp"
#include "core/register/reg_measure_cpu.hpp"
#include "core/register/reg_measure_grad_cpu.hpp"
#include "core/register/reg_penalty_cpu.hpp"
#include "core/register/reg_warp_cpu.hpp"

namespace evk::reg_deform {

namespace {
class CpuEngine final : public LevelEngine {
 public:
  explicit CpuEngine(const LevelInput& in) : in_(in), grid_(in.grid) {
    const std::size_t nv = in_.ref.geo.voxels();
    field_.resize(3 * nv);
    warped_.resize(nv);
    wgrad_.resize(3 * nv);
    vgrad_.resize(3 * nv);
    node_.resize(3 * grid_.points());
    v_.resize(3 * grid_.points());
    v_.current = grid_.data;
  }

  double objective() override {
    sync_grid();
    warp(false);
    ObjectiveTerms t;
    if (in_.similarity == Similarity::nmi) {
      histogram();
      t.measure = hist_.nmi();
    } else {
      t.measure = ssd_value_cpu(in_.ref.data.data(), warped_.data(), in_.ref_mask, warped_.size(), &n_valid_, in_.threads);
    }
    t.similarity = in_.weights.similarity * t.measure;
    if (in_.weights.bending > 0) t.bending = in_.weights.bending * bending_energy(grid_, in_.threads);
    if (in_.weights.linear > 0) t.linear = in_.weights.linear * linear_energy(grid_, in_.threads);
    if (in_.weights.jacobian > 0) t.jacobian = in_.weights.jacobian * jacobian_log_penalty(grid_, in_.threads);
    t.total = t.similarity - t.bending - t.linear - t.jacobian;
    if (std::isnan(t.total)) t.total = -std::numeric_limits<double>::infinity();
    last_ = t;
    return t.total;
  }

  void gradient() override {
    sync_grid();
    warp(true);
    const std::size_t nv = warped_.size();
    if (in_.similarity == Similarity::nmi) {
      histogram();
      nmi_voxel_gradient_cpu(in_.ref.data.data(), warped_.data(), wgrad_.data(), in_.ref_mask, nv, hist_, vgrad_.data(),
                             in_.threads);
    } else {
      ssd_value_cpu(in_.ref.data.data(), warped_.data(), in_.ref_mask, nv, &n_valid_, in_.threads);
      ssd_voxel_gradient_cpu(in_.ref.data.data(), warped_.data(), wgrad_.data(), in_.ref_mask, nv, n_valid_,
                             vgrad_.data(), in_.threads);
    }
    spline_adjoint_cpu(in_.ref.geo, grid_, vgrad_.data(), node_.data(), in_.threads);
    for (double& g : node_) g *= in_.weights.similarity;
    if (in_.weights.bending > 0) bending_energy_gradient(grid_, in_.weights.bending, node_.data(), in_.threads);
    if (in_.weights.linear > 0) linear_energy_gradient(grid_, in_.weights.linear, node_.data(), in_.threads);
    if (in_.weights.jacobian > 0) jacobian_log_gradient(grid_, in_.weights.jacobian, node_.data(), in_.threads);
    for (std::size_t i = 0; i < node_.size(); ++i) v_.grad[i] = static_cast<float>(node_[i]);
  }

  double max_gradient_length() override { return v_.max_length(); }
  void scale_gradient(double f) override { v_.scale(f); }
  void conjugate(bool first) override { v_.conjugate(first); }
  void store_best() override { v_.store_best(); }
  void restore_best() override { v_.restore_best(); }
  void step_from_best(double scale) override { v_.step_from_best(scale); }
  Grid grid() override {
    sync_grid();
    return grid_;
  }
  double field_seconds() const override { return field_s_; }

 private:
  void sync_grid() { grid_.data = v_.current; }
  void warp(bool with_gradient) {
    const auto t0 = std::chrono::steady_clock::now();
    spline_field_cpu(in_.ref.geo, grid_, in_.ref_mask, field_.data(), in_.threads);
    field_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    warp_field_cpu(in_.flo, in_.flo_mask, in_.ref.geo, in_.ref_mask, field_.data(), warped_.data(),
                    with_gradient ? wgrad_.data() : nullptr, in_.threads);
  }
  void histogram() {
    nmi_counts_cpu(in_.ref.data.data(), warped_.data(), in_.ref_mask, warped_.size(), in_.bins + 4, counts_, in_.threads);
    nmi_from_counts(counts_, in_.bins + 4, hist_);
  }

  LevelInput in_;
  Grid grid_;
  HostVectors v_;
  std::vector<float> field_, warped_, wgrad_, vgrad_;
  std::vector<double> node_, counts_;
  NmiHistogram hist_;
  std::size_t n_valid_ = 0;
  double field_s_ = 0;
};
}  // namespace

std::unique_ptr<LevelEngine> make_cpu_engine(const LevelInput& in) { return std::make_unique<CpuEngine>(in); }

}  // namespace evk::reg_deform
