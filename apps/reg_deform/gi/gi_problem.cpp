#include "gi/gi_problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>

#include "core/field/active.hpp"
#include "core/field/field_cpu.hpp"
#include "core/field/gpu_field.hpp"
#include "core/field/grid_make.hpp"
#include "core/field/random_case.hpp"
#include "core/kernel_config.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#include "evk_kernels/reg_deform_original.hpp"

#if defined(EVK_HAVE_CUDA)
#include "evk/cuda_check.hpp"
#endif

namespace evk::reg_deform {

evk::gi::Check penalize(const FieldDiff& d, std::size_t total) { return penalize(d.worst, d.unset, d.wrong, d.over, total); }

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
  explicit Evaluation(const GiCaseData& d) : describe_(d.describe), dense_(d.mask.empty()) {
    geo_ = d.geo;
    layout_ = tile_layout(geo_, 5);
    tiles_ = active_tiles(geo_, d.mask, layout_);
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
          const auto p = bspline_position(d.grid, x, y, z);
          const std::size_t i = t * 25 + e;
          inside_[i] = 1;
          for (int a = 0; a < 3; ++a) ref_[3 * i + a] = static_cast<float>(p[a]);
        }
      }
    });
    for (auto v : inside_) work_ += v;
    ref_dev_.upload(ref_.data(), ref_.size());
    inside_dev_.upload(inside_.data(), inside_.size());
    grid_.upload(d.grid);
    list_.upload(tiles_.data(), tiles_.size());
    out_.resize(tiles_.size() * 25 + 32);
    basis_[0] = std::make_unique<gpu::DeviceBasis>(false);
    basis_[1] = std::make_unique<gpu::DeviceBasis>(true);
    EVK_CUDA(cudaDeviceSynchronize());
  }
  std::string describe() const override {
    return describe_ + " (" + std::to_string(tiles_.size()) + " tiles, " + std::to_string(work_) + " voxels)";
  }
  double work_items() const override { return static_cast<double>(work_); }
  evk::gi::Properties properties() const override {
    return {{"voxels", static_cast<double>(work_)}, {"spacing", 5}, {"dense", dense_ ? 1.0 : 0.0}};
  }
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
    // float4 per tile entry against three reference floats, entries outside the volume skipped
    const FieldDiff d = gpu::field_diff_gpu(reinterpret_cast<const float*>(out_.get()), {4, 1}, ref_dev_.get(), {3, 1},
                                            inside_dev_.get(), tiles_.size() * 25, kTolerance, kWrong, diff_, s);
    return penalize(d, work_);
  }

 private:
  std::string describe_;
  bool dense_ = false;
  Geometry geo_;
  TileLayout layout_;
  std::vector<std::uint32_t> tiles_;
  std::vector<float> ref_;
  std::vector<std::uint8_t> inside_;
  gpu::Buffer<float> ref_dev_;
  gpu::Buffer<std::uint8_t> inside_dev_;
  gpu::Buffer<double> diff_;
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
  std::vector<evk::gi::SizeClass> size_classes() const override {
    return {{"paper", "the paper's random case: a deformed white-noise sphere in a 217^3 cube (~1.7 M active voxels)"},
            {"head1mm", "a dense whole-head volume at 1 mm: 197x233x189 = 8.7 M voxels (ICBM 2009a geometry)"},
            {"head2mm", "a dense whole-head volume at 2 mm: 91x109x91 = 0.9 M voxels (MNI152 / Colin 27 / avg152)"}};
  }
  std::vector<std::string> property_names() const override { return {"spacing", "voxels", "dense"}; }
  std::string class_of(const evk::gi::Properties& request) const override {
    // a masked request is the paper's kind of case; a dense one a head at 1 mm or 2 mm by size
    auto get = [&](const char* k, double d) {
      auto it = request.find(k);
      return it == request.end() ? d : it->second;
    };
    if (get("dense", 1) == 0) return "paper";
    return size_class_of(static_cast<long long>(get("voxels", 0)));  // one definition with the tool's dispatch
  }
  std::vector<std::string> constraints(const evk::gi::Config& cfg) const override {
    // the spacing as the compile-time constant 5 (the tile kernel runs at spacing 5 in any case)
    if (KernelConfig::from_map(cfg).const_spacing) return {"spacing == 5"};
    return {};
  }
  std::unique_ptr<evk::gi::Evaluation> make_evaluation(std::uint64_t seed, bool holdout,
                                                       const std::string& cls) const override {
    check_class(cls);
#if defined(EVK_HAVE_CUDA)
    return std::make_unique<Evaluation>(gi_case_data(seed, holdout, cls, opt_));
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

namespace {
struct HeadDef {
  const char* file;
  Geometry fallback;
};
const std::vector<HeadDef>& heads(bool one_mm) {
  static const std::vector<HeadDef> mm1 = {
      {"icbm152_2009a_t1_1mm.nii.gz", Geometry::make(197, 233, 189, 1, 1, 1, {-98, -134, -72})}};
  static const std::vector<HeadDef> mm2 = {
      {"mni152_t1_2mm.nii.gz", Geometry::make(91, 109, 91, 2, 2, 2, {-90, -126, -72})},
      {"colin27_t1_2mm.nii", Geometry::make(91, 109, 91, 2, 2, 2, {-90, -126, -72})},
      {"avg152_t1_2mm.nii", Geometry::make(91, 109, 91, 2, 2, 2, {-90, -126, -72})}};
  return one_mm ? mm1 : mm2;
}
}  // namespace

std::filesystem::path gi_shared_data_dir(const GiProblemOptions& opt) {
  if (!opt.shared_data.empty()) return opt.shared_data;
  return std::filesystem::path("..") / "shared" / "data";
}

GiCaseSpec gi_case_spec(std::uint64_t seed, bool holdout, const std::string& cls) {
  GiCaseSpec c;
  c.size_class = cls;
  c.seed = seed;
  c.holdout = holdout;
  c.case_seed = holdout ? 2 * seed + 1 : 2 * seed;  // training and hold-out cases never overlap
  if (cls == "paper") return c;
  if (cls != "head1mm" && cls != "head2mm")
    input_error("--class", "'" + cls + "' is not a reg_deform size class (paper, head1mm, head2mm)");
  const auto& h = heads(cls == "head1mm");
  c.head = h[static_cast<std::size_t>(seed % h.size())].file;
  return c;
}

GiCaseData gi_case_data(std::uint64_t seed, bool holdout, const std::string& cls, const GiProblemOptions& opt) {
  const GiCaseSpec spec = gi_case_spec(seed, holdout, cls);
  GiCaseData d;
  const std::string role = holdout ? "hold-out" : "training";
  if (spec.head.empty()) {
    RandomCaseOptions o;
    o.seed = spec.case_seed;
    o.size = opt.case_size;
    RandomCase rc = make_random_case(o);
    d.geo = rc.image.geo;
    d.mask = std::move(rc.mask);
    d.grid = std::move(rc.grid);
    d.describe = role + " random case " + std::to_string(d.geo.nx) + "^3 seed " + std::to_string(seed);
    return d;
  }
  // a dense head: the brain's geometry (or the same size when the shared data is absent), a grid at
  // spacing 5 perturbed as `reg_deform grid --perturb 5 --seed S` perturbs it
  const auto& h = heads(cls == "head1mm");
  const HeadDef* def = nullptr;
  for (const auto& x : h)
    if (spec.head == x.file) def = &x;
  d.geo = def->fallback;
  std::string from = "synthetic geometry";
  const std::filesystem::path path = gi_shared_data_dir(opt) / "brain" / spec.head;
  if (opt.read_geometry && std::filesystem::exists(path)) {
    static std::mutex mu;
    static std::map<std::string, Geometry> cache;  // a worker reads each brain once
    std::lock_guard<std::mutex> lk(mu);
    auto it = cache.find(path.string());
    if (it == cache.end()) it = cache.emplace(path.string(), opt.read_geometry(path.string())).first;
    d.geo = it->second;
    from = spec.head;
  }
  d.grid = make_grid(d.geo, 5);
  perturb_grid(d.grid, 5, spec.case_seed);
  d.describe = role + " " + cls + " dense " + std::to_string(d.geo.nx) + "x" + std::to_string(d.geo.ny) + "x" +
               std::to_string(d.geo.nz) + " (" + from + ") seed " + std::to_string(seed);
  return d;
}

}  // namespace evk::reg_deform
