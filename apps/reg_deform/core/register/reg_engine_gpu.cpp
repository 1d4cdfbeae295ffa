// The GPU backend of `register`: one level's images, masks, parameters and work buffers on the
// device; per evaluation the stages (reg_gpu_stages.hpp) run on the default stream and only scalars
// come back: after an objective its terms (one copy of a few doubles), after a gradient its largest
// control-point length (one double).
#include "core/register/reg_engine_gpu.hpp"
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cmath>
#include <limits>

#include "core/register/reg_gpu_stages.hpp"
#include "evk/cuda_check.hpp"

namespace evk::reg_deform {

namespace {
using gpu::Buffer;
namespace st = gpu_stage;

// The level's description without its voxel data (the images and masks live on the device).
LevelInput header_of(const LevelInput& in) {
  LevelInput h;
  h.ref.geo = in.ref.geo;
  h.flo.geo = in.flo.geo;
  h.grid = in.grid;
  h.similarity = in.similarity;
  h.bins = in.bins;
  h.weights = in.weights;
  h.threads = in.threads;
  return h;
}

// Slots of the device scalar block.
enum Slot { kNmi = 0, kHRef, kHWar, kHJoint, kTotal, kSsdSum, kSsdCount, kBending, kLinear, kJacobian, kMaxLen, kGG,
            kDGG, kSlots };

class GpuEngine final : public LevelEngine {
 public:
  GpuEngine(const LevelInput& in, const GpuEngineOptions& opt)
      : in_(header_of(in)),
        field_(in.ref.geo, in.ref_mask, in.grid.sx, in.grid.sy, in.grid.sz, opt.field),
        nv_(static_cast<long long>(in.ref.geo.voxels())),
        np_(static_cast<long long>(in.grid.points())),
        nb_(in.bins + 4) {
    field_.set_grid(in.grid);  // creates the control-point texture; later updates happen on the device
    ref_.upload(in.ref.data.data(), in.ref.data.size());
    flo_.upload(in.flo.data.data(), in.flo.data.size());
    if (!in.ref_mask.empty()) rmask_.upload(in.ref_mask.data(), in.ref_mask.size());
    if (!in.flo_mask.empty()) fmask_.upload(in.flo_mask.data(), in.flo_mask.size());
    const Geometry& g = in.ref.geo;
    warped_.resize(nv_);
    wgrad_.resize(3 * nv_);
    vgrad_.resize(3 * nv_);
    t1_.resize(3ull * g.nz * g.ny * in.grid.geo.nx);
    t2_.resize(3ull * g.nz * in.grid.geo.ny * in.grid.geo.nx);
    node_.resize(3 * np_);
    for (auto* b : {&current_, &best_, &grad_, &gprev_, &h_}) b->resize(3 * np_);
    current_.upload(in.grid.data.data(), in.grid.data.size());
    EVK_CUDA(cudaMemset(grad_.get(), 0, 3 * np_ * sizeof(float)));
    counts_.resize(static_cast<std::size_t>(nb_) * nb_);
    tmp_.resize(static_cast<std::size_t>(nb_) * nb_);
    prob_.resize(static_cast<std::size_t>(nb_) * nb_ + 2 * nb_);
    logp_.resize(static_cast<std::size_t>(nb_) * nb_ + 2 * nb_);
    partial_.resize(2 * st::kMaxBlocks);
    scalars_.resize(kSlots);
    EVK_CUDA(cudaMemset(scalars_.get(), 0, kSlots * sizeof(double)));
    adj_.resize(static_cast<std::size_t>(np_) * 18);
    EVK_CUDA(cudaEventCreate(&ev0_));
    EVK_CUDA(cudaEventCreate(&ev1_));
    EVK_CUDA(cudaDeviceSynchronize());
  }
  ~GpuEngine() override {
    cudaEventDestroy(ev0_);
    cudaEventDestroy(ev1_);
  }

  double objective() override {
    evaluate(false);
    if (in_.weights.bending > 0) st::penalty(0, current_.get(), in_.grid, adj_.get(), partial_.get(), slot(kBending), 0, nullptr);
    if (in_.weights.linear > 0) st::penalty(1, current_.get(), in_.grid, adj_.get(), partial_.get(), slot(kLinear), 0, nullptr);
    if (in_.weights.jacobian > 0)
      st::penalty(2, current_.get(), in_.grid, adj_.get(), partial_.get(), slot(kJacobian), 0, nullptr);
    EVK_CUDA_LAST();
    double s[kSlots];
    scalars_.download(s, kSlots);  // synchronises
    flush_field_time();
    ObjectiveTerms t;
    t.measure = in_.similarity == Similarity::nmi ? s[kNmi] : (s[kSsdCount] > 0 ? -s[kSsdSum] / s[kSsdCount] : 0.0);
    t.similarity = in_.weights.similarity * t.measure;
    const double npd = static_cast<double>(np_), interior = interior_nodes();
    if (in_.weights.bending > 0) t.bending = in_.weights.bending * s[kBending] / (3.0 * npd);
    if (in_.weights.linear > 0) t.linear = in_.weights.linear * s[kLinear] / (3.0 * npd);
    if (in_.weights.jacobian > 0 && interior > 0) t.jacobian = in_.weights.jacobian * s[kJacobian] / interior;
    t.total = t.similarity - t.bending - t.linear - t.jacobian;
    if (std::isnan(t.total)) t.total = -std::numeric_limits<double>::infinity();
    last_ = t;
    return t.total;
  }

  void gradient() override {
    evaluate(true);
    if (in_.similarity == Similarity::nmi)
      st::nmi_voxel_gradient(ref_.get(), warped_.get(), wgrad_.get(), rmask_.get(), nv_, nb_, logp_.get(), slot(kNmi),
                             vgrad_.get());
    else
      st::ssd_voxel_gradient(ref_.get(), warped_.get(), wgrad_.get(), rmask_.get(), nv_, slot(kSsdSum), vgrad_.get());
    st::adjoint(vgrad_.get(), in_.ref.geo, in_.grid, t1_.get(), t2_.get(), node_.get());
    st::scale_copy(node_.get(), 3 * np_, in_.weights.similarity, grad_.get());
    const double npd = static_cast<double>(np_), interior = interior_nodes();
    if (in_.weights.bending > 0)
      st::penalty(0, current_.get(), in_.grid, adj_.get(), partial_.get(), nullptr, in_.weights.bending / (3.0 * npd),
                  grad_.get());
    if (in_.weights.linear > 0)
      st::penalty(1, current_.get(), in_.grid, adj_.get(), partial_.get(), nullptr, in_.weights.linear / (3.0 * npd),
                  grad_.get());
    if (in_.weights.jacobian > 0 && interior > 0)
      st::penalty(2, current_.get(), in_.grid, adj_.get(), partial_.get(), nullptr, in_.weights.jacobian / interior,
                  grad_.get());
    EVK_CUDA_LAST();
  }

  double max_gradient_length() override {
    st::max_length(grad_.get(), np_, partial_.get(), slot(kMaxLen));
    double m = 0;
    EVK_CUDA(cudaMemcpy(&m, slot(kMaxLen), sizeof(double), cudaMemcpyDeviceToHost));
    flush_field_time();
    return m;
  }
  void scale_gradient(double f) override { st::scale_copy(grad_.get(), 3 * np_, f, grad_.get()); }
  void conjugate(bool first) override {
    if (first) st::cg_first(grad_.get(), 3 * np_, gprev_.get(), h_.get());
    else st::cg_update(grad_.get(), gprev_.get(), h_.get(), 3 * np_, partial_.get(), slot(kGG));
  }
  void store_best() override { copy(best_, current_); }
  void restore_best() override { copy(current_, best_); }
  void step_from_best(double scale) override { st::step(best_.get(), grad_.get(), 3 * np_, scale, current_.get()); }
  Grid grid() override {
    Grid g = in_.grid;
    current_.download(g.data.data(), g.data.size());
    return g;
  }
  double field_seconds() const override { return field_ms_ / 1000.0; }

 private:
  double* slot(Slot s) const { return scalars_.get() + s; }
  double interior_nodes() const {
    return static_cast<double>(in_.grid.geo.nx - 2) * (in_.grid.geo.ny - 2) * (in_.grid.geo.nz - 2);
  }
  void copy(Buffer<float>& dst, const Buffer<float>& src) {
    EVK_CUDA(cudaMemcpyAsync(dst.get(), src.get(), 3 * np_ * sizeof(float), cudaMemcpyDeviceToDevice));
  }
  void flush_field_time() {
    if (!field_pending_) return;
    float ms = 0;
    EVK_CUDA(cudaEventElapsedTime(&ms, ev0_, ev1_));
    field_ms_ += ms;
    field_pending_ = false;
  }
  // Stage 1 (the dispatched field kernel), 2 (warp, with the gradient when asked) and 3 (measure).
  void evaluate(bool with_gradient) {
    flush_field_time();
    st::to_float4(current_.get(), np_, field_.device_control_points());
    EVK_CUDA(cudaEventRecord(ev0_));
    field_.compute(false);
    EVK_CUDA(cudaEventRecord(ev1_));
    field_pending_ = true;
    st::warp_linear(field_.device_field(), rmask_.get(), nv_, flo_.get(), in_.flo.geo, fmask_.get(), warped_.get(),
                    with_gradient ? wgrad_.get() : nullptr);
    if (in_.similarity == Similarity::nmi) {
      st::nmi_counts(ref_.get(), warped_.get(), rmask_.get(), nv_, nb_, counts_.get());
      st::nmi_entropies(counts_.get(), nb_, tmp_.get(), prob_.get(), logp_.get(), slot(kNmi));
    } else {
      st::ssd_sums(ref_.get(), warped_.get(), rmask_.get(), nv_, partial_.get(), slot(kSsdSum));
    }
  }

  LevelInput in_;
  gpu::FieldEngine field_;
  long long nv_, np_;
  int nb_;
  Buffer<float> ref_, flo_, warped_, wgrad_, vgrad_, t1_, t2_, node_;
  Buffer<std::uint8_t> rmask_, fmask_;
  Buffer<float> current_, best_, grad_, gprev_, h_;
  Buffer<unsigned> counts_;
  Buffer<double> tmp_, prob_, logp_, partial_, scalars_, adj_;
  cudaEvent_t ev0_ = nullptr, ev1_ = nullptr;
  bool field_pending_ = false;
  double field_ms_ = 0;
};
}  // namespace

std::unique_ptr<LevelEngine> make_gpu_engine(const LevelInput& in, const GpuEngineOptions& opt) {
  return std::make_unique<GpuEngine>(in, opt);
}

}  // namespace evk::reg_deform
#endif
