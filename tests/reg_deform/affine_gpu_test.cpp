// reg_deform affine on the GPU against the CPU reference, outputs poisoned first (warped image NaN,
// matches all-ones bytes: dx = -1, ncc = NaN), every element compared:
// - warp: trilinear in float vs double. Tolerance 5e-3 intensity units on images of range ~300:
//   float voxel positions are exact to ~1e-5 voxel, times gradients < 100 units/voxel, plus float
//   rounding of the 8-term sum; NaN (outside) must agree except where the CPU position lies within
//   1e-3 voxel of the border (float rounding can put it on either side).
// - block matching on the same warped image (the CPU's, uploaded): |NCC| in float vs double agrees
//   within 1e-4 (64-term sums; measured ~1e-6), and the chosen displacement is the CPU's, or a
//   near tie: the CPU's |NCC| at the GPU's displacement is within 1e-4 of the CPU's best.
// - whole registrations (phantom, 1 mm brain pair, the tool): the matrices map the head within
//   0.1 mm of the CPU's (near ties can steer iterations apart by a little).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "affine_init.hpp"
#include "affine_phantom.hpp"
#include "affine_reg.hpp"
#include "affine_text.hpp"
#include "block_match.hpp"
#include "evk/cuda_check.hpp"
#include "evk_testing.hpp"
#include "gpu_affine.hpp"
#include "nifti_io.hpp"

namespace rd = evk::reg_deform;
namespace gpu = evk::reg_deform::gpu;
using namespace evk::reg_deform::testing;

namespace {
constexpr double kWarpTol = 5e-3, kNccTol = 1e-4, kMatrixTolMm = 0.1;

// An odd-sized phantom with an oblique geometry (sform rotated) and a mask with holes.
struct Case {
  rd::Volume ref, flo;
  rd::Mask mask;
  rd::Mat44 t;
};
Case make_case() {
  Case c;
  Phantom p = make_phantom(61, 2.0, 5);
  // crop to 61 x 53 x 47 and tilt the sform
  rd::Volume v;
  v.geo = rd::Geometry::make(61, 53, 47, 2.0, 2.2, 1.8, {-60, -55, -40});
  const rd::Mat44 tilt = rotation(0.1, -0.05, 0.2);
  v.geo.sform = tilt * v.geo.sform;
  v.geo.update_world();
  v.data.resize(v.geo.voxels());
  for (int z = 0; z < 47; ++z)
    for (int y = 0; y < 53; ++y)
      for (int x = 0; x < 61; ++x) v.data[v.geo.index(x, y, z)] = p.v.data[p.v.geo.index(x, y + 4, z + 7)];
  c.ref = v;
  std::mt19937_64 rng(99);
  c.t = random_transform(rng, true);
  c.flo = floating_for(c.ref, c.t);
  c.mask.assign(v.geo.voxels(), 1);
  for (std::size_t i = 0; i < c.mask.size(); ++i)
    if ((i / 7) % 5 == 0 || (i / 3000) % 4 == 1) c.mask[i] = 0;
  return c;
}

double mat_map_diff(const rd::Geometry& g, const rd::Mat44& a, const rd::Mat44& b) {  // max over the corners
  double d = 0;
  for (int c = 0; c < 8; ++c) {
    const auto w = g.vox2world.apply((c & 1) ? g.nx - 1 : 0, (c & 2) ? g.ny - 1 : 0, (c & 4) ? g.nz - 1 : 0);
    const auto pa = a.apply(w[0], w[1], w[2]), pb = b.apply(w[0], w[1], w[2]);
    d = std::max(d, std::sqrt((pa[0] - pb[0]) * (pa[0] - pb[0]) + (pa[1] - pb[1]) * (pa[1] - pb[1]) +
                              (pa[2] - pb[2]) * (pa[2] - pb[2])));
  }
  return d;  // affine maps: the max over the box is at a corner
}

struct WarpCheck {
  double max_err = 0;
  std::size_t nan_mismatch = 0, border_ok = 0, compared = 0;
};
WarpCheck compare_warp(const rd::Geometry& ref, const rd::Volume& flo, const rd::Mat44& t,
                       const std::vector<float>& got, const std::vector<float>& want) {
  WarpCheck r;
  const rd::Mat44 m = rd::voxel_map(ref, flo.geo, t);
  for (int z = 0; z < ref.nz; ++z)
    for (int y = 0; y < ref.ny; ++y)
      for (int x = 0; x < ref.nx; ++x) {
        const std::size_t i = ref.index(x, y, z);
        const bool gn = std::isnan(got[i]), wn = std::isnan(want[i]);
        if (gn != wn) {
          const auto p = m.apply(x, y, z);
          const int n[3] = {flo.geo.nx, flo.geo.ny, flo.geo.nz};
          bool near = false;
          for (int a = 0; a < 3; ++a)
            near = near || std::fabs(p[a] + 1e-4) < 1e-3 || std::fabs(p[a] - (n[a] - 1 + 1e-4)) < 1e-3;
          if (near) ++r.border_ok;
          else ++r.nan_mismatch;
          continue;
        }
        if (gn) continue;
        ++r.compared;
        r.max_err = std::max(r.max_err, double(std::fabs(got[i] - want[i])));
      }
  return r;
}

struct MatchCheck {
  std::size_t exact = 0, ties = 0, bad = 0, poisoned = 0;
  double max_ncc_err = 0;
};
MatchCheck compare_matches(const rd::Volume& ref, const rd::Mask& mask, const std::vector<float>& warped,
                           const rd::BlockLayout& l, const std::vector<rd::BlockMatch>& got,
                           const std::vector<rd::BlockMatch>& want) {
  MatchCheck r;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& g = got[i];
    const auto& w = want[i];
    if (!std::isfinite(g.ncc) || g.dx < -3 || g.dx > 3 || g.dy < -3 || g.dy > 3 || g.dz < -3 || g.dz > 3) {
      ++r.poisoned;
      continue;
    }
    if (g.dx == w.dx && g.dy == w.dy && g.dz == w.dz && (g.ncc > 0) == (w.ncc > 0)) {
      ++r.exact;
      r.max_ncc_err = std::max(r.max_ncc_err, double(std::fabs(g.ncc - w.ncc)));
      continue;
    }
    const double at = g.ncc > 0 ? rd::block_ncc(ref, mask, warped, l.active[i], l, g.dx, g.dy, g.dz) : 0.0;
    if (std::fabs(at - w.ncc) <= kNccTol && std::fabs(g.ncc - at) <= kNccTol) ++r.ties;
    else ++r.bad;
  }
  return r;
}
}  // namespace

TEST(RegAffineGpu, WarpMatchesCpu) {
  EVK_REQUIRE_GPU();
  const Case c = make_case();
  for (int k = 0; k < 3; ++k) {
    std::mt19937_64 rng(k);
    const rd::Mat44 t = k == 0 ? c.t : random_transform(rng, k == 2);
    rd::BlockLayout l = rd::select_blocks(c.ref, {}, 50);
    gpu::BlockMatcher m(c.ref, {}, l, c.flo);
    m.set_poison(true);
    m.warp(t);
    const auto got = m.download_warped();
    const auto want = rd::warp_linear_cpu(c.ref.geo, c.flo, t);
    const WarpCheck w = compare_warp(c.ref.geo, c.flo, t, got, want);
    std::printf("[ warp %d ] compared %zu, max |err| %.3g, NaN mismatches %zu (+%zu on the border)\n", k, w.compared,
                w.max_err, w.nan_mismatch, w.border_ok);
    EXPECT_GT(w.compared, c.ref.geo.voxels() / 4);
    EXPECT_LE(w.max_err, kWarpTol);
    EXPECT_EQ(w.nan_mismatch, 0u);
    EXPECT_LE(w.border_ok, c.ref.geo.voxels() / 1000);
  }
}

TEST(RegAffineGpu, BlockMatchingMatchesCpu) {
  EVK_REQUIRE_GPU();
  const Case c = make_case();
  const rd::Mat44 near_t = c.t * rotation(0.02, -0.01, 0.015);  // a few voxels off: real matching work
  for (const rd::Mask* mask : {static_cast<const rd::Mask*>(nullptr), &c.mask}) {
    const rd::Mask mk = mask ? *mask : rd::Mask{};
    for (int pv : {50, 100}) {
      const rd::BlockLayout l = rd::select_blocks(c.ref, mk, pv);
      ASSERT_GT(l.active.size(), 50u);
      const auto warped = rd::warp_linear_cpu(c.ref.geo, c.flo, near_t);
      gpu::BlockMatcher m(c.ref, mk, l, c.flo);
      m.set_poison(true);
      m.set_warped(warped);
      const auto got = m.match_warped();
      const auto want = rd::match_blocks_cpu(c.ref, mk, warped, l);
      const MatchCheck r = compare_matches(c.ref, mk, warped, l, got, want);
      std::printf("[ match mask=%d pv=%d ] %zu blocks: %zu exact, %zu near ties, %zu wrong, %zu poisoned, max |dNCC| %.2g\n",
                  mask != nullptr, pv, want.size(), r.exact, r.ties, r.bad, r.poisoned, r.max_ncc_err);
      EXPECT_EQ(r.poisoned, 0u);
      EXPECT_EQ(r.bad, 0u);
      EXPECT_LE(r.max_ncc_err, kNccTol);
      EXPECT_GE(r.exact, want.size() * 99 / 100);
    }
  }
}

TEST(RegAffineGpu, RegistrationMatchesCpu) {
  EVK_REQUIRE_GPU();
  const Phantom p = make_phantom(64, 2.0, 7);
  std::mt19937_64 rng(2024);
  rd::AffineOptions o;
  o.levels = o.levels_used = 2;
  o.maxit = 3;
  for (bool affine : {false, true}) {
    const rd::Mat44 truth = random_transform(rng, affine);
    const rd::Volume flo = floating_for(p.v, truth);
    o.rigid_only = !affine;
    const rd::Mat44 init = rd::init_centres(p.v.geo, flo.geo);
    const rd::Mat44 cpu = rd::register_affine(p.v, flo, {}, {}, init, o, rd::cpu_matcher()).affine;
    const rd::Mat44 gpu_m = rd::register_affine(p.v, flo, {}, {}, init, o, gpu::affine_matcher(true)).affine;
    const auto err = mapping_error(p, gpu_m, truth);
    const double d = mat_map_diff(p.v.geo, gpu_m, cpu);
    std::printf("[ register %s ] GPU vs truth mean %.3f max %.3f mm; GPU vs CPU max %.4f mm\n",
                affine ? "affine" : "rigid", err.first, err.second, d);
    EXPECT_LT(err.first, 1.0);
    EXPECT_LT(d, kMatrixTolMm);
  }
}

TEST(RegAffineGpu, Brain1mmMatchingAndRegistration) {
  EVK_REQUIRE_GPU();
  const auto dir = evk::testing::shared_data_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data";
  const rd::Volume ref = rd::read_volume(dir / "brain/icbm152_2009a_t1_1mm.nii.gz");
  const rd::Volume flo = rd::read_volume(dir / "brain/subject_T1_head.nii.gz");
  const rd::Mat44 t = rd::init_centres(ref.geo, flo.geo);
  // One matching step at full resolution, every block.
  const rd::BlockLayout l = rd::select_blocks(ref, {}, 50);
  gpu::BlockMatcher m(ref, {}, l, flo);
  m.set_poison(true);
  m.warp(t);
  const auto gw = m.download_warped();
  const auto cw = rd::warp_linear_cpu(ref.geo, flo, t);
  const WarpCheck w = compare_warp(ref.geo, flo, t, gw, cw);
  EXPECT_LE(w.max_err, kWarpTol * 10);  // intensities up to ~3000 here (scaled tolerance)
  EXPECT_EQ(w.nan_mismatch, 0u);
  m.set_warped(cw);
  const auto got = m.match_warped();
  const auto want = rd::match_blocks_cpu(ref, {}, cw, l);
  const MatchCheck r = compare_matches(ref, {}, cw, l, got, want);
  std::printf("[ brain 1 mm ] warp max |err| %.3g; %zu blocks: %zu exact, %zu near ties, %zu wrong\n", w.max_err,
              want.size(), r.exact, r.ties, r.bad);
  EXPECT_EQ(r.poisoned, 0u);
  EXPECT_EQ(r.bad, 0u);
  // The whole registration with the defaults on both backends.
  const rd::AffineOptions o;
  const rd::Mat44 cpu = rd::register_affine(ref, flo, {}, {}, t, o, rd::cpu_matcher()).affine;
  const rd::Mat44 g = rd::register_affine(ref, flo, {}, {}, t, o, gpu::affine_matcher(true)).affine;
  const double d = mat_map_diff(ref.geo, g, cpu);
  std::printf("[ brain 1 mm ] GPU vs CPU registration: max %.4f mm over the reference box\n", d);
  EXPECT_LT(d, 0.5);  // over the whole 197x233x189 mm box, corners included
}

TEST(RegAffineGpu, ToolOnGpuMatchesCpu) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir tmp;
  const Phantom p = make_phantom(48, 2.5, 3);
  std::mt19937_64 rng(8);
  const rd::Mat44 truth = random_transform(rng, true);
  rd::write_volume(tmp / "ref.nii.gz", p.v);
  rd::write_volume(tmp / "flo.nii.gz", floating_for(p.v, truth));
  rd::Mat44 m[2];
  for (int b = 0; b < 2; ++b) {
    const std::string out = (tmp / (b ? "gpu.txt" : "cpu.txt")).string();
    const auto r = evk::testing::run_tool(
        "reg_deform", "affine --ref " + (tmp / "ref.nii.gz").string() + " --flo " + (tmp / "flo.nii.gz").string() +
                          " -o " + out + " --ln 2 --maxit 3 --backend " + (b ? "gpu" : "cpu") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(b ? "\"backend\": \"gpu\"" : "\"backend\": \"cpu\""), std::string::npos);
    m[b] = rd::read_affine(out);
  }
  EXPECT_LT(mat_map_diff(p.v.geo, m[1], m[0]), kMatrixTolMm);
  EXPECT_LT(mapping_error(p, m[1], truth).first, 1.0);
}
