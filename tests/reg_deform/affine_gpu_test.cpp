// reg_deform affine on the GPU against the CPU reference: bit identity, not tolerances (libSGM's
// standard). The warp (aff_warp_linear) and the block matching (aff_match_blocks) do the CPU's double
// operations in the CPU's order, each correctly rounded, with no FMA contraction on either side
// (block_match.cpp is compiled with -ffp-contract=off; the kernels use __dmul_rn/__dadd_rn/... and
// -fmad=false; tests/reg_deform/affine_ptx_check.sh checks the PTX). So:
// - warp: every voxel has the CPU's bits (NaN outside: the same quiet NaN);
// - block matching: every block has the CPU's displacement and the CPU's |NCC| bits, on the CPU's
//   warped image and on the GPU's own;
// - pyramids (pyramid_kernels.cu against pyramid.cpp, same rules): every voxel of every level;
// - whole registrations: everything else (block selection, LTS, the log-Euclidean mean) is the
//   same host code on the same inputs, so the final matrices are the same doubles, and the
//   tool writes the same text. Each iteration's matches are recorded on both backends, so a failure
//   names the first iteration and block that differ.
// Outputs are poisoned before each launch (warped image all-ones bytes = NaN, matches all-ones bytes:
// dx = -1, ncc = NaN).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "affine_phantom.hpp"
#include "core/affine/affine_init.hpp"
#include "core/affine/affine_reg.hpp"
#include "core/affine/block_match.hpp"
#include "core/affine/gpu_affine.hpp"
#include "core/gpu_pyramid.hpp"
#include "core/pyramid.hpp"
#include "evk/cuda_check.hpp"
#include "evk_testing.hpp"
#include "io/affine_text.hpp"
#include "io/nifti_io.hpp"

namespace rd = evk::reg_deform;
namespace gpu = evk::reg_deform::gpu;
using namespace evk::reg_deform::testing;

namespace {
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

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Voxels whose bits differ (NaN included: both sides write the same quiet NaN); the first one in `first`.
std::size_t warp_diffs(const std::vector<float>& got, const std::vector<float>& want, std::string& first) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (bits(got[i]) != bits(want[i])) {
      if (n++ == 0) {
        char b[160];
        std::snprintf(b, sizeof b, "voxel %zu: GPU %.9g (0x%08x), CPU %.9g (0x%08x)", i, got[i], bits(got[i]), want[i],
                      bits(want[i]));
        first = b;
      }
    }
  return n;
}

bool same_match(const rd::BlockMatch& a, const rd::BlockMatch& b) {
  return a.dx == b.dx && a.dy == b.dy && a.dz == b.dz && bits(a.ncc) == bits(b.ncc) && bits(a.fx) == bits(b.fx) &&
         bits(a.fy) == bits(b.fy) && bits(a.fz) == bits(b.fz) && bits(a.reserved) == bits(b.reserved);
}
std::size_t match_diffs(const std::vector<rd::BlockMatch>& got, const std::vector<rd::BlockMatch>& want,
                        std::string& first) {
  if (got.size() != want.size()) {
    first = "different block counts";
    return std::max(got.size(), want.size());
  }
  std::size_t n = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!same_match(got[i], want[i]) && n++ == 0) {
      char b[320];
      std::snprintf(b, sizeof b, "block %zu: GPU (%d %d %d) %.9g (%.9g %.9g %.9g), CPU (%d %d %d) %.9g (%.9g %.9g %.9g)", i,
                    got[i].dx, got[i].dy, got[i].dz, got[i].ncc, got[i].fx, got[i].fy, got[i].fz, want[i].dx, want[i].dy,
                    want[i].dz, want[i].ncc, want[i].fx, want[i].fy, want[i].fz);
      first = b;
    }
  return n;
}

std::size_t matched(const std::vector<rd::BlockMatch>& m) {
  std::size_t n = 0;
  for (const auto& b : m) n += b.ncc > 0;
  return n;
}

bool same_matrix(const rd::Mat44& a, const rd::Mat44& b) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (!(a.m[i][j] == b.m[i][j])) return false;
  return true;
}
std::string fmt(const rd::Mat44& m) {
  char b[400];
  std::snprintf(b, sizeof b, "[%.17g %.17g %.17g %.17g; %.17g %.17g %.17g %.17g; %.17g %.17g %.17g %.17g]", m.m[0][0],
                m.m[0][1], m.m[0][2], m.m[0][3], m.m[1][0], m.m[1][1], m.m[1][2], m.m[1][3], m.m[2][0], m.m[2][1],
                m.m[2][2], m.m[2][3]);
  return b;
}

// Wraps a matcher factory and records every matching step (per level and direction, in call order).
struct Recorder {
  std::vector<std::vector<rd::BlockMatch>> steps;
  rd::MatcherFactory wrap(rd::MatcherFactory inner) {
    return [this, inner](const rd::LevelImage& ref, const rd::Mask& m, const rd::BlockLayout& l,
                         const rd::LevelImage& flo) {
      struct M : rd::Matcher {
        std::unique_ptr<rd::Matcher> in;
        Recorder* r;
        std::vector<rd::BlockMatch> match(const rd::Mat44& t) override {
          r->steps.push_back(in->match(t));
          return r->steps.back();
        }
      };
      auto w = std::make_unique<M>();
      w->in = inner(ref, m, l, flo);
      w->r = this;
      return std::unique_ptr<rd::Matcher>(std::move(w));
    };
  }
};

// Runs both backends with recording; expects the same matches at every step and the same matrix.
void expect_identical_registrations(const rd::Volume& ref, const rd::Volume& flo, const rd::Mask& rmask,
                                    const rd::Mask& fmask, const rd::Mat44& init, const rd::AffineOptions& o,
                                    const char* what) {
  Recorder rc, rg;
  const rd::Mat44 cpu = rd::register_affine(ref, flo, rmask, fmask, init, o, rc.wrap(rd::cpu_matcher())).affine;
  rd::AffineEngine ge = gpu::affine_engine(true);  // GPU pyramids and matchers
  ge.matcher = rg.wrap(ge.matcher);
  const rd::Mat44 g = rd::register_affine(ref, flo, rmask, fmask, init, o, ge).affine;
  std::size_t blocks = 0;
  for (const auto& s : rc.steps) blocks += s.size();
  std::printf("[ %s ] %zu matching steps, %zu block matches compared\n", what, rc.steps.size(), blocks);
  ASSERT_EQ(rg.steps.size(), rc.steps.size()) << what;
  for (std::size_t s = 0; s < rc.steps.size(); ++s) {
    std::string first;
    const std::size_t d = match_diffs(rg.steps[s], rc.steps[s], first);
    ASSERT_EQ(d, 0u) << what << ": matching step " << s << " differs on " << d << " blocks; first " << first;
  }
  EXPECT_TRUE(same_matrix(g, cpu)) << what << "\nGPU " << fmt(g) << "\nCPU " << fmt(cpu);
}
}  // namespace

TEST(RegAffineGpu, WarpIsBitIdentical) {
  EVK_REQUIRE_GPU();
  const Case c = make_case();
  // Random transforms, the identity voxel map (weights exactly 0/1: the skipped-corner path), and a
  // half-voxel shift (weights exactly 1/2); an odd floating size unlike the reference's.
  std::vector<rd::Mat44> ts;
  for (int k = 0; k < 4; ++k) {
    std::mt19937_64 rng(k);
    ts.push_back(k == 0 ? c.t : random_transform(rng, k % 2 == 0));
  }
  ts.push_back(rd::Mat44{});
  rd::Volume same = c.ref;  // floating = reference geometry: identity voxel map
  for (std::size_t k = 0; k < ts.size() + 2; ++k) {
    const bool self = k >= ts.size();
    const rd::Volume& flo = self ? same : c.flo;
    rd::Mat44 t;
    if (!self) t = ts[k];
    if (k == ts.size() + 1) {  // half a voxel along x, in world mm
      const auto a = c.ref.geo.vox2world.apply(0, 0, 0), b = c.ref.geo.vox2world.apply(0.5, 0, 0);
      for (int r = 0; r < 3; ++r) t.m[r][3] = b[r] - a[r];
    }
    const rd::BlockLayout l = rd::select_blocks(c.ref, {}, 50);
    gpu::BlockMatcher m(c.ref, {}, l, flo);
    m.set_poison(true);
    m.warp(t);
    const auto got = m.download_warped();
    const auto want = rd::warp_linear_cpu(c.ref.geo, flo, t);
    std::size_t finite = 0;
    for (float v : want) finite += std::isfinite(v);
    std::string first;
    const std::size_t d = warp_diffs(got, want, first);
    std::printf("[ warp %zu ] %zu voxels (%zu inside), %zu differ\n", k, want.size(), finite, d);
    EXPECT_GT(finite, want.size() / 4);
    EXPECT_EQ(d, 0u) << "first: " << first;
  }
}

TEST(RegAffineGpu, PyramidIsBitIdentical) {
  EVK_REQUIRE_GPU();
  const Case c = make_case();  // 61 x 53 x 47: odd sizes, two axes halved then none
  rd::Volume thin;             // one slice: the z pass is skipped; 70 x 1 x 5 after x halving
  thin.geo = rd::Geometry::make(140, 3, 1, 1, 1, 1);
  thin.data.resize(thin.geo.voxels());
  for (std::size_t i = 0; i < thin.data.size(); ++i) thin.data[i] = static_cast<float>((i * 7919) % 1000) * 0.37f;
  struct Run {
    const rd::Volume* v;
    int levels, used;
  };
  for (const Run& r : {Run{&c.ref, 3, 3}, Run{&c.flo, 4, 2}, Run{&c.ref, 1, 1}, Run{&thin, 2, 2}}) {
    const auto want = rd::make_pyramid(*r.v, r.levels, r.used);
    const auto got = gpu::make_pyramid(*r.v, r.levels, r.used);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t l = 0; l < want.size(); ++l) {
      ASSERT_EQ(got[l].geo.nx, want[l].geo.nx);
      ASSERT_EQ(got[l].geo.ny, want[l].geo.ny);
      ASSERT_EQ(got[l].geo.nz, want[l].geo.nz);
      EXPECT_EQ(got[l].geo.vox2world.m, want[l].geo.vox2world.m);
      std::string first;
      const std::size_t d = warp_diffs(got[l].data, want[l].data, first);
      std::printf("[ pyramid %dx%dx%d ln %d lp %d, level %zu ] %zu voxels differ\n", r.v->geo.nx, r.v->geo.ny,
                  r.v->geo.nz, r.levels, r.used, l, d);
      EXPECT_EQ(d, 0u) << "first: " << first;
    }
  }
}

// The pyramid the GPU engine keeps: every level's device copy holds the host level's values, which
// are the CPU pyramid's, bit for bit; the input level is the input itself (not a copy).
TEST(RegAffineGpu, DevicePyramidHoldsTheCpuLevels) {
  EVK_REQUIRE_GPU();
  const Case c = make_case();
  for (int levels : {3, 4}) {
    const int used = levels == 3 ? 3 : 2;
    const rd::ImagePyramid want = rd::make_image_pyramid(c.ref, levels, used);
    const rd::ImagePyramid got = gpu::make_image_pyramid(c.ref, levels, used);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(&got[used - 1] == &c.ref, levels == used);
    EXPECT_EQ(&want[used - 1] == &c.ref, levels == used);
    for (std::size_t l = 0; l < want.size(); ++l) {
      ASSERT_NE(got.levels[l].device, nullptr);
      ASSERT_EQ(got[l].geo.voxels(), want[l].geo.voxels());
      std::string first;
      EXPECT_EQ(warp_diffs(got[l].data, want[l].data, first), 0u) << "ln " << levels << " host level " << l << ": " << first;
      EXPECT_EQ(warp_diffs(gpu::download_level(got.levels[l]), want[l].data, first), 0u)
          << "ln " << levels << " device level " << l << ": " << first;
    }
  }
}

TEST(RegAffineGpu, BlockMatchingIsBitIdentical) {
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
      m.set_warped(warped);  // the CPU's warped image
      const auto got = m.match_warped();
      const auto want = rd::match_blocks_cpu(c.ref, mk, warped, l);
      std::string first;
      std::size_t d = match_diffs(got, want, first);
      std::printf("[ match mask=%d pv=%d ] %zu blocks (%zu matched), %zu differ\n", mask != nullptr, pv, want.size(),
                  matched(want), d);
      EXPECT_GT(matched(want), want.size() / 2);
      EXPECT_EQ(d, 0u) << "first: " << first;
      // The whole GPU step (its own warp, then matching) against the CPU's.
      const auto got2 = m.match(near_t);
      d = match_diffs(got2, want, first);
      EXPECT_EQ(d, 0u) << "warp + match on the GPU; first: " << first;
    }
  }
}

TEST(RegAffineGpu, RegistrationIsBitIdentical) {
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
    expect_identical_registrations(p.v, flo, {}, {}, init, o, affine ? "phantom affine" : "phantom rigid");
    o.subvoxel = true;
    expect_identical_registrations(p.v, flo, {}, {}, init, o, affine ? "phantom affine, subvoxel" : "phantom rigid, subvoxel");
    o.subvoxel = false;
  }
  // Forward only, with both masks, from the centres of mass.
  const Case c = make_case();
  o = rd::AffineOptions{};
  o.levels = 2;
  o.levels_used = 2;
  o.maxit = 2;
  o.symmetric = false;
  rd::Mask fmask(c.flo.geo.voxels(), 1);
  for (std::size_t i = 0; i < fmask.size(); i += 5) fmask[i] = 0;
  expect_identical_registrations(c.ref, c.flo, c.mask, fmask, rd::init_centres_of_mass(c.ref, c.mask, c.flo, fmask), o,
                                 "oblique, masks, nosym");
  o.symmetric = true;
  expect_identical_registrations(c.ref, c.flo, c.mask, fmask, rd::init_centres_of_mass(c.ref, c.mask, c.flo, fmask), o,
                                 "oblique, masks, symmetric");
}

TEST(RegAffineGpu, Brain1mmIsBitIdentical) {
  EVK_REQUIRE_GPU();
  const auto dir = evk::testing::shared_data_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data";
  const rd::Volume ref = rd::read_volume(dir / "brain/icbm152_2009a_t1_1mm.nii.gz");
  const rd::Volume flo = rd::read_volume(dir / "brain/subject_T1_head.nii.gz");
  const rd::Mat44 t = rd::init_centres(ref.geo, flo.geo);
  for (const rd::Volume* v : {&ref, &flo}) {  // the pyramids
    const auto want = rd::make_pyramid(*v, 3, 3);
    const auto got = gpu::make_pyramid(*v, 3, 3);
    for (std::size_t l = 0; l < want.size(); ++l) {
      std::string first;
      EXPECT_EQ(warp_diffs(got[l].data, want[l].data, first), 0u) << "pyramid level " << l << "; first: " << first;
    }
  }
  // One step at full resolution: the warp, then the matching of every block.
  const rd::BlockLayout l = rd::select_blocks(ref, {}, 50);
  gpu::BlockMatcher m(ref, {}, l, flo);
  m.set_poison(true);
  m.warp(t);
  const auto gw = m.download_warped();
  const auto cw = rd::warp_linear_cpu(ref.geo, flo, t);
  std::string first;
  std::size_t d = warp_diffs(gw, cw, first);
  EXPECT_EQ(d, 0u) << "warp; first: " << first;
  const auto got = m.match_warped();
  const auto want = rd::match_blocks_cpu(ref, {}, cw, l);
  const std::size_t dm = match_diffs(got, want, first);
  std::printf("[ brain 1 mm ] warp: %zu voxels differ; %zu blocks (%zu matched), %zu differ\n", d, want.size(),
              matched(want), dm);
  EXPECT_EQ(dm, 0u) << "matching; first: " << first;
  // The whole registration with the defaults on both backends: every step, the same matrix.
  expect_identical_registrations(ref, flo, {}, {}, t, rd::AffineOptions{}, "brain 1 mm, defaults");
}

TEST(RegAffineGpu, ToolOnGpuWritesTheCpuResult) {
  EVK_REQUIRE_GPU();
  evk::testing::TempDir tmp;
  const Phantom p = make_phantom(48, 2.5, 3);
  std::mt19937_64 rng(8);
  const rd::Mat44 truth = random_transform(rng, true);
  rd::write_volume(tmp / "ref.nii.gz", p.v);
  rd::write_volume(tmp / "flo.nii.gz", floating_for(p.v, truth));
  std::string text[2];
  for (int b = 0; b < 2; ++b) {
    const std::string out = (tmp / (b ? "gpu.txt" : "cpu.txt")).string();
    const auto r = evk::testing::run_tool(
        "reg_deform", "affine --ref " + (tmp / "ref.nii.gz").string() + " --flo " + (tmp / "flo.nii.gz").string() +
                          " -o " + out + " --ln 2 --maxit 3 --backend " + (b ? "gpu" : "cpu") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(b ? "\"backend\": \"gpu\"" : "\"backend\": \"cpu\""), std::string::npos);
    std::ifstream f(out);
    std::stringstream s;
    s << f.rdbuf();
    text[b] = s.str();
  }
  EXPECT_EQ(text[1], text[0]);  // the same doubles, written as the shortest exact decimals
  EXPECT_LT(mapping_error(p, rd::read_affine((tmp / "gpu.txt").string()), truth).first, 1.0);
}
