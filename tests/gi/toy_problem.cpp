#include "toy_problem.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "evk/error.hpp"
#include "evk_kernels/gi_toy_kernel.hpp"
#if defined(EVK_HAVE_CUDA)
#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#endif

namespace evk::gi::testing {

namespace {
constexpr int kRadius = 8;

#if defined(EVK_HAVE_CUDA)
// One random signal: out[i] = min(sum_k w[k] * in[clamp(i+k)], limit). Tolerance: float sums of 17
// terms of |w*in| <= 1 in a different order differ by a few ulp of the sum; 1e-4 absolute is ample
// and far below any real mistake (a missing tap changes the value by ~1e-2 on average).
class ToyEvaluation : public Evaluation {
 public:
  ToyEvaluation(std::uint64_t seed, bool holdout, int log2n) {
    std::mt19937_64 rng(seed * 2 + (holdout ? 1 : 0) + 12345);
    n_ = (1 << log2n) + static_cast<int>(rng() % 1000);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    in_.resize(n_);
    for (auto& v : in_) v = u(rng);
    w_.resize(2 * kRadius + 1);
    for (auto& v : w_) v = u(rng) / 8;
    limit_ = 0.3f;
    ref_.resize(n_);
    for (int i = 0; i < n_; ++i) {
      float acc = 0;
      for (int k = -kRadius; k <= kRadius; ++k) acc += w_[k + kRadius] * in_[std::clamp(i + k, 0, n_ - 1)];
      ref_[i] = std::min(acc, limit_);
    }
    EVK_CUDA(cudaMalloc(&d_in_, n_ * sizeof(float)));
    EVK_CUDA(cudaMalloc(&d_w_, w_.size() * sizeof(float)));
    EVK_CUDA(cudaMalloc(&d_out_, (n_ + 4096) * sizeof(float)));
    EVK_CUDA(cudaMalloc(&d_scratch_, (n_ + 4096) * sizeof(float)));
    EVK_CUDA(cudaMemcpy(d_in_, in_.data(), n_ * sizeof(float), cudaMemcpyHostToDevice));
    EVK_CUDA(cudaMemcpy(d_w_, w_.data(), w_.size() * sizeof(float), cudaMemcpyHostToDevice));
    desc_ = "random signal n=" + std::to_string(n_) + " seed " + std::to_string(seed) + (holdout ? " (hold-out)" : "");
  }
  ~ToyEvaluation() override {
    cudaFree(d_in_);
    cudaFree(d_w_);
    cudaFree(d_out_);
    cudaFree(d_scratch_);
  }
  std::string describe() const override { return desc_; }
  double work_items() const override { return n_; }
  Properties properties() const override { return {{"n", static_cast<double>(n_)}}; }
  void poison(cudaStream_t s) override { EVK_CUDA(cudaMemsetAsync(d_out_, 0xff, n_ * sizeof(float), s)); }  // NaN
  void launch(cudaKernel_t k, const Config& cfg, cudaStream_t s) override {
    int bw = std::stoi(cfg.at("BLOCK_W"));
    int n = n_;
    float limit = limit_;
    void* args[] = {&d_in_, &d_w_, &d_out_, &d_scratch_, &n, &limit};
    evk::launch(k, dim3((n_ + bw - 1) / bw), dim3(bw), args, 0, s);
  }
  Check check(cudaStream_t s) override {
    EVK_CUDA(cudaStreamSynchronize(s));
    std::vector<float> got(n_);
    EVK_CUDA(cudaMemcpy(got.data(), d_out_, n_ * sizeof(float), cudaMemcpyDeviceToHost));
    Check c;
    long unset = 0, wrong = 0;
    for (int i = 0; i < n_; ++i) {
      if (std::isnan(got[i])) {
        ++unset;
        continue;
      }
      double e = std::fabs(static_cast<double>(got[i]) - ref_[i]);
      c.max_error = std::max(c.max_error, e);
      if (e > 1e-4) ++wrong;
    }
    c.bad_fraction = static_cast<double>(unset + wrong) / n_;
    // the 2014 paper's rule shape: a large penalty scaled by the share of bad elements
    if (unset + wrong > 0) c.penalty = 1000.0 * (0.1 + c.bad_fraction);
    c.summary = std::to_string(unset) + " unset, " + std::to_string(wrong) + " wrong, max err " + std::to_string(c.max_error);
    return c;
  }

 private:
  int n_ = 0;
  float limit_ = 0;
  std::vector<float> in_, w_, ref_;
  float *d_in_ = nullptr, *d_w_ = nullptr, *d_out_ = nullptr, *d_scratch_ = nullptr;
  std::string desc_;
};
#endif

class ToyProblem : public Problem {
 public:
  explicit ToyProblem(std::string src) : src_(std::move(src)) {}
  std::string name() const override { return "toy"; }
  std::string kernel_source() const override { return src_; }
  std::string kernel_entry() const override { return "toy_filter"; }
  std::vector<ConfigParam> config_params() const override {
    ConfigParam bw{"BLOCK_W", ConfigParam::Kind::number, {"32", "64", "128", "256", "512", "1024"}, "128", "threads per block"};
    ConfigParam sh{"USE_SHARED", ConfigParam::Kind::boolean, {"false", "true"}, "false", "stage the input in shared memory"};
    return {bw, sh};
  }
  std::vector<std::string> compile_options(const Config& cfg) const override {
    auto bw = cfg.at("BLOCK_W");
    if (std::stoi(bw) < 2 * kRadius + 1) input_error("BLOCK_W=" + bw, "must be at least 17 (loads the weights)");
    return {"-DBLOCK_W=" + bw, std::string("-DUSE_SHARED=") + (cfg.at("USE_SHARED") == "true" ? "1" : "0")};
  }
  // Two sizes: the original ~4.2 M-element signal first, and a ~1 M-element one.
  std::vector<SizeClass> size_classes() const override {
    return {{"large", "random signal of ~4.19 M floats"}, {"small", "random signal of ~1.05 M floats"}};
  }
  std::vector<std::string> property_names() const override { return {"n"}; }
  std::unique_ptr<Evaluation> make_evaluation(std::uint64_t seed, bool holdout, const std::string& cls) const override {
    check_class(cls);
#if defined(EVK_HAVE_CUDA)
    return std::make_unique<ToyEvaluation>(seed, holdout, cls == "small" ? 20 : 22);
#else
    (void)seed;
    (void)holdout;
    throw std::runtime_error("built without CUDA");
#endif
  }
  int default_population() const override { return 40; }
  int default_generations() const override { return 5; }
  std::string launch_bounds_threads() const override { return "BLOCK_W"; }

 private:
  std::string src_;
};
}  // namespace

std::unique_ptr<Problem> make_toy_problem() { return std::make_unique<ToyProblem>(std::string(gi_toy_kernel().text())); }
std::unique_ptr<Problem> make_toy_problem_with_source(const std::string& s) { return std::make_unique<ToyProblem>(s); }

Grammar toy_grammar() { return make_grammar(*make_toy_problem()); }

int line_of(const Grammar& g, const std::string& needle) {
  for (std::size_t i = 0; i < g.lines.size(); ++i)
    if (g.lines[i].text.find(needle) != std::string::npos) return static_cast<int>(i) + 1;
  return -1;
}

}  // namespace evk::gi::testing
