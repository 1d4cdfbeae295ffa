// The expert dense-field kernel (kernels/original/reg_deform/field_expert.cu) against the exact CPU
// reference: every voxel of the dense field (identity outside the mask), field poisoned (NaN) before
// each launch; odd and non-cubic sizes, oblique sforms, masks with holes, deformation and
// displacement, integer and fractional per-axis spacings, every TILE_Y; the 217^3 paper case and a
// dense 1 mm head; the tool (`field --kernel expert`), and the expert GI problem's evaluation.
// Tolerance: the paper's 1e-3 mm (float32 arithmetic on coordinates of ~100 mm gives ~1e-5).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/field/field_cpu.hpp"
#include "core/field/gpu_field.hpp"
#include "core/field/gpu_field_expert.hpp"
#include "core/field/grid_make.hpp"
#include "core/field/random_case.hpp"
#include "core/kernel_config.hpp"
#include "core/register/reg_grid.hpp"
#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/device.hpp"
#include "evk_testing.hpp"
#include "gi/gi_problem.hpp"
#include "io/nifti_io.hpp"

namespace rd = evk::reg_deform;
namespace gpu = evk::reg_deform::gpu;

namespace {
constexpr double kTol = 1e-3;  // mm, the paper's tolerance

struct Result {
  double max_err = 0;
  std::size_t nan = 0;
};
Result compare(const rd::Field& got, const rd::Field& want) {
  Result r;
  EXPECT_EQ(got.data.size(), want.data.size());
  for (std::size_t i = 0; i < want.data.size() && i < got.data.size(); ++i) {
    if (!std::isfinite(got.data[i])) {
      ++r.nan;
      continue;
    }
    r.max_err = std::max(r.max_err, double(std::fabs(got.data[i] - want.data[i])));
  }
  return r;
}

// The field through FieldEngine with the expert kernel; `expert` reports whether it ran.
Result run_expert(const rd::Geometry& ref, const rd::Grid& grid, const rd::Mask& mask, int tile_y, bool disp,
                  const rd::Field& want, bool* expert = nullptr) {
  gpu::FieldOptions fo;
  fo.expert = true;
  fo.expert_config.tile_y = tile_y;
  gpu::FieldEngine eng(ref, mask, grid.sx, grid.sy, grid.sz, fo);
  eng.set_grid(grid);
  eng.poison();
  eng.compute(disp);
  EVK_CUDA(cudaDeviceSynchronize());
  if (expert) *expert = eng.expert();
  return compare(eng.download(disp), want);
}

rd::Grid perturbed(const rd::Geometry& ref, const std::array<double, 3>& s, std::uint64_t seed) {
  rd::Grid g = rd::make_grid3(ref, s);
  rd::SplitMix64 rng(seed);
  for (auto& v : g.data) v = static_cast<float>(v + rng.uniform(-5, 5));
  return g;
}
}  // namespace

TEST(RegGpuExpert, OddSizesSpacingsMasksTilesDisplacement) {
  EVK_REQUIRE_GPU();
  // non-cubic odd references (one narrower than a tile, one spanning several tiles and partial
  // last tiles in x and y), oblique sforms
  std::vector<rd::Geometry> refs = {rd::Geometry::make(37, 29, 23, 1.1, 0.9, 1.3, {-20, 15, 4}),
                                    rd::Geometry::make(70, 45, 9, 1, 1, 2, {-35, -20, 0}),
                                    rd::Geometry::make(5, 3, 2, 1, 1, 1, {0, 0, 0})};
  refs[0].sform.m[0][1] = 0.2;
  refs[0].update_world();
  refs[1].sform.m[2][0] = -0.1;
  refs[1].update_world();
  const std::vector<std::array<double, 3>> spacings = {
      {5, 5, 5}, {3, 3, 3}, {1, 1, 1}, {2.5, 3, 7}, {1, 1.5, 4}, {5.5, 4.25, 6}, {7, 2, 1}};
  double worst = 0;
  int runs = 0;
  for (const auto& ref : refs) {
    rd::Mask mask(ref.voxels(), 0);
    for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 5 != 0) && ((i / 37) % 7 != 3);
    for (const auto& s : spacings) {
      const rd::Grid grid = perturbed(ref, s, 42 + runs);
      for (bool disp : {false, true}) {
        rd::FieldOptions co;
        co.displacement = disp;
        for (const rd::Mask& m : {mask, rd::Mask{}}) {
          const rd::Field want = rd::compute_field_cpu(ref, grid, m, co);
          for (int tile_y : {8, 16, 32}) {
            bool expert = false;
            const Result r = run_expert(ref, grid, m, tile_y, disp, want, &expert);
            const std::string what = std::to_string(ref.nx) + "x" + std::to_string(ref.ny) + "x" + std::to_string(ref.nz) +
                                     " spacing " + std::to_string(s[0]) + "," + std::to_string(s[1]) + "," +
                                     std::to_string(s[2]) + " tile_y " + std::to_string(tile_y) + " disp " +
                                     std::to_string(disp) + " mask " + std::to_string(!m.empty());
            EXPECT_TRUE(expert) << what;
            EXPECT_EQ(r.nan, 0u) << what;
            EXPECT_LE(r.max_err, kTol) << what;
            worst = std::max(worst, r.max_err);
            ++runs;
          }
        }
      }
    }
  }
  std::printf("[measured] expert kernel, %d runs (odd sizes, 7 spacings, masks, displacement, TILE_Y 8/16/32): "
              "max |err| %.3g mm\n",
              runs, worst);
}

// Below one voxel the expert kernel does not apply: the engine runs the generic kernel (still exact).
TEST(RegGpuExpert, SpacingBelowOneVoxelFallsBackToGeneric) {
  EVK_REQUIRE_GPU();
  const rd::Geometry ref = rd::Geometry::make(19, 17, 11, 1, 1, 1, {0, 0, 0});
  const rd::Grid grid = perturbed(ref, {0.75, 2, 2}, 9);
  const rd::Field want = rd::compute_field_cpu(ref, grid);
  bool expert = true;
  const Result r = run_expert(ref, grid, {}, 32, false, want, &expert);
  EXPECT_FALSE(expert);
  EXPECT_EQ(r.nan, 0u);
  EXPECT_LE(r.max_err, kTol);
}

// The sizes the speed target is about: the paper's 217^3 case (mask) and a dense 1 mm head.
TEST(RegGpuExpert, PaperCase217AndDenseHead1mm) {
  EVK_REQUIRE_GPU();
  rd::RandomCaseOptions o;
  o.seed = 11;
  const rd::RandomCase rc = rd::make_random_case(o);
  const rd::Field want = rd::compute_field_cpu(rc.image.geo, rc.grid, rc.mask);
  const Result r = run_expert(rc.image.geo, rc.grid, rc.mask, 32, false, want);
  EXPECT_EQ(r.nan, 0u);
  EXPECT_LE(r.max_err, kTol);
  // the ICBM 2009a geometry (the brain itself when present)
  rd::Geometry head = rd::Geometry::make(197, 233, 189, 1, 1, 1, {-98, -134, -72});
  const auto dir = evk::testing::shared_data_dir();
  if (!dir.empty() && std::filesystem::exists(dir / "brain" / "icbm152_2009a_t1_1mm.nii.gz"))
    head = rd::read_volume(dir / "brain" / "icbm152_2009a_t1_1mm.nii.gz").geo;
  rd::Grid grid = rd::make_grid(head, 5);
  rd::perturb_grid(grid, 5, 7);
  const rd::Field hw = rd::compute_field_cpu(head, grid);
  for (int tile_y : {8, 16, 32}) {
    const Result h = run_expert(head, grid, {}, tile_y, false, hw);
    EXPECT_EQ(h.nan, 0u);
    EXPECT_LE(h.max_err, kTol);
    std::printf("[measured] expert TILE_Y %d: 217^3 paper case max |err| %.3g mm; dense head %dx%dx%d max |err| %.3g mm\n",
                tile_y, r.max_err, head.nx, head.ny, head.nz, h.max_err);
  }
}

// The engine's per-iteration use (register): the grid re-uploaded in place, the field recomputed.
TEST(RegGpuExpert, RecomputesAfterGridUpdates) {
  EVK_REQUIRE_GPU();
  const rd::Geometry ref = rd::Geometry::make(41, 37, 33, 2, 2, 2, {-40, -36, -30});
  gpu::FieldOptions fo;
  fo.expert = true;
  rd::Grid grid = perturbed(ref, {2.5, 2.5, 2.5}, 1);
  gpu::FieldEngine eng(ref, {}, grid.sx, grid.sy, grid.sz, fo);
  for (int it = 0; it < 3; ++it) {
    grid = perturbed(ref, {2.5, 2.5, 2.5}, 100 + it);
    eng.set_grid(grid);
    eng.poison();
    eng.run_kernel();  // deformation, as the register loop calls it
    eng.assemble(false);
    const Result r = compare(eng.download(false), rd::compute_field_cpu(ref, grid));
    EXPECT_EQ(r.nan, 0u) << it;
    EXPECT_LE(r.max_err, kTol) << it;
  }
}

// The tool: `field --kernel expert --backend gpu` reports the expert kernel and writes the CPU's field.
TEST(RegGpuExpert, ToolFieldKernelExpert) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir tmp;
  rd::RandomCaseOptions o;
  o.seed = 5;
  o.size = 64;
  const rd::RandomCase rc = rd::make_random_case(o);
  rd::write_volume(tmp / "ref.nii.gz", rc.image);
  rd::write_grid(tmp / "cpp.nii.gz", rc.grid);
  rd::write_mask(tmp / "mask.nii.gz", rc.image.geo, rc.mask);
  for (bool disp : {false, true}) {
    rd::FieldOptions co;
    co.displacement = disp;
    const rd::Field want = rd::compute_field_cpu(rc.image.geo, rc.grid, rc.mask, co);
    const auto out = tmp / "field.nii.gz";
    const auto r = evk::testing::run_tool(
        "reg_deform", "field --ref " + (tmp / "ref.nii.gz").string() + " --cpp " + (tmp / "cpp.nii.gz").string() +
                          " --mask " + (tmp / "mask.nii.gz").string() + " -o " + out.string() +
                          " --kernel expert --backend gpu --json --verbose" + (disp ? " --displacement" : ""));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("kernel").get<std::string>().rfind("expert", 0), 0u) << r.out;
    EXPECT_NE(r.err.find("expert tile 32x32"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("expert (dense"), std::string::npos) << r.out;  // gpu_path
    const rd::Transformation t = rd::read_transformation(out, rc.image.geo);
    const Result res = compare(t.field, want);
    EXPECT_EQ(res.nan, 0u);
    EXPECT_LE(res.max_err, kTol);
  }
}

// The expert GI problem: its evaluation accepts the seed with zero penalty (default and other
// TILE_Y) and penalises a candidate whose plane writes were deleted.
TEST(RegGpuExpert, GiEvaluationAcceptsTheSeedAndPenalisesABrokenKernel) {
  EVK_REQUIRE_GPU();
  rd::GiProblemOptions po;
  po.case_size = 80;
  auto p = rd::make_expert_gi_problem(po);
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
  for (const char* cls : {"paper", "head2mm"}) {
    auto ev = p->make_evaluation(1, false, cls);
    for (const char* tile : {"32", "8"}) {
      auto cfg = p->default_config();
      cfg["TILE_Y"] = tile;
      auto good = compile(p->kernel_source(), cfg);
      evk::CudaLibrary lib(good.cubin.data());
      ev->poison(nullptr);
      ev->launch(lib.kernel(p->kernel_entry().c_str()), cfg, nullptr);
      const auto c = ev->check(nullptr);
      EXPECT_EQ(c.penalty, 0.0) << cls << " TILE_Y " << tile << ": " << c.summary;
      EXPECT_LE(c.max_error, kTol);
    }
    std::string src = p->kernel_source();
    for (const std::string w : {"field[v] = px;", "field[plane + v] = py;", "field[2 * plane + v] = pz;"})
      src.replace(src.find(w), w.size(), "");
    auto broken = compile(src, p->default_config());
    evk::CudaLibrary lib3(broken.cubin.data());
    ev->poison(nullptr);
    ev->launch(lib3.kernel(p->kernel_entry().c_str()), p->default_config(), nullptr);
    const auto c = ev->check(nullptr);
    EXPECT_GT(c.penalty, 0.0);
    EXPECT_NEAR(c.bad_fraction, 1.0, 1e-9) << c.summary;
  }
}
