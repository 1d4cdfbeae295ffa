// `register` end to end on the CPU: reg_f3d's first-level objective on the shared 2 mm pair (the
// real reg_f3d's printed value), recovery of a known smooth deformation on a small volume, the
// penalties keeping the result unfolded, the tool's outputs (our readers; NiftyReg's reg_resample
// when its binary is available), and every bad input of the issue -> exit 2, one line, no output.
#include <nifti2_io.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/field/field_cpu.hpp"
#include "core/field/resample_cpu.hpp"
#include "core/register/reg_jacobian_cpu.hpp"
#include "core/register/reg_known_warp.hpp"
#include "core/register/reg_register.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "io/nifti_io.hpp"
#include "register_fixtures.hpp"

namespace rd = evk::reg_deform;
namespace fs = std::filesystem;
using evk::testing::run_tool;

namespace {
int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}
}  // namespace

// reg_aladin's affine for subject_T1_head -> mni152_t1_2mm (NiftyReg 2.0 CPU on this pair); with
// it reg_f3d printed "Initial objective function: 1.1848 = (wSIM)1.1848 - (wBE)2.59944e-14 -
// (wLE)3.58432e-06" at its first level: pyramid, rescaling, resampling and NMI all enter that value.
TEST(RegRegister, FirstLevelObjectiveIsReg_f3ds) {
  const fs::path dir = evk::testing::shared_data_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data";
  const rd::Volume ref = rd::read_volume(dir / "brain" / "mni152_t1_2mm.nii.gz");
  const rd::Volume flo = rd::read_volume(dir / "brain" / "subject_T1_head.nii.gz");
  rd::RegisterOptions o;
  o.jacobian_log = 0;  // reg_f3d's objective (our default adds 0.01)
  const double a[4][4] = {{0.9463072, 0.001045256, -0.01842198, -3.269551},
                          {-0.01517092, 0.9733055, -0.108303, 35.65504},
                          {0.03878599, 0.1086765, 0.8567609, -23.29803},
                          {0, 0, 0, 1}};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) o.affine.m[i][j] = a[i][j];
  o.has_affine = true;
  o.max_iterations = 1;  // 4 at the first level: only its initial value is checked
  rd::LevelReport first;
  rd::RegisterCallbacks cb;
  cb.level_start = [&](const rd::LevelReport& r) { first = r; };
  // Run only the first (coarsest) of the 3 levels: stop after it by throwing from level_done.
  struct Stop {};
  cb.level_done = [](const rd::LevelReport&) { throw Stop{}; };
  try {
    rd::register_images(ref, flo, {}, {}, o, rd::make_cpu_engine, cb);
  } catch (const Stop&) {
  }
  EXPECT_EQ(first.nx, 46);
  EXPECT_EQ(first.gx, 8);  // reg_f3d: 8 x 9 x 8 control points at 40 mm
  EXPECT_EQ(first.gy, 9);
  EXPECT_NEAR(first.initial.total, 1.1848, 5e-5);
  EXPECT_NEAR(first.initial.similarity, 1.1848, 5e-5);
  EXPECT_NEAR(first.initial.linear, 3.58432e-06, 1e-9);
  EXPECT_LT(first.initial.bending, 1e-12);
}

TEST(RegRegister, RecoversAKnownDeformation) {
  const rd::Volume image = rd::testing::blobs(rd::Geometry::make(41, 37, 33, 2, 2, 2, {-40, -36, -30}), 4, 60, 1.5, 3.0);
  const rd::KnownWarp kw = rd::make_known_warp(image, 20.0, 4.0, 1, 2);
  ASSERT_GT(kw.max_displacement, 2.0);
  const rd::Mask head = rd::intensity_mask(kw.reference, 0.3);
  rd::RegisterOptions o;
  o.levels = 2;
  o.max_iterations = 60;
  o.threads = 2;
  const rd::RegisterResult r = rd::register_images(kw.reference, image, {}, {}, o);
  const rd::Grid identity = rd::make_grid3(kw.reference.geo, {5, 5, 5});
  const rd::WarpError before = rd::warp_error(kw.reference.geo, identity, kw.truth, head);
  const rd::WarpError after = rd::warp_error(kw.reference.geo, r.grid, kw.truth, head);
  std::printf("known deformation (max %.2f mm): mean error %.3f -> %.3f mm, p95 %.3f -> %.3f mm\n", kw.max_displacement,
              before.mean, after.mean, before.p95, after.p95);
  EXPECT_LT(after.mean, 0.35 * before.mean);
  EXPECT_LT(after.mean, 0.4);  // 2 mm voxels (measured 0.18)
  EXPECT_LT(after.p95, 1.0);
  EXPECT_GT(rd::voxel_jacobian_stats(kw.reference.geo, r.grid).min, 0.0);
  ASSERT_EQ(r.levels.size(), 2u);
  EXPECT_GT(r.levels[1].final_terms.total, r.levels[1].initial.total);
}

namespace {
struct Pair {
  evk::testing::TempDir tmp;
  rd::Volume ref, flo;
  Pair() {
    flo = rd::testing::blobs(rd::Geometry::make(25, 23, 21, 2, 2, 2, {-24, -22, -20}), 6);
    ref = rd::make_known_warp(flo, 16.0, 3.0, 2, 2).reference;
    rd::write_volume(tmp / "ref.nii.gz", ref);
    rd::write_volume(tmp / "flo.nii.gz", flo);
  }
  std::string p(const std::string& n) const { return (tmp / n).string(); }
  std::string base() const { return "register --ref " + p("ref.nii.gz") + " --flo " + p("flo.nii.gz") + " --backend cpu"; }
};

void expect_bad(const std::string& args, const std::vector<std::string>& outs, const std::string& needle) {
  const auto r = run_tool("reg_deform", args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr should name " << needle << ": " << r.err;
  for (const auto& o : outs) EXPECT_FALSE(fs::exists(o)) << o;
}
}  // namespace

TEST(RegRegister, ToolWritesNiftyRegOutputsAndJson) {
  Pair f;
  const auto r = run_tool("reg_deform", f.base() + " --cpp " + f.p("cpp.nii.gz") + " --res " + f.p("res.nii.gz") +
                                            " --ln 2 --maxit 20 --pad 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "register");
  EXPECT_EQ(j["backend"], "cpu");
  ASSERT_EQ(j["levels"].size(), 2u);
  EXPECT_GT(j["levels"][1]["iterations"].get<int>(), 0);
  EXPECT_GT(j["final"]["min_jacobian"].get<double>(), 0);
  EXPECT_GT(j["final"]["objective"]["measure"].get<double>(), j["levels"][0]["initial"]["measure"].get<double>());
  // the grid: NiftyReg's layout, readable by our field/resample, spacing 5 voxels
  const rd::Grid g = rd::read_grid(f.p("cpp.nii.gz"), f.ref.geo);
  EXPECT_EQ(g.sx, 5);
  EXPECT_EQ(g.geo.nx, rd::grid_points_niftyreg(25, 5));
  // --res is the floating image resampled (cubic) through that grid
  const rd::Volume res = rd::read_volume(f.p("res.nii.gz"));
  rd::ResampleOptions ro;
  ro.interp = rd::Interp::cubic;
  const rd::Volume want = rd::resample_cpu(f.flo, rd::compute_field_cpu(f.ref.geo, g), ro);
  ASSERT_EQ(res.data.size(), want.data.size());
  for (std::size_t i = 0; i < want.data.size(); ++i) ASSERT_NEAR(res.data[i], want.data[i], 1e-3) << i;
  const auto rr = run_tool("reg_deform", "resample --ref " + f.p("ref.nii.gz") + " --flo " + f.p("flo.nii.gz") +
                                             " --trans " + f.p("cpp.nii.gz") + " -o " + f.p("res2.nii.gz") +
                                             " --interp cubic --backend cpu");
  ASSERT_EQ(rr.exit_code, 0) << rr.err;
  EXPECT_EQ(rd::read_volume(f.p("res2.nii.gz")).data, res.data);
}

// NiftyReg's own reg_resample reads our control-point grid (runs when EVK_NIFTYREG_BIN names the
// folder holding reg_resample, e.g. the peer tarball unpacked; skipped otherwise).
TEST(RegRegister, NiftyRegResampleReadsOurGrid) {
  const char* bin = std::getenv("EVK_NIFTYREG_BIN");
  if (!bin || !fs::exists(fs::path(bin) / "reg_resample")) GTEST_SKIP() << "EVK_NIFTYREG_BIN not set";
  Pair f;
  auto r = run_tool("reg_deform", f.base() + " --cpp " + f.p("cpp.nii.gz") + " --ln 2 --maxit 15");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string cmd = std::string(bin) + "/reg_resample -ref " + f.p("ref.nii.gz") + " -flo " + f.p("flo.nii.gz") +
                          " -trans " + f.p("cpp.nii.gz") + " -res " + f.p("nr.nii.gz") + " -inter 1 -pad 0 > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const rd::Volume nr = rd::read_volume(f.p("nr.nii.gz"));
  // ours: the same grid, linear interpolation; NiftyReg pads a voxel whose 2x2x2 stencil leaves the
  // image, ours only outside [0, n-1]: compare where both are inside by a margin.
  const rd::Grid g = rd::read_grid(f.p("cpp.nii.gz"), f.ref.geo);
  const rd::Field field = rd::compute_field_cpu(f.ref.geo, g);
  const rd::Volume ours = rd::resample_cpu(f.flo, field);
  const std::vector<float> q = rd::floating_coordinates(field, f.flo.geo);
  const std::size_t nv = f.ref.geo.voxels();
  std::size_t compared = 0;
  for (std::size_t v = 0; v < nv; ++v) {
    bool inside = true;
    const int n[3] = {f.flo.geo.nx, f.flo.geo.ny, f.flo.geo.nz};
    for (int a = 0; a < 3; ++a) inside &= q[a * nv + v] > 0.01 && q[a * nv + v] < n[a] - 1.01;
    if (!inside) continue;
    ++compared;
    ASSERT_NEAR(nr.data[v], ours.data[v], 1e-2 * (1 + std::fabs(ours.data[v]))) << v;
  }
  EXPECT_GT(compared, nv / 2);
}

TEST(RegRegister, BadInputExit2OneLineNothingWritten) {
  Pair f;
  const std::string cpp = f.p("out_cpp.nii.gz"), res = f.p("out_res.nii.gz");
  const std::string outs = " --cpp " + cpp + " --res " + res;
  const std::vector<std::string> both = {cpp, res};
  // different dimensionality: a 2-D floating image
  rd::Volume flat;
  flat.geo = rd::Geometry::make(25, 23, 1, 2, 2, 2);
  flat.data.assign(flat.geo.voxels(), 1.0f);
  flat.data[3] = 7;
  rd::write_volume(f.tmp / "flat.nii.gz", flat);
  expect_bad("register --ref " + f.p("ref.nii.gz") + " --flo " + f.p("flat.nii.gz") + outs + " --backend cpu", both,
             "flat.nii.gz");
  // all-zero image, constant image
  rd::Volume zero = f.flo;
  std::fill(zero.data.begin(), zero.data.end(), 0.0f);
  rd::write_volume(f.tmp / "zero.nii.gz", zero);
  expect_bad("register --ref " + f.p("zero.nii.gz") + " --flo " + f.p("flo.nii.gz") + outs + " --backend cpu", both,
             "zero.nii.gz");
  // Inf intensities (NaN voxels are read as 0, as NiftyReg reads them: RegAffine.NanPaddedInputs...)
  rd::Volume nan = f.flo;
  nan.data[100] = INFINITY;
  rd::write_volume(f.tmp / "inf.nii", nan);
  expect_bad("register --ref " + f.p("inf.nii") + " --flo " + f.p("flo.nii.gz") + outs + " --backend cpu", both, "inf.nii");
  // empty / all-zero masks
  rd::write_mask(f.tmp / "m0.nii.gz", f.ref.geo, rd::Mask(f.ref.geo.voxels(), 0));
  expect_bad(f.base() + outs + " --rmask " + f.p("m0.nii.gz"), both, "m0.nii.gz");
  rd::write_mask(f.tmp / "fm0.nii.gz", f.flo.geo, rd::Mask(f.flo.geo.voxels(), 0));
  expect_bad(f.base() + outs + " --fmask " + f.p("fm0.nii.gz"), both, "fm0.nii.gz");
  std::ofstream(f.tmp / "empty.nii").close();
  expect_bad(f.base() + outs + " --rmask " + f.p("empty.nii"), both, "empty.nii");
  // unreadable, garbled and singular affines
  expect_bad(f.base() + outs + " --aff " + f.p("missing.txt"), both, "missing.txt");
  std::ofstream(f.tmp / "garbled.txt") << "1 0 0 0\n0 1 0 zero\n0 0 1 0\n0 0 0 1\n";
  expect_bad(f.base() + outs + " --aff " + f.p("garbled.txt"), both, "garbled.txt");
  std::ofstream(f.tmp / "short.txt") << "1 0 0 0\n0 1 0 0\n0 0 1 0\n";
  expect_bad(f.base() + outs + " --aff " + f.p("short.txt"), both, "short.txt");
  std::ofstream(f.tmp / "singular.txt") << "1 0 0 0\n0 1 0 0\n0 0 0 0\n0 0 0 1\n";
  expect_bad(f.base() + outs + " --aff " + f.p("singular.txt"), both, "singular.txt");
  // spacing smaller than a voxel (2 mm voxels): 1.5 mm, or half a voxel
  expect_bad(f.base() + outs + " --sx 1.5", both, "--sx");
  expect_bad(f.base() + outs + " --sx -0.5", both, "--sx");
  // --lp > --ln, bad numbers
  expect_bad(f.base() + outs + " --ln 2 --lp 3", both, "--lp");
  expect_bad(f.base() + outs + " --maxit 0", both, "--maxit");
  expect_bad(f.base() + outs + " --be -1", both, "--be");
  expect_bad(f.base() + outs + " --nmi --ssd", both, "--ssd");
  expect_bad(f.base() + outs + " --pad abc", both, "--pad");
  // a missing input and an unwritable output
  expect_bad("register --ref " + f.p("nope.nii.gz") + " --flo " + f.p("flo.nii.gz") + outs + " --backend cpu", both,
             "nope.nii.gz");
  expect_bad(f.base() + " --cpp " + f.p("no_dir/c.nii.gz"), {f.p("no_dir/c.nii.gz")}, "no_dir");
}

// --res as NiftyReg writes it: in the floating image's datatype (here uint8, and int16 with a
// scaling), values truncated toward zero, clamped, NaN as 0, against the same run's --res-float;
// the NMI in --json is that of the file; a float32 floating image keeps float32.
TEST(RegRegister, ResKeepsTheFloatingDatatypeAsNiftyReg) {
  Pair f;
  rd::Volume flo8 = f.flo;
  float hi = 0;
  for (float v : flo8.data) hi = std::max(hi, v);
  for (float& v : flo8.data) v = v * 250.0f / hi;
  rd::StoredInfo u8;
  u8.datatype = DT_UINT8;
  rd::write_stored_volume(f.p("flo8.nii.gz"), flo8, u8, "uint8 floating image");
  rd::StoredInfo s16;  // stored = value / 0.5 - 10 ... as int16 with scl_slope 0.5, scl_inter 5
  s16.datatype = DT_INT16;
  s16.scl_slope = 0.5;
  s16.scl_inter = 5;
  rd::Volume raw16 = flo8;
  for (float& v : raw16.data) v = (v - 5.0f) / 0.5f;
  rd::write_stored_volume(f.p("flo16.nii.gz"), raw16, s16, "scaled int16 floating image");
  for (const char* name : {"flo8.nii.gz", "flo16.nii.gz", "flo.nii.gz"}) {
    SCOPED_TRACE(name);
    const std::string base = "register --ref " + f.p("ref.nii.gz") + " --flo " + f.p(name) + " --backend cpu --ln 2 --maxit 10 --cpp " +
                             f.p("c.nii.gz");
    const auto r = run_tool("reg_deform", base + " --res " + f.p("r.nii.gz") + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(run_tool("reg_deform", base + " --res-float --res " + f.p("rf.nii.gz")).exit_code, 0);
    // the data as stored (nifticlib's loader would turn NaN into 0): gzip -dc, past the 352-byte header
    const std::string ra = evk::testing::run("gzip -dc " + f.p("r.nii.gz")).out, rb = evk::testing::run("gzip -dc " + f.p("rf.nii.gz")).out;
    ASSERT_GT(rb.size(), 352u);
    std::int16_t datatype = 0;
    std::memcpy(&datatype, ra.data() + 70, 2);
    const bool u8case = std::string(name) == "flo8.nii.gz", s16case = std::string(name) == "flo16.nii.gz";
    EXPECT_EQ(datatype, u8case ? DT_UINT8 : s16case ? DT_INT16 : DT_FLOAT32);
    const std::size_t n = (rb.size() - 352) / 4;
    ASSERT_EQ(ra.size() - 352, n * (u8case ? 1 : s16case ? 2 : 4));
    std::size_t nan = 0;
    for (std::size_t i = 0; i < n; ++i) {
      float x = 0;
      std::memcpy(&x, rb.data() + 352 + 4 * i, 4);
      nan += std::isnan(x);
      if (u8case) {
        const double want = std::isnan(x) ? 0 : std::clamp(std::trunc(static_cast<double>(x)), 0.0, 255.0);
        ASSERT_EQ(static_cast<std::uint8_t>(ra[352 + i]), want) << i << " " << x;
      } else if (s16case) {
        std::int16_t v = 0;
        std::memcpy(&v, ra.data() + 352 + 2 * i, 2);
        const double want = std::isnan(x) ? 0 : std::clamp(std::trunc((static_cast<double>(x) - 5.0) / 0.5), -32768.0, 32767.0);
        ASSERT_EQ(v, want) << i << " " << x;
      } else {
        ASSERT_EQ(std::memcmp(ra.data() + 352 + 4 * i, rb.data() + 352 + 4 * i, 4), 0) << i;
      }
    }
    EXPECT_GT(n, 1000u);
    if (s16case) {
      float slope = 0, inter = 0;
      std::memcpy(&slope, ra.data() + 112, 4);
      std::memcpy(&inter, ra.data() + 116, 4);
      EXPECT_EQ(slope, 0.5f);
      EXPECT_EQ(inter, 5.0f);
    }
    const double nmi = nlohmann::json::parse(r.out)["final"]["nmi_reg_measure"];
    EXPECT_NEAR(nmi, rd::nmi_like_reg_measure(f.ref, rd::read_volume(f.p("r.nii.gz"))), 1e-12);
  }
}
