// GPU kernels against the exact CPU reference, every element, outputs poisoned (NaN) first:
// the original tile kernel in all 64 macro combinations and several block sizes, the generic
// kernel at spacing 5 and other spacings, odd sizes, masks with holes, a real brain, resampling,
// and the GI evaluation path. Tolerance: the paper's 1e-3 mm (float32 gives ~1e-5).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/parallel.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "active.hpp"
#include "field_cpu.hpp"
#include "gi_problem.hpp"
#include "gpu_field.hpp"
#include "grid_make.hpp"
#include "nifti_io.hpp"
#include "random_case.hpp"
#include "resample_cpu.hpp"

namespace rd = evk::reg_deform;
namespace gpu = evk::reg_deform::gpu;

namespace {
constexpr double kTol = 1e-3;  // mm, the paper's tolerance

struct Result {
  double max_err = 0;
  std::size_t nan = 0;
};

// Every voxel of the dense GPU field vs the CPU field (masked voxels included: identity there).
Result compare(const rd::Field& got, const rd::Field& want) {
  Result r;
  for (std::size_t i = 0; i < want.data.size(); ++i) {
    if (!std::isfinite(got.data[i])) {
      ++r.nan;
      continue;
    }
    r.max_err = std::max(r.max_err, double(std::fabs(got.data[i] - want.data[i])));
  }
  return r;
}

Result run_gpu(const rd::Geometry& ref, const rd::Grid& grid, const rd::Mask& mask, const gpu::FieldOptions& fo,
               const rd::Field& want, bool displacement = false, bool* tiled = nullptr) {
  gpu::FieldEngine eng(ref, mask, grid.sx, grid.sy, grid.sz, fo);
  eng.set_grid(grid);
  eng.poison();
  eng.compute(displacement);
  EVK_CUDA(cudaDeviceSynchronize());
  if (tiled) *tiled = eng.tiled();
  return compare(eng.download(displacement), want);
}

// Precompiles every configuration in parallel into the NVRTC cache (load() then hits it).
void precompile_all() {
  static bool done = false;
  if (done) return;
  const auto cfgs = rd::KernelConfig::all_combinations();
  const int cc = evk::gpu_environment().devices[0].cc();
  const std::string src = rd::make_gi_problem()->kernel_source();
  evk::parallel_for(cfgs.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      if (cfgs[i].macros_default()) continue;
      evk::NvrtcRequest req;
      req.source = src;
      req.name = "reg_deform.cu";
      req.options = cfgs[i].compile_options();  // exactly what Kernels::load asks for
      req.cc = cc;
      evk::CompileCache().compile(req);
    }
  });
  done = true;
}

struct Case {
  rd::RandomCase rc;
  rd::Field want;
};
const Case& random_217() {
  static Case c = [] {
    rd::RandomCaseOptions o;
    o.seed = 11;
    Case k{rd::make_random_case(o), {}};
    k.want = rd::compute_field_cpu(k.rc.image.geo, k.rc.grid, k.rc.mask);
    return k;
  }();
  return c;
}
}  // namespace

TEST(RegGpu, AllMacroCombinationsMatchCpuOnRandomCase217) {
  EVK_REQUIRE_GPU();
  precompile_all();
  const Case& c = random_217();
  double worst = 0;
  for (const auto& cfg : rd::KernelConfig::all_combinations()) {
    gpu::FieldOptions fo;
    fo.config = cfg;
    bool tiled = false;
    const Result r = run_gpu(c.rc.image.geo, c.rc.grid, c.rc.mask, fo, c.want, false, &tiled);
    EXPECT_TRUE(tiled);
    EXPECT_EQ(r.nan, 0u) << cfg.describe();
    EXPECT_LE(r.max_err, kTol) << cfg.describe();
    worst = std::max(worst, r.max_err);
  }
  std::printf("[measured] 64 macro combinations, 217^3 random case seed 11 (%zu active voxels): max |err| %.3g mm\n",
              rd::count_active(c.rc.image.geo, c.rc.mask), worst);
}

TEST(RegGpu, BlockSizesAndGenericKernelOnRandomCase) {
  EVK_REQUIRE_GPU();
  const Case& c = random_217();
  for (int bs : {32, 64, 96, 128, 160, 192, 256, 512, 1024}) {
    gpu::FieldOptions fo;
    fo.config.block_size = bs;
    const Result r = run_gpu(c.rc.image.geo, c.rc.grid, c.rc.mask, fo, c.want);
    EXPECT_EQ(r.nan, 0u) << bs;
    EXPECT_LE(r.max_err, kTol) << bs;
    fo.generic = true;
    bool tiled = true;
    const Result g = run_gpu(c.rc.image.geo, c.rc.grid, c.rc.mask, fo, c.want, false, &tiled);
    EXPECT_FALSE(tiled);
    EXPECT_EQ(g.nan, 0u) << bs;
    EXPECT_LE(g.max_err, kTol) << bs;
    if (bs == 192) std::printf("[measured] block 192: tile5 max |err| %.3g mm, generic %.3g mm\n", r.max_err, g.max_err);
  }
}

TEST(RegGpu, OddSizesMasksWithHolesOtherSpacingsDisplacement) {
  EVK_REQUIRE_GPU();
  precompile_all();
  rd::RandomCaseOptions o;
  o.size = 37;
  o.seed = 3;
  rd::RandomCase rc = rd::make_random_case(o);
  // a non-cubic odd reference with an oblique sform, holes in the mask
  rd::Geometry ref = rd::Geometry::make(37, 29, 23, 1.1, 0.9, 1.3, {-20, 15, 4});
  ref.sform.m[0][1] = 0.2;
  ref.update_world();
  rd::Mask mask(ref.voxels(), 0);
  for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 5 != 0) && ((i / 37) % 7 != 3);
  double worst = 0;
  for (double s : {5.0, 3.0, 2.5, 7.0}) {
    rd::Grid grid = rd::make_grid(ref, s);
    rd::SplitMix64 rng(42);
    for (auto& v : grid.data) v = static_cast<float>(v + rng.uniform(-5, 5));
    for (bool disp : {false, true}) {
      rd::FieldOptions co;
      co.displacement = disp;
      for (const rd::Mask& m : {mask, rd::Mask{}}) {
        const rd::Field want = rd::compute_field_cpu(ref, grid, m, co);
        for (bool generic : {false, true}) {
          for (const auto& cfg : {rd::KernelConfig{}, rd::KernelConfig::all_combinations().back()}) {
            gpu::FieldOptions fo;
            fo.generic = generic;
            fo.config = cfg;
            bool tiled = false;
            const Result r = run_gpu(ref, grid, m, fo, want, disp, &tiled);
            EXPECT_EQ(tiled, s == 5 && !generic);
            EXPECT_EQ(r.nan, 0u) << "spacing " << s << " generic " << generic << " disp " << disp;
            EXPECT_LE(r.max_err, kTol) << "spacing " << s << " generic " << generic << " disp " << disp;
            worst = std::max(worst, r.max_err);
          }
        }
      }
    }
  }
  std::printf("[measured] odd 37x29x23, spacings 5/3/2.5/7, masks with holes, deformation+displacement: max |err| %.3g mm\n", worst);
}

TEST(RegGpu, RealBrainDense) {
  EVK_REQUIRE_GPU();
  const auto dir = evk::testing::shared_data_dir();
  if (dir.empty() || !std::filesystem::exists(dir / "brain" / "icbm152_2009a_t1_1mm.nii.gz"))
    GTEST_SKIP() << "../shared/data/brain absent";
  const rd::Volume v = rd::read_volume(dir / "brain" / "icbm152_2009a_t1_1mm.nii.gz");
  rd::Grid grid = rd::make_grid(v.geo, 5);
  rd::SplitMix64 rng(7);
  for (auto& x : grid.data) x = static_cast<float>(x + rng.uniform(-5, 5));
  const rd::Field want = rd::compute_field_cpu(v.geo, grid);
  for (bool generic : {false, true}) {
    gpu::FieldOptions fo;
    fo.generic = generic;
    const Result r = run_gpu(v.geo, grid, {}, fo, want);
    EXPECT_EQ(r.nan, 0u);
    EXPECT_LE(r.max_err, kTol);
    std::printf("[measured] icbm152 1 mm %dx%dx%d dense, %s: max |err| %.3g mm\n", v.geo.nx, v.geo.ny, v.geo.nz,
                generic ? "generic" : "tile5", r.max_err);
  }
}

TEST(RegGpu, ResampleMatchesCpu) {
  EVK_REQUIRE_GPU();
  rd::Volume v;
  v.geo = rd::Geometry::make(41, 35, 27, 1.0, 1.2, 1.5, {5, -3, 2});
  v.data.resize(v.geo.voxels());
  for (std::size_t i = 0; i < v.data.size(); ++i) v.data[i] = static_cast<float>(std::sin(i * 0.01) * 100 + (i % 13));
  rd::Grid grid = rd::make_grid(v.geo, 5);
  rd::SplitMix64 rng(1);
  for (auto& x : grid.data) x = static_cast<float>(x + rng.uniform(-3, 3));
  const rd::Field f = rd::compute_field_cpu(v.geo, grid);
  const rd::Field id = rd::compute_field_cpu(v.geo, rd::make_grid(v.geo, 5));
  for (auto interp : {rd::Interp::nearest, rd::Interp::linear, rd::Interp::cubic}) {
    rd::ResampleOptions o;
    o.interp = interp;
    o.pad = -1;
    const rd::Volume a = rd::resample_cpu(v, f, o), b = gpu::resample(v, f, o);
    std::size_t differ = 0;
    double worst = 0;
    for (std::size_t i = 0; i < a.data.size(); ++i) {
      const double d = std::fabs(a.data[i] - b.data[i]);
      worst = std::max(worst, d);
      differ += d > 0.05;  // float vs double positions: nearest may flip at exact ties, borders may flip pad
    }
    EXPECT_LE(differ, a.data.size() / 1000) << rd::to_string(interp);
    const rd::Volume same = gpu::resample(v, id, o);
    double e = 0;
    for (std::size_t i = 0; i < v.data.size(); ++i) e = std::max(e, double(std::fabs(same.data[i] - v.data[i])));
    EXPECT_LE(e, interp == rd::Interp::nearest ? 0.0 : 0.05) << "identity " << rd::to_string(interp);
  }
}

TEST(RegGpu, GiEvaluationAcceptsTheOriginalAndPenalisesABrokenKernel) {
  EVK_REQUIRE_GPU();
  rd::GiProblemOptions po;
  po.case_size = 80;
  auto p = rd::make_gi_problem(po);
  auto ev = p->make_evaluation(1, false);
  const int cc = evk::gpu_environment().devices[0].cc();
  auto compile = [&](const std::string& src, const evk::gi::Config& cfg) {
    evk::NvrtcRequest req;
    req.source = src;
    req.options = p->compile_options(cfg);
    req.cc = cc;
    auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << r.log;
    return r;
  };
  auto cfg = p->default_config();
  auto good = compile(p->kernel_source(), cfg);
  evk::CudaLibrary lib(good.cubin.data());
  ev->poison(nullptr);
  ev->launch(lib.kernel(p->kernel_entry().c_str()), cfg, nullptr);
  auto c = ev->check(nullptr);
  EXPECT_EQ(c.penalty, 0.0) << c.summary;
  EXPECT_LE(c.max_error, kTol);
  // The paper's C2050/K20c trick: replace the < 16 guard by the always-true tile guard -> still exact.
  std::string src = p->kernel_source();
  const std::string guard = "if ((threadIdx.x & 31) < 16) {";
  src.replace(src.find(guard), guard.size(), "if (tid < activeTileNumber) {");
  cfg["directxBasis"] = "true";
  cfg["BLOCK_SIZE"] = "128";
  auto trick = compile(src, cfg);
  evk::CudaLibrary lib2(trick.cubin.data());
  ev->poison(nullptr);
  ev->launch(lib2.kernel(p->kernel_entry().c_str()), cfg, nullptr);
  c = ev->check(nullptr);
  EXPECT_EQ(c.penalty, 0.0) << c.summary;
  // Broken: the output write deleted -> every voxel unset -> penalty.
  src = p->kernel_source();
  const std::string write = "positionField[tid2] = displacement;";
  src.replace(src.find(write), write.size(), "");
  auto broken = compile(src, p->default_config());
  evk::CudaLibrary lib3(broken.cubin.data());
  ev->poison(nullptr);
  ev->launch(lib3.kernel(p->kernel_entry().c_str()), p->default_config(), nullptr);
  c = ev->check(nullptr);
  EXPECT_GT(c.penalty, 0.0);
  EXPECT_NEAR(c.bad_fraction, 1.0, 1e-9) << c.summary;
}
