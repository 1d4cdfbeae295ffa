#include "evk/stereo/gi_problem.hpp"

#include <cmath>
#include <iterator>
#include <cstdio>
#include <stdexcept>

#include "evk/error.hpp"
#include "evk/stereo/kernel_config.hpp"
#include "evk/stereo/reference.hpp"
#include "evk/stereo/synthetic.hpp"
#include "evk_kernels/stereo_kernel_original.hpp"

#if defined(EVK_HAVE_CUDA)
#include "evk/stereo/gpu_frame.hpp"
#endif

namespace evk::stereo {

namespace {
struct ClassDef {
  const char* name;
  int width, height;
  const char* describe;
};
// The paper's training case, then frame sizes users meet; the non-paper classes cycle through the
// disparity ranges 0..63, 0..127, 0..255 by seed.
constexpr ClassDef kClasses[] = {
    {"paper", 320, 240, "the paper's case: synthetic 320x240 pairs, disparities 0..50"},
    {"middlebury", 450, 375, "Middlebury-sized 450x375 pairs, disparities 0..63 / 0..127 / 0..255"},
    {"kitti", 1242, 375, "KITTI-sized 1242x375 pairs, disparities 0..63 / 0..127 / 0..255"},
    {"1080p", 1920, 1080, "1920x1080 pairs, disparities 0..63 / 0..127 / 0..255"},
};
constexpr int kRanges[] = {64, 128, 256};

#if defined(EVK_HAVE_CUDA)
class StereoEvaluation final : public gi::Evaluation {
 public:
  explicit StereoEvaluation(const GiCase& c) : case_(c) {
    SyntheticPair s = make_synthetic_pair(c.width, c.height, c.max_disparity, c.pair_seed);
    params_.max_disparity = c.max_disparity;
    reference_ = disparity_cpu(s.left, s.right, params_);
    frame_.upload(s.left, s.right);
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s %s pair %dx%d 0..%d seed %llu", c.holdout ? "hold-out" : "training",
                  c.size_class.c_str(), c.width, c.height, c.max_disparity, static_cast<unsigned long long>(c.seed));
    describe_ = buf;
  }
  std::string describe() const override { return describe_; }
  double work_items() const override { return double(case_.width) * case_.height * params_.count(); }
  gi::Properties properties() const override {
    return {{"width", case_.width},
            {"height", case_.height},
            {"min_disparity", params_.min_disparity},
            {"max_disparity", params_.max_disparity},
            {"disparities", params_.count()},
            {"window", params_.window}};
  }
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
  GiCase case_;
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
  std::vector<gi::SizeClass> size_classes() const override {
    std::vector<gi::SizeClass> v;
    for (const auto& c : kClasses) v.push_back({c.name, c.describe});
    return v;
  }
  // One case per disparity range for minimize and tune (the paper class has one range).
  int probe_cases(const std::string& cls) const override { return cls == "paper" ? 1 : 3; }
  std::vector<std::string> property_names() const override {
    return {"width", "height", "min_disparity", "max_disparity", "disparities", "window"};
  }
  std::vector<std::string> constraints(const gi::Config& cfg) const override { return gi_constraints(cfg); }
  std::string class_of(const gi::Properties& request) const override { return gi_class_of(request); }
  std::unique_ptr<gi::Evaluation> make_evaluation(std::uint64_t seed, bool holdout, const std::string& cls) const override {
    check_class(cls);
#if defined(EVK_HAVE_CUDA)
    return std::make_unique<StereoEvaluation>(gi_case(seed, holdout, cls));
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

GiCase gi_case(std::uint64_t seed, bool holdout, const std::string& size_class) {
  const ClassDef* def = nullptr;
  for (const auto& c : kClasses)
    if (size_class == c.name) def = &c;
  if (!def) input_error("--class", "'" + size_class + "' is not a stereo size class (paper, middlebury, kitti, 1080p)");
  GiCase c;
  c.size_class = size_class;
  c.seed = seed;
  c.holdout = holdout;
  c.width = def->width;
  c.height = def->height;
  c.max_disparity = def == &kClasses[0] ? 50 : kRanges[seed % 3] - 1;
  // Training pairs use even, hold-out pairs odd pair seeds: the two sets never overlap.
  c.pair_seed = 2 * seed + (holdout ? 1 : 0);
  return c;
}

std::string gi_class_of(const gi::Properties& request) {
  // the nearest class by pixel count (boundaries at the geometric means of neighbouring sizes)
  auto get = [&](const char* k, double d) {
    auto it = request.find(k);
    return it == request.end() ? d : it->second;
  };
  const double px = get("width", 320) * get("height", 240);
  for (std::size_t i = 0; i + 1 < std::size(kClasses); ++i) {
    const double a = double(kClasses[i].width) * kClasses[i].height, b = double(kClasses[i + 1].width) * kClasses[i + 1].height;
    if (px <= std::sqrt(a * b)) return kClasses[i].name;
  }
  return kClasses[std::size(kClasses) - 1].name;
}

std::vector<std::string> gi_constraints(const gi::Config& cfg) {
  std::vector<std::string> r;
  const KernelSettings ks = KernelSettings::from(cfg);  // InputError for an illegal configuration
  // uchar output stores -1 as 255 and the poison as 254 (gpu_frame.cpp)
  if (ks.out_type == "uchar") r.push_back("max_disparity <= 253");
  // the largest window this configuration can run (XHALO needs BLOCK_W > window - 1; shared memory
  // grows with the window); the tool accepts windows up to kMaxWindow
  int widest = 0;
  for (int w = 3; w <= kMaxWindow; w += 2) {
    try {
      KernelSettings::from(cfg, w / 2);
      widest = w;
    } catch (const InputError&) {
      break;
    }
  }
  if (widest < kMaxWindow) r.push_back("window <= " + std::to_string(widest));
  return r;
}

}  // namespace evk::stereo
