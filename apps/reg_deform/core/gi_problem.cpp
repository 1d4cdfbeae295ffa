#include "gi_problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "active.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#include "evk_kernels/reg_deform_original.hpp"
#include "field_cpu.hpp"
#include "gpu_field.hpp"
#include "kernel_config.hpp"
#include "random_case.hpp"

#if defined(EVK_HAVE_CUDA)
#include "evk/cuda_check.hpp"
#endif

namespace evk::reg_deform {

evk::gi::Check penalize(double worst, std::size_t unset, std::size_t wrong, std::size_t bad_over_tol, std::size_t total) {
  evk::gi::Check c;
  const double n = total ? static_cast<double>(total) : 1.0;
  c.max_error = worst;
  if (worst > 0.001) c.penalty += std::min(kPenaltyScale * (worst + 0.1), kPenaltyScale);
  if (unset) c.penalty += kPenaltyScale * (unset / n);
  if (wrong) c.penalty += kPenaltyScale * (wrong / n);
  c.bad_fraction = (unset + bad_over_tol) / n;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%zu voxels, %zu unset, %zu over 0.001 mm, %zu over 0.1 mm, max err %.3g mm", total,
                unset, bad_over_tol, wrong, worst);
  c.summary = buf;
  return c;
}

namespace {

#if defined(EVK_HAVE_CUDA)
class Evaluation final : public evk::gi::Evaluation {
 public:
  Evaluation(std::uint64_t seed, bool holdout, int size) : seed_(seed), holdout_(holdout) {
    RandomCaseOptions o;
    o.seed = holdout ? 2 * seed + 1 : 2 * seed;  // training and hold-out cases never overlap
    o.size = size;
    RandomCase rc = make_random_case(o);
    geo_ = rc.image.geo;
    layout_ = tile_layout(geo_, 5);
    tiles_ = active_tiles(geo_, rc.mask, layout_);
    // Reference: the CPU position of every in-volume voxel of every active tile.
    ref_.assign(tiles_.size() * 25 * 3, 0.0f);
    inside_.assign(tiles_.size() * 25, 0);
    parallel_for(tiles_.size(), [&](std::size_t t0, std::size_t t1) {
      for (std::size_t t = t0; t < t1; ++t) {
        int x, ty, tz;
        layout_.decode(tiles_[t], x, ty, tz);
        for (int e = 0; e < 25; ++e) {
          const int y = ty * 5 + e % 5, z = tz * 5 + e / 5;
          if (y >= geo_.ny || z >= geo_.nz) continue;
          const auto p = bspline_position(rc.grid, x, y, z);
          const std::size_t i = t * 25 + e;
          inside_[i] = 1;
          for (int a = 0; a < 3; ++a) ref_[3 * i + a] = static_cast<float>(p[a]);
        }
      }
    });
    for (auto v : inside_) work_ += v;
    grid_.upload(rc.grid);
    list_.upload(tiles_.data(), tiles_.size());
    out_.resize(tiles_.size() * 25 + 32);
    basis_[0] = std::make_unique<gpu::DeviceBasis>(false);
    basis_[1] = std::make_unique<gpu::DeviceBasis>(true);
    EVK_CUDA(cudaDeviceSynchronize());
  }
  std::string describe() const override {
    return std::string(holdout_ ? "hold-out" : "training") + " random case " + std::to_string(geo_.nx) + "^3 seed " +
           std::to_string(seed_) + " (" + std::to_string(tiles_.size()) + " tiles, " + std::to_string(work_) + " voxels)";
  }
  double work_items() const override { return static_cast<double>(work_); }
  void poison(cudaStream_t s) override {
    EVK_CUDA(cudaMemsetAsync(out_.get(), 0xff, out_.size() * sizeof(float4), s));  // NaN everywhere
  }
  void launch(cudaKernel_t k, const evk::gi::Config& cfg, cudaStream_t s) override {
    const KernelConfig kc = KernelConfig::from_map(cfg);
    gpu::TileLaunch a;
    a.tiles = list_.get();
    a.count = static_cast<int>(tiles_.size());
    a.nx = geo_.nx;
    a.tiles_y = layout_.nty;
    a.gx = grid_.gx;
    a.gy = grid_.gy;
    a.control_points = grid_.texture();
    a.basis = basis_[kc.basis_a ? 1 : 0]->texture();
    a.out = out_.get();
    gpu::launch_tile5(k, a, kc.block_size, s);
  }
  evk::gi::Check check(cudaStream_t s) override {
    EVK_CUDA(cudaStreamSynchronize(s));
    std::vector<float4> got(tiles_.size() * 25);
    out_.download(got.data(), got.size(), s);
    double worst = 0;
    std::size_t unset = 0, wrong = 0, over = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!inside_[i]) continue;
      const float g[3] = {got[i].x, got[i].y, got[i].z};
      bool nan = false;
      double e = 0;
      for (int a = 0; a < 3; ++a) {
        if (!std::isfinite(g[a])) nan = true;
        else e = std::max(e, std::fabs(static_cast<double>(g[a]) - ref_[3 * i + a]));
      }
      if (nan) {
        ++unset;
        continue;
      }
      worst = std::max(worst, e);
      if (e > 0.001) ++over;
      if (e > 0.1) ++wrong;
    }
    return penalize(worst, unset, wrong, over, work_);
  }

 private:
  std::uint64_t seed_;
  bool holdout_;
  Geometry geo_;
  TileLayout layout_;
  std::vector<std::uint32_t> tiles_;
  std::vector<float> ref_;
  std::vector<std::uint8_t> inside_;
  std::size_t work_ = 0;
  gpu::DeviceGrid grid_;
  gpu::Buffer<std::uint32_t> list_;
  gpu::Buffer<float4> out_;
  std::unique_ptr<gpu::DeviceBasis> basis_[2];
};
#endif

class Problem final : public evk::gi::Problem {
 public:
  explicit Problem(const GiProblemOptions& o) : opt_(o) {}
  std::string name() const override { return "reg_deform"; }
  std::string kernel_source() const override { return std::string(reg_deform_original().text()); }
  std::string kernel_entry() const override { return "reg_deform_tile5"; }
  std::vector<evk::gi::ConfigParam> config_params() const override {
    using K = evk::gi::ConfigParam::Kind;
    const std::vector<std::string> b = {"false", "true"};
    std::vector<evk::gi::ConfigParam> p = {
        {"c_UseBSpline", K::boolean, b, "false", "B-spline flag as the compile-time constant 1 (else a run-time parameter)"},
        {"c_controlPointVoxelSpacing", K::boolean, b, "false", "spacing as the compile-time constant 5 (else a run-time parameter)"},
        {"constantBasis", K::boolean, b, "false", "basis values from __constant__ memory instead of a texture, x precomputed"},
        {"BasisA", K::boolean, b, "false", "basis table index order [offset][weight] instead of [weight][offset]"},
        {"directxBasis", K::boolean, b, "false", "x weights from the precomputed table too"},
        {"RemX", K::boolean, b, "false", "compute x % spacing once"},
    };
    evk::gi::ConfigParam bs{"BLOCK_SIZE", K::number, {}, "192", "threads per block (launch parameter, one warp per tile)"};
    for (int v = 32; v <= 1024; v += 32) bs.values.push_back(std::to_string(v));
    p.push_back(bs);
    return p;
  }
  std::vector<std::string> compile_options(const evk::gi::Config& cfg) const override {
    return KernelConfig::from_map(cfg).compile_options();
  }
  std::unique_ptr<evk::gi::Evaluation> make_evaluation(std::uint64_t seed, bool holdout) const override {
#if defined(EVK_HAVE_CUDA)
    return std::make_unique<Evaluation>(seed, holdout, opt_.case_size);
#else
    (void)seed;
    (void)holdout;
    throw std::runtime_error("reg_deform: built without CUDA, no GPU evaluation");
#endif
  }
  // __launch_bounds__ edits use the launch's real block size (passed as -DBLOCK_SIZE=N).
  std::string launch_bounds_threads() const override { return "BLOCK_SIZE"; }
  int default_population() const override { return 300; }
  int default_generations() const override { return 50; }

 private:
  GiProblemOptions opt_;
};

}  // namespace

std::unique_ptr<evk::gi::Problem> make_gi_problem(const GiProblemOptions& opt) { return std::make_unique<Problem>(opt); }

}  // namespace evk::reg_deform
