#include "gi/gi_problem.hpp"

#include <cmath>
#include <iterator>
#include <cstdio>
#include <stdexcept>

#include "core/kernel_config.hpp"
#include "core/reference.hpp"
#include "core/ssd_expert.hpp"
#include "core/synthetic.hpp"
#include "evk/error.hpp"
#include "evk_kernels/ssd_expert_seed.hpp"
#include "evk_kernels/stereo_kernel_original.hpp"
#include "gi/sgm_gi_problem.hpp"

#include <cstdlib>

#if defined(EVK_HAVE_CUDA)
#include "core/gpu_frame.hpp"
#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
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

// The expert SSD kernel (kernels/original/stereo/ssd_expert.cu) as a second seed for the same cases
// and penalties: the window is 11 (EX_R 5), the configuration parameters are its tile and chunk
// sizes.
constexpr int kExpertRadius = 5;

SsdExpertConfig expert_config(const gi::Config& cfg) {
  auto get = [&](const char* k, int d) {
    auto it = cfg.find(k);
    if (it == cfg.end()) return d;
    try {
      std::size_t pos = 0;
      const int v = std::stoi(it->second, &pos);
      if (pos != it->second.size()) throw std::invalid_argument(k);
      return v;
    } catch (const std::exception&) {
      input_error(k, "not an integer: '" + it->second + "'");
    }
  };
  SsdExpertConfig c;
  c.ty = get("EX_TY", c.ty);
  c.dc = get("EX_DC", c.dc);
  c.ds = get("EX_DS", c.ds);
  c.check();
  return c;
}

#if defined(EVK_HAVE_CUDA)
class ExpertEvaluation final : public gi::Evaluation {
 public:
  explicit ExpertEvaluation(const GiCase& c) : case_(c) {
    SyntheticPair s = make_synthetic_pair(c.width, c.height, c.max_disparity, c.pair_seed);
    params_.max_disparity = c.max_disparity;
    reference_ = disparity_cpu(s.left, s.right, params_);
    const std::size_t n = static_cast<std::size_t>(c.width) * c.height;
    EVK_CUDA(cudaMalloc(&img_[0], n));
    EVK_CUDA(cudaMalloc(&img_[1], n));
    EVK_CUDA(cudaMalloc(&out_, n * 4));
    EVK_CUDA(cudaMemcpy(img_[0], s.left.pixels.data(), n, cudaMemcpyHostToDevice));
    EVK_CUDA(cudaMemcpy(img_[1], s.right.pixels.data(), n, cudaMemcpyHostToDevice));
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s %s pair %dx%d 0..%d seed %llu (expert seed)", c.holdout ? "hold-out" : "training",
                  c.size_class.c_str(), c.width, c.height, c.max_disparity, static_cast<unsigned long long>(c.seed));
    describe_ = buf;
  }
  ~ExpertEvaluation() override {
    cudaFree(img_[0]);
    cudaFree(img_[1]);
    cudaFree(out_);
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
  void poison(cudaStream_t s) override {
    EVK_CUDA(cudaMemsetAsync(out_, 0xA5, static_cast<std::size_t>(case_.width) * case_.height * 4, s));
  }
  void launch(cudaKernel_t k, const gi::Config& cfg, cudaStream_t s) override {
    const SsdExpertLaunch l = ssd_expert_launch(case_.width, case_.height, kExpertRadius, expert_config(cfg));
    if (l.smem > 48 * 1024)
      EVK_CUDA(cudaFuncSetAttribute(reinterpret_cast<const void*>(k), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(l.smem)));
    int W = case_.width, H = case_.height, dmin = params_.min_disparity, dmax = params_.max_disparity,
        min_ssd = params_.min_ssd;
    void* args[] = {&img_[0], &img_[1], &out_, &W, &H, &dmin, &dmax, &min_ssd};
    evk::launch(k, dim3(l.grid_x, l.grid_y), dim3(l.threads), args, l.smem, s);
  }
  gi::Check check(cudaStream_t s) override {
    const std::size_t n = static_cast<std::size_t>(case_.width) * case_.height;
    std::vector<int> got(n);
    EVK_CUDA(cudaMemcpyAsync(got.data(), out_, n * 4, cudaMemcpyDeviceToHost, s));
    EVK_CUDA(cudaStreamSynchronize(s));
    constexpr int kPoison = static_cast<int>(0xA5A5A5A5u);
    gi::Check c;
    long long bad = 0, unset = 0, out_of_range = 0, invalid_claimed = 0;
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const int ref = reference_.d[i], v = got[i];
      double pen;
      if (v == kPoison) {
        pen = 200;
        ++unset;
      } else if (ref == kInvalid) {
        pen = v == -1 ? 0 : 100;
        if (pen > 0) ++invalid_claimed;
      } else if (v < params_.min_disparity || v > params_.max_disparity) {
        pen = 100;
        ++out_of_range;
      } else {
        pen = std::abs(v - ref);
        if (pen > c.max_error) c.max_error = pen;
      }
      if (pen > 0) ++bad;
      total += pen;
    }
    c.penalty = n ? total / static_cast<double>(n) : 0;
    c.bad_fraction = n ? double(bad) / static_cast<double>(n) : 0;
    char buf[224];
    std::snprintf(buf, sizeof buf, "%lld/%zu pixels differ (%lld unset, %lld out of range, %lld set where the "
                  "reference is invalid), max err %.3g px, total penalty %.0f", bad, n, unset, out_of_range,
                  invalid_claimed, c.max_error, total);
    c.summary = buf;
    return c;
  }

 private:
  GiCase case_;
  Params params_;
  DisparityMap reference_;
  void* img_[2] = {nullptr, nullptr};
  void* out_ = nullptr;
  std::string describe_;
};
#endif

class ExpertProblem final : public gi::Problem {
 public:
  std::string name() const override { return "stereo_expert"; }
  std::string kernel_source() const override { return std::string(ssd_expert_seed().text()); }
  std::string kernel_entry() const override { return "ssd_expert"; }
  std::vector<gi::ConfigParam> config_params() const override {
    gi::ConfigParam ty{"EX_TY", gi::ConfigParam::Kind::number, {"8", "16", "24", "32", "40", "48", "64"}, "32",
                       "output rows per block (8 EX_TY threads)"};
    gi::ConfigParam dc{"EX_DC", gi::ConfigParam::Kind::number, {"1", "2", "3", "4", "6", "8"}, "3",
                       "disparities per chunk (one pass of the vertical and horizontal phases)"};
    gi::ConfigParam ds{"EX_DS", gi::ConfigParam::Kind::number, {"64", "128", "256"}, "128",
                       "disparities per staged right strip"};
    return {ty, dc, ds};
  }
  std::vector<std::string> compile_options(const gi::Config& cfg) const override {
    const SsdExpertConfig c = expert_config(cfg);
    if (ssd_expert_smem(kExpertRadius, c) > 227 * 1024)
      input_error("EX_DS", "shared memory above 227 KiB for this EX_TY/EX_DC/EX_DS");
    return c.compile_options(kExpertRadius);
  }
  std::vector<gi::SizeClass> size_classes() const override {
    std::vector<gi::SizeClass> v;
    for (const auto& c : kClasses) v.push_back({c.name, c.describe});
    return v;
  }
  int probe_cases(const std::string& cls) const override { return cls == "paper" ? 1 : 3; }
  std::vector<std::string> property_names() const override {
    return {"width", "height", "min_disparity", "max_disparity", "disparities", "window"};
  }
  // EX_R is fixed at 5 for the GI cases: a variant is for the 11x11 window.
  std::vector<std::string> constraints(const gi::Config& cfg) const override {
    expert_config(cfg);
    return {"window == 11"};
  }
  std::string class_of(const gi::Properties& request) const override { return gi_class_of(request); }
  std::unique_ptr<gi::Evaluation> make_evaluation(std::uint64_t seed, bool holdout, const std::string& cls) const override {
    check_class(cls);
#if defined(EVK_HAVE_CUDA)
    return std::make_unique<ExpertEvaluation>(gi_case(seed, holdout, cls));
#else
    (void)seed;
    (void)holdout;
    throw std::runtime_error("stereo gi evaluation needs a CUDA build");
#endif
  }
  int default_population() const override { return 100; }
  int default_generations() const override { return 50; }
  // Loop guard: 1024 iterations per loop entry. The longest original loop is the strip loop, at most
  // ceil(32001 / EX_DS) <= 501 iterations (EX_DS >= 64, --max-disparity <= 32000); the chunk loop
  // EX_DS / EX_DC <= 256, the staging and phase-1 loops a few dozen, the unrolled loops <= 19. Not
  // the engine's 65536: an edit that stops an unrolled loop's variable from advancing leaves the
  // guard as its trip count, and NVRTC 13.0 overflowed its stack fully unrolling 65536 copies
  // (GiCompileRate found it: `EX_TY=8 EX_DC=1 EX_DS=32 <for3_K_157><for3_K_113>`).
  int loop_limit() const override { return 1024; }
};
}  // namespace

std::unique_ptr<gi::Problem> make_gi_problem() { return std::make_unique<StereoProblem>(); }
std::unique_ptr<gi::Problem> make_expert_gi_problem() { return std::make_unique<ExpertProblem>(); }

std::unique_ptr<gi::Problem> make_gi_problem_for_seed(const std::string& seed) {
  if (seed == "ssd") return make_gi_problem();
  if (seed == "expert") return make_expert_gi_problem();
  if (seed == "sgm") return make_sgm_gi_problem();
  input_error("--seed-kernel", "must be ssd, expert or sgm (got '" + seed + "')");
}

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
