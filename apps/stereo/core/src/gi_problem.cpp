#include "evk/stereo/gi_problem.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "evk/stereo/kernel_config.hpp"
#include "evk/stereo/reference.hpp"
#include "evk/stereo/synthetic.hpp"
#include "evk_kernels/stereo_kernel_original.hpp"

#if defined(EVK_HAVE_CUDA)
#include "evk/stereo/gpu_frame.hpp"
#endif

namespace evk::stereo {

namespace {
constexpr int kCaseW = 320, kCaseH = 240, kCaseMaxD = 50;

#if defined(EVK_HAVE_CUDA)
class StereoEvaluation final : public gi::Evaluation {
 public:
  StereoEvaluation(std::uint64_t seed, bool holdout) {
    // Training pairs use even, hold-out pairs odd pair seeds: the two sets never overlap.
    const std::uint64_t pair_seed = 2 * seed + (holdout ? 1 : 0);
    SyntheticPair s = make_synthetic_pair(kCaseW, kCaseH, kCaseMaxD, pair_seed);
    params_.max_disparity = kCaseMaxD;
    reference_ = disparity_cpu(s.left, s.right, params_);
    frame_.upload(s.left, s.right);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s pair %dx%d seed %llu", holdout ? "hold-out" : "training", kCaseW, kCaseH,
                  static_cast<unsigned long long>(seed));
    describe_ = buf;
  }
  std::string describe() const override { return describe_; }
  double work_items() const override { return double(kCaseW) * kCaseH * params_.count(); }
  void poison(cudaStream_t s) override { frame_.poison(s); }
  void launch(cudaKernel_t k, const gi::Config& cfg, cudaStream_t s) override {
    settings_ = KernelSettings::from(cfg, params_.radius());
    frame_.launch(k, settings_, params_, s);
  }
  gi::Check check(cudaStream_t s) override {
    RawOutput raw = frame_.download(settings_, s);
    gi::Check c;
    long long counted = 0, bad = 0, unset = 0, out_of_range = 0, invalid_claimed = 0;
    double total = 0;
    for (std::size_t i = 0; i < raw.value.size(); ++i) {
      const int ref = reference_.d[i];
      ++counted;
      double pen;
      const float v = raw.value[i];
      if (raw.unset[i]) {
        pen = 200;
        ++unset;
      } else if (ref == kInvalid) {
        // Stricter than the paper (which ignored these pixels): the tool promises the reference bit
        // for bit, so a disparity where none beat min_ssd is wrong too.
        pen = v == -1.0f ? 0 : 100;
        if (pen > 0) ++invalid_claimed;
      } else if (!std::isfinite(v) || v < params_.min_disparity || v > params_.max_disparity) {
        pen = 100;
        ++out_of_range;
      } else {
        pen = std::fabs(static_cast<double>(v) - ref);
        if (pen > c.max_error) c.max_error = pen;
      }
      if (pen > 0) ++bad;
      total += pen;
    }
    c.penalty = counted ? total / counted : 0;
    c.bad_fraction = counted ? double(bad) / counted : 0;
    char buf[224];
    std::snprintf(buf, sizeof buf, "%lld/%lld pixels differ (%lld unset, %lld out of range, %lld set where the "
                  "reference is invalid), max err %.3g px, total penalty %.0f", bad, counted, unset, out_of_range,
                  invalid_claimed, c.max_error, total);
    c.summary = buf;
    return c;
  }

 private:
  Params params_;
  DisparityMap reference_;
  DeviceFrame frame_;
  KernelSettings settings_;
  std::string describe_;
};
#endif

class StereoProblem final : public gi::Problem {
 public:
  std::string name() const override { return "stereo"; }
  std::string kernel_source() const override { return std::string(stereo_kernel_original().text()); }
  std::string kernel_entry() const override { return "stereoKernel"; }
  std::vector<gi::ConfigParam> config_params() const override { return stereo::config_params(); }
  std::vector<std::string> compile_options(const gi::Config& cfg) const override {
    return KernelSettings::from(cfg).compile_options();
  }
  std::unique_ptr<gi::Evaluation> make_evaluation(std::uint64_t seed, bool holdout) const override {
#if defined(EVK_HAVE_CUDA)
    return std::make_unique<StereoEvaluation>(seed, holdout);
#else
    (void)seed;
    (void)holdout;
    throw std::runtime_error("stereo gi evaluation needs a CUDA build");
#endif
  }
  int default_population() const override { return 100; }
  int default_generations() const override { return 50; }
  // The block has BLOCK_W * DPER threads (DPER disparity groups of BLOCK_W columns).
  std::string launch_bounds_threads() const override { return "(BLOCK_W * DPER)"; }
  // No loop_limit() override: the longest original loop is the disparity loop, at most 32001
  // iterations (validate() caps --max-disparity at 32000), under the engine's 65536.
};
}  // namespace

std::unique_ptr<gi::Problem> make_gi_problem() { return std::make_unique<StereoProblem>(); }

}  // namespace evk::stereo
