// The NiftyReg drop-ins. Against NiftyReg 2.0's CPU binaries (../shared/peers/niftyreg, unpacked to a
// temporary directory; skipped when absent): reg_resample on the shared brains through identity,
// an affine and a perturbed cubic B-spline grid for every interpolation order, and reg_measure's
// NMI/NCC/SSD. Without the oracle: NiftyReg's edge half-voxel padding and the floating datatype on
// hand-made volumes whose answers are worked out below, --version, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "evk_testing.hpp"
#include "nifti_io.hpp"

namespace fs = std::filesystem;
namespace rd = evk::reg_deform;
using evk::testing::TempDir;

namespace {

fs::path compat_dir() { return evk::testing::bin_dir().parent_path() / "compat" / "niftyreg"; }
std::string ours(const std::string& cmd) { return "'" + (compat_dir() / cmd).string() + "'"; }
evk::testing::CommandResult sh(const std::string& c) { return evk::testing::run(c); }

// NiftyReg's binaries unpacked once per test program; empty when unavailable.
struct NiftyReg {
  TempDir dir;
  std::string env;  // LD_LIBRARY_PATH=... prefix
  bool ok = false;
  NiftyReg() {
    const fs::path shared = evk::testing::shared_data_dir();
    if (shared.empty()) return;
    const fs::path tgz = shared.parent_path() / "peers" / "niftyreg" / "niftyreg-bin.tar.gz";
    const fs::path stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
    if (!fs::exists(tgz) || !fs::exists(stub)) return;
    fs::create_directories(dir / "stub");
    fs::create_symlink(stub, dir / "stub" / "libcuda.so.1");
    if (sh("tar xzf '" + tgz.string() + "' -C '" + dir.path().string() + "'").exit_code != 0) return;
    env = "LD_LIBRARY_PATH='" + (dir / "bin" / "lib").string() + ":/usr/local/cuda/lib64:" + (dir / "stub").string() + "' ";
    ok = sh(env + "'" + (dir / "bin" / "reg_resample").string() + "' --version").exit_code == 0;
  }
  std::string bin(const std::string& cmd) const { return env + "'" + (dir / "bin" / cmd).string() + "'"; }
};
const NiftyReg& niftyreg() {
  static NiftyReg n;
  return n;
}

fs::path brain(const std::string& name) {
  const fs::path s = evk::testing::shared_data_dir();
  return s.empty() ? fs::path{} : s / "brain" / name;
}

void write_text(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

struct Diff {
  std::size_t n = 0, differ = 0;
  double max_abs = 0;
  bool same_type = false, same_dims = false;
};
Diff compare(const fs::path& a, const fs::path& b) {
  Diff d;
  const rd::StoredVolume x = rd::read_stored_volume(a), y = rd::read_stored_volume(b);
  d.same_type = x.info.datatype == y.info.datatype;
  d.same_dims = x.vol.geo.nx == y.vol.geo.nx && x.vol.geo.ny == y.vol.geo.ny && x.vol.geo.nz == y.vol.geo.nz;
  if (!d.same_dims) return d;
  d.n = x.vol.data.size();
  for (std::size_t i = 0; i < d.n; ++i) {
    const float u = x.vol.data[i], v = y.vol.data[i];
    if (std::isnan(u) && std::isnan(v)) continue;
    if (u != v) {
      ++d.differ;
      d.max_abs = std::max(d.max_abs, std::isnan(u) || std::isnan(v) ? INFINITY : std::fabs(double(u) - v));
    }
  }
  return d;
}

}  // namespace

TEST(CompatNiftyReg, VersionIsNiftyRegsForNipype) {
  for (const char* c : {"reg_resample", "reg_measure", "reg_aladin", "reg_f3d"}) {
    const auto r = sh(ours(c) + " --version");
    ASSERT_EQ(r.exit_code, 0) << c << ": " << r.err;
    EXPECT_EQ(r.out.rfind("2.0.0+evokernels.", 0), 0u) << c << " printed " << r.out;
  }
}

TEST(CompatNiftyReg, UnknownAndUnimplementedOptionsFailNamingThem) {
  auto r = sh(ours("reg_resample") + " -ref a.nii -flo b.nii -bogus 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-bogus: unknown option"), std::string::npos) << r.err;
  r = sh(ours("reg_resample") + " -ref a.nii -flo b.nii -psf");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-psf: not implemented"), std::string::npos) << r.err;
  r = sh(ours("reg_measure") + " -ref a.nii -flo b.nii -lncc");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-lncc"), std::string::npos) << r.err;
  r = sh(ours("reg_resample") + " -ref a.nii -flo");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-flo: expects 1 value"), std::string::npos) << r.err;
  for (const char* c : {"reg_aladin", "reg_f3d"}) {
    r = sh(ours(c) + " -ref a.nii -flo b.nii -res c.nii");
    EXPECT_EQ(r.exit_code, 1) << c;
    EXPECT_NE(r.err.find("is not in this EvoKernels build"), std::string::npos) << r.err;
    r = sh(ours(c) + " -ref a.nii -flo b.nii -speling 1");  // a pipeline's typo is still reported as such
    EXPECT_EQ(r.exit_code, 2) << c;
  }
}

// A float32 4x4x4 volume of 100 with 1 mm voxels; the reference shifted by +0.5 mm in x, so its
// last x-column samples the floating image half a voxel beyond its last voxel centre (x = 3.5).
TEST(CompatNiftyReg, EdgeHalfVoxelMixesThePaddingAsNiftyRegDoes) {
  TempDir d;
  rd::Volume flo;
  flo.geo = rd::Geometry::make(4, 4, 4);
  flo.data.assign(64, 101.f);
  rd::StoredInfo u8;
  u8.datatype = 2;  // uint8: the output keeps it, truncated
  rd::write_stored_volume(d / "flo.nii", flo, u8, "");
  rd::Volume ref;
  ref.geo = rd::Geometry::make(4, 4, 4, 1, 1, 1, {0.5, 0, 0});
  ref.data.assign(64, 0.f);
  rd::write_volume(d / "ref.nii", ref);
  auto r = sh(ours("reg_resample") + " -ref " + (d / "ref.nii").string() + " -flo " + (d / "flo.nii").string() +
              " -res " + (d / "out.nii").string() + " -inter 1 -voff");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const rd::StoredVolume out = rd::read_stored_volume(d / "out.nii");
  EXPECT_EQ(out.info.datatype, 2);
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 4; ++y) {
      EXPECT_EQ(out.vol.data[out.vol.geo.index(0, y, z)], 101.f);
      // x = 3.5: half image (101) and half padding (0) = 50.5, stored as uint8 50
      EXPECT_EQ(out.vol.data[out.vol.geo.index(3, y, z)], 50.f);
    }
  // reg_deform resample pads the whole sample instead (the documented difference)
  r = evk::testing::run_tool("reg_deform", "resample --ref " + (d / "ref.nii").string() + " --flo " +
                                               (d / "flo.nii").string() + " --trans " + (d / "none").string() +
                                               " -o x.nii");
  EXPECT_NE(r.exit_code, 0);  // (reg_deform resample needs a transformation file; the drop-in defaults to identity)
  // a NaN padding makes the output float32 (NaN is not an integer)
  r = sh(ours("reg_resample") + " -ref " + (d / "ref.nii").string() + " -flo " + (d / "flo.nii").string() + " -res " +
         (d / "nan.nii").string() + " -inter 1 -pad nan -voff");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const rd::StoredVolume nan = rd::read_stored_volume(d / "nan.nii");
  EXPECT_EQ(nan.info.datatype, 16);
  EXPECT_TRUE(std::isnan(nan.vol.data[nan.vol.geo.index(3, 1, 1)]));
  EXPECT_EQ(nan.vol.data[nan.vol.geo.index(2, 1, 1)], 101.f);
}

// Cubic (-inter 3, NiftyReg's default) is cubic convolution: it reproduces a linear ramp exactly
// inside (a B-spline prefilter would too, but the two differ on anything curved; see the oracle).
TEST(CompatNiftyReg, CubicReproducesARampAndIsTheDefault) {
  TempDir d;
  rd::Volume flo;
  flo.geo = rd::Geometry::make(12, 6, 6);
  flo.data.resize(flo.geo.voxels());
  for (int z = 0; z < 6; ++z)
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 12; ++x) flo.data[flo.geo.index(x, y, z)] = 10.f * x;
  rd::write_volume(d / "flo.nii", flo);
  rd::Volume ref;
  ref.geo = rd::Geometry::make(12, 6, 6, 1, 1, 1, {0.25, 0, 0});
  ref.data.assign(ref.geo.voxels(), 0.f);
  rd::write_volume(d / "ref.nii", ref);
  const auto r = sh(ours("reg_resample") + " -ref " + (d / "ref.nii").string() + " -flo " + (d / "flo.nii").string() +
                    " -res " + (d / "out.nii").string() + " -voff");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const rd::StoredVolume out = rd::read_stored_volume(d / "out.nii");
  for (int x = 1; x <= 9; ++x) EXPECT_NEAR(out.vol.data[out.vol.geo.index(x, 2, 2)], 10.f * (x + 0.25f), 1e-4) << x;
}

TEST(CompatNiftyReg, ResampleMatchesNiftyReg) {
  const NiftyReg& nr = niftyreg();
  if (!nr.ok) GTEST_SKIP() << "NiftyReg CPU binaries (../shared/peers/niftyreg) not available";
  TempDir d;
  const std::string ref = brain("mni152_t1_2mm.nii.gz").string(), flo = brain("subject_T1_head.nii.gz").string();
  // an affine: 6 degrees about z, a translation, slight scaling
  write_text(d / "aff.txt", "0.99 -0.104 0 3.5\n0.104 0.99 0 -2\n0 0 1.02 1.5\n0 0 0 1\n");
  ASSERT_EQ(evk::testing::run_tool("reg_deform", "grid --ref " + ref + " --affine " + (d / "aff.txt").string() +
                                                     " --perturb 2 --seed 5 -o " + (d / "cpp.nii.gz").string())
                .exit_code,
            0);
  const std::pair<std::string, std::string> trans[] = {
      {"identity", ""}, {"affine", " -aff " + (d / "aff.txt").string()}, {"grid", " -trans " + (d / "cpp.nii.gz").string()}};
  // every order through identity; the default (cubic) through the affine and the grid; nearest
  // neighbour through the grid (the most sensitive to the field)
  for (const auto& [tname, targ] : trans)
    for (const char* inter : {"0", "1", "3", "4"}) {
      const std::string t = tname, in = inter;
      if ((t == "affine" && in != "3") || (t == "grid" && in != "0" && in != "3")) continue;
      const std::string args = " -ref " + ref + " -flo " + flo + targ + " -inter " + inter + " -voff -omp 2";
      const fs::path a = d / ("nr_" + tname + inter + ".nii.gz"), b = d / ("ev_" + tname + inter + ".nii.gz");
      ASSERT_EQ(sh(nr.bin("reg_resample") + args + " -res " + a.string()).exit_code, 0);
      const auto r = sh("EVK_BACKEND=cpu " + ours("reg_resample") + args + " -res " + b.string());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const Diff df = compare(a, b);
      ASSERT_TRUE(df.same_dims && df.same_type) << tname << " -inter " << inter;
      // Identity and affine: the same float arithmetic, so every voxel is equal. A grid's field is
      // computed by reg_deform's kernel (double B-spline sums; NiftyReg's float ones differ by up to
      // ~1e-5 mm), which moves a few samples across an integer truncation boundary (by 1) or, for
      // nearest neighbour, across a voxel boundary (to the neighbour's value): at most 1 in 10^4.
      if (tname == std::string("grid")) {
        EXPECT_LE(df.differ, df.n / 10000) << tname << " -inter " << inter << ": " << df.differ << " of " << df.n;
        if (std::string(inter) != "0") {
          EXPECT_LE(df.max_abs, 1.0) << tname << " -inter " << inter;
        }
      } else {
        EXPECT_EQ(df.differ, 0u) << tname << " -inter " << inter << ", max |diff| " << df.max_abs;
      }
      std::printf("[ reg_resample %-8s -inter %s ] %zu of %zu voxels differ from NiftyReg, max |diff| %g\n",
                  tname.c_str(), inter, df.differ, df.n, df.max_abs);
    }
}

TEST(CompatNiftyReg, MeasureMatchesNiftyReg) {
  const NiftyReg& nr = niftyreg();
  if (!nr.ok) GTEST_SKIP() << "NiftyReg CPU binaries (../shared/peers/niftyreg) not available";
  const std::pair<const char*, const char*> pairs[] = {{"mni152_t1_2mm.nii.gz", "colin27_t1_2mm.nii"},
                                                       {"mni152_t1_2mm.nii.gz", "subject_T1_head.nii.gz"},
                                                       {"avg152_t1_2mm.nii", "colin27_t1_2mm.nii"}};
  for (const auto& [r, f] : pairs) {
    const std::string args = " -ref " + brain(r).string() + " -flo " + brain(f).string() + " -nmi -ncc -ssd -omp 2";
    const auto a = sh(nr.bin("reg_measure") + args), b = sh(ours("reg_measure") + args);
    ASSERT_EQ(a.exit_code, 0);
    ASSERT_EQ(b.exit_code, 0) << b.err;
    double na, ca, sa, nb, cb, sb;
    ASSERT_EQ(std::sscanf(a.out.c_str(), "NCC: %lf\nNMI: %lf\nSSD: %lf", &ca, &na, &sa), 3) << a.out;
    ASSERT_EQ(std::sscanf(b.out.c_str(), "NCC: %lf\nNMI: %lf\nSSD: %lf", &cb, &nb, &sb), 3) << b.out;
    // %g prints 6 significant digits: equal to that precision
    EXPECT_NEAR(nb, na, 2e-5 * std::fabs(na)) << r << " vs " << f;
    EXPECT_NEAR(cb, ca, 2e-5 * std::fabs(ca)) << r << " vs " << f;
    EXPECT_NEAR(sb, sa, 2e-5 * std::fabs(sa)) << r << " vs " << f;
    std::printf("[ reg_measure %s vs %s ] NiftyReg NMI %.6g NCC %.6g SSD %.6g; ours %.6g %.6g %.6g\n", r, f, na, ca, sa,
                nb, cb, sb);
    // SSD alone is on the images' own intensities (with -nmi, on NMI's rescaled ones, as above)
    const std::string a2 = " -ref " + brain(r).string() + " -flo " + brain(f).string() + " -ssd";
    const auto x = sh(nr.bin("reg_measure") + a2), y = sh(ours("reg_measure") + a2);
    ASSERT_EQ(std::sscanf(x.out.c_str(), "SSD: %lf", &sa), 1) << x.out;
    ASSERT_EQ(std::sscanf(y.out.c_str(), "SSD: %lf", &sb), 1) << y.out;
    EXPECT_NEAR(sb, sa, 2e-5 * std::fabs(sa)) << r << " vs " << f << " (-ssd alone)";
  }
}
