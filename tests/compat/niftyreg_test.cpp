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
#include <random>
#include <utility>
#include <vector>

#include "affine_phantom.hpp"
#include "core/affine/affine_init.hpp"
#include "evk_testing.hpp"
#include "io/affine_text.hpp"
#include "io/nifti_io.hpp"

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
    r = sh(ours(c) + " -ref a.nii -flo b.nii -speling 1");  // a pipeline's typo is still reported as such
    EXPECT_EQ(r.exit_code, 2) << c;
    EXPECT_NE(r.err.find("-speling: unknown option"), std::string::npos) << r.err;
  }
}

namespace {
// A textured head phantom (3 mm voxels) and a floating image of it through a known transform.
struct Pair {
  TempDir dir;
  rd::testing::Phantom p;
  rd::Mat44 truth;
  fs::path ref, flo;
};
void make_pair(Pair& q, int n, std::uint64_t seed, bool affine, int flo_datatype = 16) {
  q.p = rd::testing::make_phantom(n, 3.0, 4);
  std::mt19937_64 rng(seed);
  q.truth = rd::testing::random_transform(rng, affine);
  q.ref = q.dir / "ref.nii.gz";
  q.flo = q.dir / "flo.nii.gz";
  rd::write_volume(q.ref, q.p.v);
  rd::Volume f = rd::testing::floating_for(q.p.v, q.truth);
  for (auto& v : f.data) v = std::isnan(v) ? 0.f : v;
  rd::StoredInfo si;
  si.datatype = flo_datatype;
  rd::write_stored_volume(q.flo, f, si, "test floating image");
}
std::string in_dir(const fs::path& d) { return "cd '" + d.string() + "' && "; }
std::string q(const fs::path& p) { return "'" + p.string() + "'"; }
double max_abs_diff(const rd::Mat44& a, const rd::Mat44& b) {
  double d = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) d = std::max(d, std::fabs(a.m[i][j] - b.m[i][j]));
  return d;
}
double nmi_of(const fs::path& ref, const fs::path& img) {
  const auto r = sh(ours("reg_measure") + " -ref " + q(ref) + " -flo " + q(img) + " -nmi");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out.rfind("NMI: ", 0) == 0 ? std::atof(r.out.c_str() + 5) : -1;
}
}  // namespace

// reg_aladin's defaults and file conventions: run with no -aff/-res it writes outputAffine.txt and
// outputResult.nii.gz in the working directory; the matrix recovers a known affine transform and is
// `reg_deform affine`'s (the same method and defaults); the warped image keeps the floating image's
// datatype (int16 here), as NiftyReg's does.
TEST(CompatNiftyReg, AladinRecoversAKnownAffineAsRegDeformAffine) {
  Pair q_;
  make_pair(q_, 32, 21, true, 4);
  auto r = sh(in_dir(q_.dir.path()) + ours("reg_aladin") + " -ref ref.nii.gz -flo flo.nii.gz -platf 0 -omp 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[EvoKernels reg_aladin] affine registration on cpu"), std::string::npos) << r.out;
  const rd::Mat44 a = rd::read_affine(q_.dir / "outputAffine.txt");
  const auto err = rd::testing::mapping_error(q_.p, a, q_.truth);
  // Half a voxel mean (3 mm voxels, integer block matches), as RegAffine's known-transform test; the
  // start (image centres) is far off.
  EXPECT_LT(err.first, 1.5) << "mean mapping error (mm) over the head";
  EXPECT_GT(rd::testing::mapping_error(q_.p, rd::init_centres(q_.p.v.geo, q_.p.v.geo), q_.truth).first, 5.0);
  const rd::StoredVolume w = rd::read_stored_volume(q_.dir / "outputResult.nii.gz");
  EXPECT_EQ(w.info.datatype, 4);
  EXPECT_EQ(w.vol.geo.nx, 32);
  r = evk::testing::run_tool("reg_deform", "affine --ref " + q(q_.ref) + " --flo " + q(q_.flo) + " -o " +
                                               q(q_.dir / "cli.txt") + " --backend cpu --no-subvoxel");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(max_abs_diff(a, rd::read_affine(q_.dir / "cli.txt")), 1e-12);  // the drop-in: whole-voxel matches
  // The registration improved the similarity: NMI of the result above that of the raw floating image.
  EXPECT_GT(nmi_of(q_.ref, q_.dir / "outputResult.nii.gz"), nmi_of(q_.ref, q_.flo) + 0.05);
  // -rigOnly: a rigid matrix (orthonormal linear part), and -noSym -ln/-maxit/-aff/-res honoured.
  r = sh(ours("reg_aladin") + " -ref " + q(q_.ref) + " -flo " + q(q_.flo) + " -rigOnly -noSym -ln 2 -maxit 2 -aff " +
         q(q_.dir / "rig.txt") + " -res " + q(q_.dir / "rig.nii") + " -platf 0 -voff");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << "-voff: " << r.out;
  const rd::Mat44 m = rd::read_affine(q_.dir / "rig.txt");
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double d = 0;
      for (int k = 0; k < 3; ++k) d += m.m[k][i] * m.m[k][j];
      EXPECT_NEAR(d, i == j ? 1.0 : 0.0, 1e-6) << i << j;
    }
  EXPECT_TRUE(fs::exists(q_.dir / "rig.nii"));
}

// reg_f3d's file conventions and `reg_deform register`'s result: no -cpp/-res gives outputCPP.nii
// and outputResult.nii; from the same affine the grid equals `register --jl 0 --allow-folding`'s
// (reg_f3d's objective, no unfolding: the drop-in keeps reg_f3d's defaults); the warped image is
// closer to the reference than the affine result.
TEST(CompatNiftyReg, F3dRunsRegisterWithReg_f3dConventions) {
  Pair q_;
  make_pair(q_, 24, 5, false);
  rd::Mat44 start = q_.truth;  // a start 2 mm off the truth: the B-spline grid has work to do
  start.m[0][3] += 2.0;
  rd::write_affine(q_.dir / "start.txt", start);
  const std::string opts = " -ln 2 -maxit 30 -sx 9";
  auto r = sh(in_dir(q_.dir.path()) + ours("reg_f3d") + " -ref ref.nii.gz -flo flo.nii.gz -aff start.txt -platf 0 -omp 2" + opts);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[EvoKernels reg_f3d] registration on cpu"), std::string::npos) << r.out;
  const rd::Grid g = rd::read_grid(q_.dir / "outputCPP.nii", q_.p.v.geo);
  ASSERT_TRUE(fs::exists(q_.dir / "outputResult.nii"));
  r = evk::testing::run_tool("reg_deform", "register --ref " + q(q_.ref) + " --flo " + q(q_.flo) + " --aff " +
                                               q(q_.dir / "start.txt") + " --cpp " + q(q_.dir / "cli.nii.gz") +
                                               " --ln 2 --maxit 30 --sx 9 --backend cpu --jl 0 --allow-folding");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const rd::Grid c = rd::read_grid(q_.dir / "cli.nii.gz", q_.p.v.geo);
  ASSERT_EQ(g.data.size(), c.data.size());
  EXPECT_EQ(g.data, c.data);
  // The affine start alone, resampled as reg_resample does, against the f3d result.
  r = sh(ours("reg_resample") + " -ref " + q(q_.ref) + " -flo " + q(q_.flo) + " -trans " + q(q_.dir / "start.txt") +
         " -res " + q(q_.dir / "start.nii") + " -voff");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nmi_of(q_.ref, q_.dir / "outputResult.nii"), nmi_of(q_.ref, q_.dir / "start.nii") + 0.01);
}

// Options that would change the result and that this build does not reproduce: exit 2, one line
// naming the option, no output written.
TEST(CompatNiftyReg, AladinF3dRefuseWhatTheyDoNotReproduce) {
  Pair q_;
  make_pair(q_, 16, 3, false);
  const std::string io = " -ref " + q(q_.ref) + " -flo " + q(q_.flo) + " -platf 0";
  const std::string outs = " -res " + q(q_.dir / "o.nii") + " -voff";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"reg_aladin" + io + " -aff " + q(q_.dir / "o.txt") + outs + " -pad 0", "-pad 0"},
      {"reg_aladin" + io + " -aff " + q(q_.dir / "o.txt") + outs + " -smooR 2", "-smooR"},
      {"reg_aladin" + io + " -aff " + q(q_.dir / "o.txt") + outs + " -interp 3", "-interp 3"},
      {"reg_aladin" + io + " -aff " + q(q_.dir / "o.txt") + outs + " -refLowThr 10", "-refLowThr"},
      {"reg_aladin" + io + " -aff " + q(q_.dir / "o.txt") + outs + " -iso", "-iso"},
      {"reg_aladin" + io + " -aff " + q(q_.dir / "o.txt") + outs + " -pv 0", "-pv"},
      {"reg_aladin" + io + " -aff " + q(q_.dir / "o.txt") + outs + " -comm", "-comm"},
      {"reg_f3d" + io + " -cpp " + q(q_.dir / "o.nii.gz") + outs + " -vel", "-vel"},
      {"reg_f3d" + io + " -cpp " + q(q_.dir / "o.nii.gz") + outs + " -pad 0", "-pad 0"},
      {"reg_f3d" + io + " -cpp " + q(q_.dir / "o.nii.gz") + outs + " -sx 5 -sy 4", "-sy 4"},
      {"reg_f3d" + io + " -cpp " + q(q_.dir / "o.nii.gz") + outs + " --rbn 32", "--rbn/--fbn"},
      {"reg_f3d" + io + " -cpp " + q(q_.dir / "o.nii.gz") + outs + " --lncc 5", "--lncc"},
      {"reg_f3d" + io + " -cpp " + q(q_.dir / "o.nii.gz") + outs + " -incpp x.nii", "-incpp"},
      {"reg_f3d" + io + " -cpp " + q(q_.dir / "o.nii.gz") + outs + " -interp 0", "-interp 0"},
      {"reg_f3d" + io + " -cpp " + q(q_.dir / "o.nii.gz") + outs + " -ssd 1", "-ssd 1"},
  };
  for (const auto& [cmd, needle] : cases) {
    const auto r = sh(ours(cmd.substr(0, cmd.find(' '))) + cmd.substr(cmd.find(' ')));
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << needle << ": " << r.err;
    for (const char* o : {"o.nii", "o.txt", "o.nii.gz"}) EXPECT_FALSE(fs::exists(q_.dir / o)) << cmd;
  }
}

// NaN is NiftyReg's padding value and NiftyReg reads NaN voxels as 0: a NaN-padded floating image
// gives every drop-in the same result as the same image padded with 0.
TEST(CompatNiftyReg, NanPaddedInputsAreReadAsZeroAsNiftyRegReadsThem) {
  Pair q_;
  make_pair(q_, 24, 9, false);
  rd::Volume f = rd::read_volume(q_.flo), fz = f;
  for (int z = 0; z < f.geo.nz; ++z)
    for (int y = 0; y < f.geo.ny; ++y)
      for (int x = 0; x < 3; ++x) {
        f.data[f.geo.index(x, y, z)] = NAN;
        fz.data[f.geo.index(x, y, z)] = 0.f;
      }
  rd::write_volume(q_.dir / "nan.nii", f);
  rd::write_volume(q_.dir / "zero.nii", fz);
  for (const char* name : {"nan", "zero"}) {
    const std::string flo = q(q_.dir / (std::string(name) + ".nii"));
    const std::string io = " -ref " + q(q_.ref) + " -flo " + flo + " -platf 0 -voff";
    auto r = sh(ours("reg_aladin") + io + " -ln 2 -maxit 2 -aff " + q(q_.dir / (std::string(name) + ".txt")) + " -res " +
                q(q_.dir / (std::string(name) + "_aladin.nii")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = sh(ours("reg_f3d") + io + " -ln 1 -maxit 5 -cpp " + q(q_.dir / (std::string(name) + "_cpp.nii")) + " -res " +
           q(q_.dir / (std::string(name) + "_f3d.nii")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = sh(ours("reg_resample") + io + " -res " + q(q_.dir / (std::string(name) + "_res.nii")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(max_abs_diff(rd::read_affine(q_.dir / "nan.txt"), rd::read_affine(q_.dir / "zero.txt")), 0.0);
  EXPECT_EQ(rd::read_grid(q_.dir / "nan_cpp.nii", q_.p.v.geo).data, rd::read_grid(q_.dir / "zero_cpp.nii", q_.p.v.geo).data);
  for (const char* out : {"_aladin.nii", "_f3d.nii", "_res.nii"}) {
    const Diff d = compare(q_.dir / ("nan" + std::string(out)), q_.dir / ("zero" + std::string(out)));
    EXPECT_TRUE(d.same_dims) << out;
    EXPECT_EQ(d.differ, 0u) << out;
  }
  EXPECT_EQ(nmi_of(q_.ref, q_.dir / "nan.nii"), nmi_of(q_.ref, q_.dir / "zero.nii"));
  // An infinite voxel is still bad input, named.
  f.data[5] = INFINITY;
  rd::write_volume(q_.dir / "inf.nii", f);
  const auto r = sh(ours("reg_measure") + " -ref " + q(q_.ref) + " -flo " + q(q_.dir / "inf.nii") + " -nmi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("inf.nii"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("infinite"), std::string::npos) << r.err;
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
  // (our reader, as NiftyReg's, reads NaN as 0: the stored float32 values are looked at directly)
  std::ifstream raw(d / "nan.nii", std::ios::binary);
  std::vector<float> stored(64);
  raw.seekg(352);
  ASSERT_TRUE(raw.read(reinterpret_cast<char*>(stored.data()), 64 * sizeof(float)));
  EXPECT_TRUE(std::isnan(stored[nan.vol.geo.index(3, 1, 1)]));
  EXPECT_EQ(stored[nan.vol.geo.index(2, 1, 1)], 101.f);
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
