// GPU kernels against the exact CPU reference, every element, outputs poisoned (NaN) first:
// the original tile kernel in all 64 macro combinations and several block sizes, the generic
// kernel at spacing 5 and other spacings, odd sizes, masks with holes, a real brain, resampling,
// the GI evaluation path, and evolved genomes (config only, code edits) through the engine and the tool. Tolerance: the paper's 1e-3 mm (float32 gives ~1e-5).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/parallel.hpp"
#include "evk/error.hpp"
#include "evk/gi/grammar.hpp"
#include "gi/kernel_variant.hpp"
#include "evk_testing.hpp"
#include "core/field/active.hpp"
#include "core/field/field_cpu.hpp"
#include "gi/gi_problem.hpp"
#include "core/field/gpu_field.hpp"
#include "core/field/grid_make.hpp"
#include "io/nifti_io.hpp"
#include "core/field/random_case.hpp"
#include "core/field/resample_cpu.hpp"

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
  rd::gpu::Kernels::precompile(rd::KernelConfig::all_combinations(), evk::gpu_environment().devices[0].cc());
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

// The transposed scatter (default) writes exactly what the first one-thread-per-entry scatter wrote:
// bit for bit, poisoned field, masks with holes, partial last block, deformation and displacement.
TEST(RegGpu, TransposedScatterEqualsNaiveScatter) {
  EVK_REQUIRE_GPU();
  rd::Geometry ref = rd::Geometry::make(41, 33, 27, 1.1, 0.9, 1.3, {-20, 15, 4});
  rd::Mask mask(ref.voxels(), 0);
  for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 5 != 0) && ((i / 41) % 7 != 3);
  rd::Grid grid = rd::make_grid(ref, 5);
  rd::SplitMix64 rng(9);
  for (auto& v : grid.data) v = static_cast<float>(v + rng.uniform(-5, 5));
  for (bool disp : {false, true}) {
    for (const rd::Mask& m : {mask, rd::Mask{}}) {
      std::vector<float> got[2];
      for (int naive = 0; naive < 2; ++naive) {
        gpu::FieldOptions fo;
        fo.naive_scatter = naive;
        gpu::FieldEngine eng(ref, m, 5, 5, 5, fo);
        ASSERT_TRUE(eng.tiled());
        ASSERT_NE(eng.tiles().size() % 32, 0u);  // a partial last block
        eng.set_grid(grid);
        eng.poison();
        eng.compute(disp);
        got[naive] = eng.download(disp).data;
      }
      std::size_t nan = 0, differ = 0;
      for (std::size_t i = 0; i < got[0].size(); ++i) {
        nan += !std::isfinite(got[0][i]);
        differ += std::memcmp(&got[0][i], &got[1][i], sizeof(float)) != 0;
      }
      EXPECT_EQ(nan, 0u) << "disp " << disp << " masked " << !m.empty();
      EXPECT_EQ(differ, 0u) << "disp " << disp << " masked " << !m.empty();
    }
  }
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

// ---- evolved genomes through the GPU backend ---------------------------------------------------
namespace {
std::string rule_named(const evk::gi::Grammar& g, evk::gi::RuleType t, const std::string& text) {
  for (const auto& r : g.rules)
    if (r.type == t && r.text == text) return "<" + r.name + ">";
  ADD_FAILURE() << "no rule " << text;
  return "";
}
rd::KernelChoice choice_of(const std::string& genome) {
  evk::Variant v;
  v.kernel = "reg_deform";
  v.id = "test-genome";
  v.genome = genome;
  return rd::kernel_for_variant(v);
}
// The genomes the tests run: config only, and correctness-preserving code edits of the paper's kind
// (the x-sum guard replaced by the tile guard, redundant re-initialisations and the clamp of a
// value that is never negative deleted, loops unrolled, __restrict__, __launch_bounds__(BLOCK_SIZE)).
struct Genomes {
  std::string config_only = "constantBasis=true RemX=true BLOCK_SIZE=256";
  std::string code_edit, broken;
  Genomes() {
    auto p = rd::make_gi_problem();
    const auto g = evk::gi::make_grammar(*p);
    using T = evk::gi::RuleType;
    auto only = [&](T t) { return "<" + g.rules.at(g.rules_of(t).at(0)).name + ">"; };
    std::string pragma_a;  // the #pragma rule of the loop over a
    for (const auto& r : g.rules)
      if (r.type == T::for2 && r.text == "a < 4") pragma_a = "<pragma_K_" + std::to_string(r.line) + ">";
    EXPECT_FALSE(pragma_a.empty());
    code_edit = "directxBasis=true BLOCK_SIZE=128 " + rule_named(g, T::if_cond, "((threadIdx.x & 31) < 16)") +
                rule_named(g, T::if_cond, "(tid < activeTileNumber)") + " " +
                rule_named(g, T::line, "partial = make_float4(0.0f, 0.0f, 0.0f, 0.0f);") + " " +
                rule_named(g, T::line, "displacement = make_float4(0.0f, 0.0f, 0.0f, 0.0f);") + " " +
                rule_named(g, T::line, "relative = relative > 0 ? relative : 0.0f;") + " " + pragma_a + "<pragma_K0> " +
                only(T::restrict_args) + "<restrict_on> " + only(T::launch_bounds) + "<launchbounds_K0>";
    broken = rule_named(g, T::line, "positionField[tid2] = displacement;");  // output never written
  }
};
}  // namespace

TEST(RegGpu, GenomeVariantsMatchCpuThroughTheFieldEngine) {
  EVK_REQUIRE_GPU();
  const Case& c = random_217();
  const Genomes gs;
  gpu::FieldOptions orig;
  gpu::FieldEngine base(c.rc.image.geo, c.rc.mask, 5, 5, 5, orig);
  base.set_grid(c.rc.grid);
  base.poison();
  base.compute(false);
  const rd::Field f0 = base.download(false);
  for (const std::string& genome : {gs.config_only, gs.code_edit}) {
    const rd::KernelChoice k = choice_of(genome);
    ASSERT_FALSE(k.source.empty());
    gpu::FieldOptions fo;
    fo.config = k.config;
    fo.source = k.source;
    bool tiled = false;
    const Result r = run_gpu(c.rc.image.geo, c.rc.grid, c.rc.mask, fo, c.want, false, &tiled);
    EXPECT_TRUE(tiled);
    EXPECT_EQ(r.nan, 0u) << genome;
    EXPECT_LE(r.max_err, kTol) << genome;
    const Result vs_orig = run_gpu(c.rc.image.geo, c.rc.grid, c.rc.mask, fo, f0);
    std::printf("[measured] genome '%s': max |err| vs CPU %.3g mm, vs original GPU %.3g mm\n", genome.c_str(),
                r.max_err, vs_orig.max_err);
  }
  // The same path with the output write deleted leaves every voxel poisoned: the genome's source is
  // what runs (a path that ignored the genome would pass this).
  const rd::KernelChoice k = choice_of(gs.broken);
  gpu::FieldOptions fo;
  fo.config = k.config;
  fo.source = k.source;
  gpu::FieldEngine eng(c.rc.image.geo, c.rc.mask, 5, 5, 5, fo);
  eng.set_grid(c.rc.grid);
  eng.poison();
  eng.run_kernel();
  const auto compact = eng.download_compact();
  std::size_t unset = 0;
  for (const auto& v : compact) unset += !std::isfinite(v.x);
  EXPECT_EQ(unset, compact.size());
}

// End to end: `reg_deform field --kernel FILE --backend gpu` with both genomes, every voxel of the
// written field vs the CPU reference; --verbose names the evolved variant.
TEST(RegGpu, ToolRunsGenomeFilesOnTheGpu) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir tmp;
  rd::RandomCaseOptions o;
  o.seed = 5;
  o.size = 64;
  const rd::RandomCase rc = rd::make_random_case(o);
  rd::write_volume(tmp / "ref.nii.gz", rc.image);
  rd::write_grid(tmp / "cpp.nii.gz", rc.grid);
  rd::write_mask(tmp / "mask.nii.gz", rc.image.geo, rc.mask);
  const rd::Field want = rd::compute_field_cpu(rc.image.geo, rc.grid, rc.mask);
  const Genomes gs;
  int n = 0;
  for (const std::string& genome : {gs.config_only, gs.code_edit}) {
    const auto file = tmp / ("g" + std::to_string(n++) + ".genome");
    {
      std::ofstream g(file);
      g << "# evokernels genome v1\n# kernel: reg_deform\n# cc: 9.0\n" << genome << "\n";
    }
    const auto out = tmp / "field.nii.gz";
    const auto r = evk::testing::run_tool(
        "reg_deform", "field --ref " + (tmp / "ref.nii.gz").string() + " --cpp " + (tmp / "cpp.nii.gz").string() +
                          " --mask " + (tmp / "mask.nii.gz").string() + " -o " + out.string() + " --kernel " +
                          file.string() + " --backend gpu --verbose");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("evolved genome"), std::string::npos) << r.err;
    const rd::Transformation t = rd::read_transformation(out, rc.image.geo);
    const Result res = compare(t.field, want);
    EXPECT_EQ(res.nan, 0u) << genome;
    EXPECT_LE(res.max_err, kTol) << genome;
  }
}

// The GI check on the device (field_diff_gpu) against the host loop: random fields of odd sizes with
// planted NaN, Inf, small and large errors, in the three layouts the problems use, with and without an
// inside mask. Max and counts are order-independent, so the figures must be identical.
TEST(RegGpu, FieldDiffOnTheDeviceEqualsTheHostLoop) {
  EVK_REQUIRE_GPU();
  using namespace evk::reg_deform;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> pos(-120.0f, 120.0f), small(-0.002f, 0.002f), u(0.0f, 1.0f);
  gpu::Buffer<double> scratch;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(31), std::size_t(1000003), std::size_t(8700001)}) {
    std::vector<float> ref(3 * n), got4(4 * n, 0.0f), planar(3 * n), ref_planar(3 * n);
    std::vector<std::uint8_t> inside(n);
    for (std::size_t i = 0; i < n; ++i) {
      inside[i] = u(rng) < 0.8f;
      for (int a = 0; a < 3; ++a) {
        const float r = pos(rng);
        float g = r;
        const float p = u(rng);
        if (p < 0.001f) g = std::numeric_limits<float>::quiet_NaN();
        else if (p < 0.0015f) g = -std::numeric_limits<float>::infinity();
        else if (p < 0.01f) g = r + 50 * small(rng) * 100;  // up to 10 mm off
        else if (p < 0.3f) g = r + small(rng);               // around the 0.001 tolerance
        ref[3 * i + a] = r;
        got4[4 * i + a] = g;
        planar[a * n + i] = g;
        ref_planar[a * n + i] = r;
      }
    }
    gpu::Buffer<float> d_ref, d_got4, d_planar, d_ref_planar;
    gpu::Buffer<std::uint8_t> d_inside;
    d_ref.upload(ref.data(), ref.size());
    d_got4.upload(got4.data(), got4.size());
    d_planar.upload(planar.data(), planar.size());
    d_ref_planar.upload(ref_planar.data(), ref_planar.size());
    d_inside.upload(inside.data(), inside.size());
    const long long ln = static_cast<long long>(n);
    for (bool masked : {false, true}) {
      const std::uint8_t* hm = masked ? inside.data() : nullptr;
      const std::uint8_t* dm = masked ? d_inside.get() : nullptr;
      const FieldDiff c4 = field_diff_cpu(got4.data(), {4, 1}, ref.data(), {3, 1}, hm, n, kTolerance, kWrong);
      const FieldDiff g4 = gpu::field_diff_gpu(d_got4.get(), {4, 1}, d_ref.get(), {3, 1}, dm, n, kTolerance, kWrong, scratch, nullptr);
      EXPECT_TRUE(g4 == c4) << "n " << n << " masked " << masked << ": gpu worst " << g4.worst << " unset " << g4.unset
                            << " over " << g4.over << " wrong " << g4.wrong << " / cpu " << c4.worst << " " << c4.unset
                            << " " << c4.over << " " << c4.wrong;
      const FieldDiff cp = field_diff_cpu(planar.data(), {1, ln}, ref_planar.data(), {1, ln}, hm, n, kTolerance, kWrong);
      const FieldDiff gp = gpu::field_diff_gpu(d_planar.get(), {1, ln}, d_ref_planar.get(), {1, ln}, dm, n, kTolerance, kWrong, scratch, nullptr);
      EXPECT_TRUE(gp == cp) << "planar n " << n << " masked " << masked << ": gpu worst " << gp.worst << " unset "
                            << gp.unset << " / cpu " << cp.worst << " " << cp.unset;
      if (n > 1000) {  // the planted faults are there
        EXPECT_GT(c4.unset, 0u);
        EXPECT_GT(c4.wrong, 0u);
        EXPECT_GT(c4.over, c4.wrong);
      }
    }
  }
}
