// SGM path aggregation as a gi::Problem (gi/sgm_gi_problem.hpp).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/sgm.hpp"
#include "core/sgm_gpu.hpp"
#include "core/synthetic.hpp"
#include "evk/error.hpp"
#include "evk_kernels/sgm_aggregate_original.hpp"
#include "gi/gi_problem.hpp"
#include "gi/sgm_gi_problem.hpp"

#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#endif

namespace evk::stereo {

namespace {
// 60 disparities (0..59): every SGM_K pads the lanes to Dp = 64, so the padding's code is part of
// what the cases check. (With 0..63 no layout was padded: the first search, H200 2026-11-24, deleted
// the line setting `padded` and was valid on its cases only.)
constexpr int kW = 384, kH = 288, kMaxD = 59;
constexpr unsigned char kPoison = 0xA5;  // 165: above every 8-bit path cost (cost_max 31 + P2 120)

SgmParams case_params() {
  SgmParams p;
  p.min_disparity = 0;
  p.max_disparity = kMaxD;
  p.paths = 8;
  p.cost = CostKind::census;
  p.p1 = 10;
  p.p2 = 120;
  return p;
}

int config_int(const gi::Config& cfg, const std::string& key, int dflt) {
  auto it = cfg.find(key);
  return it == cfg.end() ? dflt : std::atoi(it->second.c_str());
}

#if defined(EVK_HAVE_CUDA)
class SgmAggregateEvaluation final : public gi::Evaluation {
 public:
  SgmAggregateEvaluation(std::uint64_t seed, bool holdout) : p_(case_params()) {
    const std::uint64_t pair_seed = 2 * seed + (holdout ? 1 : 0);  // training even, hold-out odd
    SyntheticPair s = make_synthetic_pair(kW, kH, 40, pair_seed);
    const CostVolume c = cost_cpu(s.left, s.right, p_);
    for (int dir = 0; dir < 8; ++dir) ref_[dir] = aggregate_direction_cpu(c, p_, dir);
    // Every SGM_K gives Dp = 64 for 60 disparities, so the buffers suit every configuration.
    const SgmLayout l = sgm_layout(kW, kH, p_, 16);
    dp_ = l.Dp;
    pitch_ = l.right_pitch;
    offset_ = l.right_offset;
    std::vector<std::uint32_t> cr(static_cast<std::size_t>(pitch_) * kH, 0u);
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x)
        cr[static_cast<std::size_t>(y) * pitch_ + offset_ + x] = c.census_right[static_cast<std::size_t>(y) * kW + x];
    bytes_ = static_cast<std::size_t>(8) * kW * kH * dp_;
    EVK_CUDA(cudaMalloc(&cl_, c.census_left.size() * 4));
    EVK_CUDA(cudaMalloc(&cr_, cr.size() * 4));
    EVK_CUDA(cudaMalloc(&out_, bytes_));
    EVK_CUDA(cudaMemcpy(cl_, c.census_left.data(), c.census_left.size() * 4, cudaMemcpyHostToDevice));
    EVK_CUDA(cudaMemcpy(cr_, cr.data(), cr.size() * 4, cudaMemcpyHostToDevice));
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s pair %dx%d seed %llu, %d disparities, 8 paths", holdout ? "hold-out" : "training",
                  kW, kH, static_cast<unsigned long long>(seed), kMaxD + 1);
    describe_ = buf;
  }
  ~SgmAggregateEvaluation() override {
    cudaFree(cl_);
    cudaFree(cr_);
    cudaFree(out_);
  }
  std::string describe() const override { return describe_; }
  double work_items() const override { return 8.0 * kW * kH * p_.count(); }  // path cost evaluations
  void poison(cudaStream_t s) override { EVK_CUDA(cudaMemsetAsync(out_, kPoison, bytes_, s)); }
  void launch(cudaKernel_t k, const gi::Config& cfg, cudaStream_t s) override {
    const SgmLayout l = sgm_layout(kW, kH, p_, config_int(cfg, "SGM_K", 16));
    if (l.Dp != dp_) throw std::logic_error("sgm gi case: unexpected Dp");
    const bool staged = config_int(cfg, "SGM_MODE", 1) == 1;
    int W = kW, H = kH, dmin = 0, D = p_.count(), Dp = l.Dp, G = l.G, Gs = l.Gs, P1 = p_.p1, P2 = p_.p2, dir0 = 0;
    int pitch = pitch_, offset = offset_;
    void* none = nullptr;
    void* args[] = {&cl_, &cr_, &pitch, &offset, &none, &out_, &W, &H, &dmin, &D, &Dp, &G, &Gs, &P1, &P2, &dir0};
    const unsigned lines = static_cast<unsigned>(SgmLayout::kAggregateThreads / Gs);
    evk::launch(k, dim3((std::max(kW, kH) + lines - 1) / lines, 8), dim3(SgmLayout::kAggregateThreads), args,
                staged ? sgm_staged_smem(l) : 0, s);
  }
  gi::Check check(cudaStream_t s) override {
    std::vector<unsigned char> got(bytes_);
    EVK_CUDA(cudaMemcpyAsync(got.data(), out_, bytes_, cudaMemcpyDeviceToHost, s));
    EVK_CUDA(cudaStreamSynchronize(s));
    gi::Check c;
    long long n = 0, bad = 0, unset = 0;
    double total = 0;
    const int D = p_.count();
    for (int dir = 0; dir < 8; ++dir)
      for (std::size_t cell = 0; cell < static_cast<std::size_t>(kW) * kH; ++cell)
        for (int k = 0; k < D; ++k) {
          const unsigned char g = got[(static_cast<std::size_t>(dir) * kW * kH + cell) * dp_ + k];
          const int ref = ref_[dir][cell * D + k];
          double pen;
          if (g == kPoison) {
            pen = 200;
            ++unset;
          } else {
            pen = std::min(100.0, std::fabs(static_cast<double>(g) - ref));
            c.max_error = std::max(c.max_error, pen);
          }
          ++n;
          if (pen > 0) ++bad;
          total += pen;
        }
    c.penalty = n ? total / n : 0;
    c.bad_fraction = n ? static_cast<double>(bad) / n : 0;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%lld/%lld path costs differ (%lld unset), max err %.3g, total penalty %.0f", bad, n,
                  unset, c.max_error, total);
    c.summary = buf;
    return c;
  }

 private:
  SgmParams p_;
  std::vector<std::uint16_t> ref_[8];
  int dp_ = 0, pitch_ = 0, offset_ = 0;
  std::size_t bytes_ = 0;
  void* cl_ = nullptr;
  void* cr_ = nullptr;
  void* out_ = nullptr;
  std::string describe_;
};
#endif

class SgmAggregateProblem final : public gi::Problem {
 public:
  std::string name() const override { return "stereo_sgm"; }
  std::string kernel_source() const override { return std::string(sgm_aggregate_original().text()); }
  std::string kernel_entry() const override { return "sgm_aggregate"; }
  std::vector<gi::ConfigParam> config_params() const override {
    gi::ConfigParam k{"SGM_K", gi::ConfigParam::Kind::number, {"8", "16", "32"}, "16",
                      "disparities per lane (K/2 signed 16-bit pairs in registers)"};
    gi::ConfigParam m{"SGM_MODE", gi::ConfigParam::Kind::choice, {"0", "1"}, "1",
                      "right census codes: 0 direct L1 loads, 1 staged (shared memory / register window)"};
    gi::ConfigParam f{"SGM_PREFETCH", gi::ConfigParam::Kind::choice, {"0", "1"}, "0",
                      "with SGM_MODE 0: the next cell's codes loaded during this cell's step"};
    return {k, m, f};
  }
  std::vector<std::string> compile_options(const gi::Config& cfg) const override {
    const int k = config_int(cfg, "SGM_K", 16), m = config_int(cfg, "SGM_MODE", 1), f = config_int(cfg, "SGM_PREFETCH", 0);
    if (k != 8 && k != 16 && k != 32) input_error("SGM_K", "must be 8, 16 or 32");
    if (m != 0 && m != 1) input_error("SGM_MODE", "must be 0 or 1 (census cases)");
    if (f != 0 && f != 1) input_error("SGM_PREFETCH", "must be 0 or 1");
    return {"-DSGM_K=" + std::to_string(k), "-DSGM_MODE=" + std::to_string(m), "-DSGM_STORE16=0",
            "-DSGM_PREFETCH=" + std::to_string(f)};
  }
  std::vector<gi::SizeClass> size_classes() const override {
    return {{"middlebury", "synthetic 384x288 census cases (Tsukuba-sized), disparities 0..59 (padded lanes), 8 directions"}};
  }
  std::unique_ptr<gi::Evaluation> make_evaluation(std::uint64_t seed, bool holdout,
                                                  const std::string& size_class) const override {
    check_class(size_class);
#if defined(EVK_HAVE_CUDA)
    return std::make_unique<SgmAggregateEvaluation>(seed, holdout);
#else
    (void)seed;
    (void)holdout;
    throw std::runtime_error("stereo sgm gi evaluation needs a CUDA build");
#endif
  }
  int default_population() const override { return 100; }
  int default_generations() const override { return 50; }
  // The signature carries __launch_bounds__(AGG_THREADS, ...): no launch-bounds rule. The longest
  // loop is the step loop, max(W, H) = 384 iterations per line, under the engine's 65536.
};
}  // namespace

std::unique_ptr<gi::Problem> make_sgm_gi_problem() { return std::make_unique<SgmAggregateProblem>(); }

}  // namespace evk::stereo
