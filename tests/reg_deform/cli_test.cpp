// The reg_deform tool end to end: happy paths, and bad input -> exit 2, one line naming the file,
// no output left behind.
#include <nifti2_io.h>

#include <cmath>
#include <fstream>

#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "core/field/active.hpp"
#include "core/field/field_cpu.hpp"
#include "core/field/grid_make.hpp"
#include "io/nifti_io.hpp"

namespace rd = evk::reg_deform;
namespace fs = std::filesystem;
using evk::testing::run_tool;

namespace {
struct Files {
  evk::testing::TempDir tmp;
  rd::Volume ref;
  Files() {
    ref.geo = rd::Geometry::make(21, 17, 13, 1.0, 1.0, 1.0, {-10, -8, -6});
    ref.data.resize(ref.geo.voxels());
    for (std::size_t i = 0; i < ref.data.size(); ++i) ref.data[i] = static_cast<float>(i % 37);
    rd::write_volume(tmp / "ref.nii.gz", ref);
    rd::write_grid(tmp / "cpp.nii.gz", rd::make_grid(ref.geo, 5));
  }
  std::string p(const std::string& n) const { return (tmp / n).string(); }
};

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void expect_bad(const std::string& args, const std::string& out, const std::string& needle) {
  const auto r = run_tool("reg_deform", args + " --backend cpu");
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr should name " << needle << ": " << r.err;
  EXPECT_FALSE(fs::exists(out)) << out;
  const auto dir = fs::path(out).parent_path();
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir)) {
      EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "temp left: " << e.path();
    }
}

void write_raw_nim(const fs::path& path, const int64_t dims[8], int intent, double p1, float fill) {
  nifti_image* n = nifti_make_new_nim(dims, DT_FLOAT32, 1);
  for (int64_t i = 0; i < n->nvox; ++i) static_cast<float*>(n->data)[i] = fill;
  n->intent_code = intent;
  n->intent_p1 = p1;
  nifti_set_filenames(n, path.c_str(), 0, 1);
  nifti_image_write(n);
  nifti_image_free(n);
}
}  // namespace

TEST(RegCli, FieldGridResampleHappyPaths) {
  Files f;
  auto r = run_tool("reg_deform", "field --ref " + f.p("ref.nii.gz") + " --cpp " + f.p("cpp.nii.gz") + " -o " +
                                      f.p("def.nii.gz") + " --backend cpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"backend\": \"cpu\""), std::string::npos);
  const rd::Transformation t = rd::read_transformation(f.p("def.nii.gz"), f.ref.geo);
  EXPECT_EQ(t.kind, rd::TransKind::deformation);
  EXPECT_NEAR(t.field.data[0], -10.0f, 1e-4);  // voxel (0,0,0) at world x = -10 (identity grid)
  r = run_tool("reg_deform", "field --ref " + f.p("ref.nii.gz") + " --cpp " + f.p("cpp.nii.gz") + " -o " +
                                 f.p("disp.nii") + " --displacement --backend cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(rd::read_transformation(f.p("disp.nii"), f.ref.geo).kind, rd::TransKind::displacement);
  for (const char* trans : {"def.nii.gz", "disp.nii", "cpp.nii.gz"}) {
    r = run_tool("reg_deform", "resample --ref " + f.p("ref.nii.gz") + " --flo " + f.p("ref.nii.gz") + " --trans " +
                                   f.p(trans) + " -o " + f.p("out.nii.gz") + " --interp nearest --backend cpu");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(rd::read_volume(f.p("out.nii.gz")).data, f.ref.data) << trans;
  }
  {
    std::ofstream a(f.tmp / "aff.txt");
    a << "1 0 0 1\n0 1 0 0\n0 0 1 0\n0 0 0 1\n";
  }
  r = run_tool("reg_deform", "grid --ref " + f.p("ref.nii.gz") + " -o " + f.p("g3.nii") + " --spacing 3 --affine " +
                                 f.p("aff.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const rd::Grid g = rd::read_grid(f.p("g3.nii"), f.ref.geo);
  EXPECT_EQ(g.sx, 3);
  EXPECT_EQ(g.geo.nx, 10);  // ceil(21/3 + 3)
  EXPECT_NEAR(g.data[0], -10 - 3 + 1, 1e-4);  // control point 0 at voxel -3, shifted by +1 mm
}

TEST(RegCli, RandomCaseIsDeterministic) {
  evk::testing::TempDir tmp;
  for (const char* d : {"a", "b"}) {
    const auto r = run_tool("reg_deform", "random-case --seed 4 --size 40 -o " + (tmp / d).string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const rd::Volume a = rd::read_volume(tmp / "a" / "image.nii.gz"), b = rd::read_volume(tmp / "b" / "image.nii.gz");
  EXPECT_EQ(a.data, b.data);
  const rd::Grid g = rd::read_grid(tmp / "a" / "cpp.nii.gz", a.geo);
  EXPECT_EQ(g.sx, 5);
  EXPECT_GT(rd::count_active(a.geo, rd::read_mask(tmp / "a" / "mask.nii.gz", a.geo)), 1000u);
}

TEST(RegCli, BadInputExit2OneLineNothingLeft) {
  Files f;
  const std::string ref = f.p("ref.nii.gz"), cpp = f.p("cpp.nii.gz"), out = f.p("o.nii.gz");
  auto field = [&](const std::string& r, const std::string& c) { return "field --ref " + r + " --cpp " + c + " -o " + out; };
  // 4-D reference
  const int64_t d4[8] = {4, 5, 5, 5, 2, 1, 1, 1};
  write_raw_nim(f.tmp / "r4.nii", d4, 0, 0, 1);
  expect_bad(field(f.p("r4.nii"), cpp), out, "r4.nii");
  // cpp that is 3-D
  expect_bad(field(ref, ref), out, "ref.nii.gz");
  // cpp with the wrong intent
  const int64_t d5[8] = {5, 10, 9, 8, 1, 3, 1, 1};
  write_raw_nim(f.tmp / "noint.nii", d5, 0, 2, 1);
  expect_bad(field(ref, f.p("noint.nii")), out, "noint.nii");
  // a deformation field given as cpp (intent_p1 0)
  write_raw_nim(f.tmp / "p0.nii", d5, 1007, 0, 1);
  expect_bad(field(ref, f.p("p0.nii")), out, "p0.nii");
  // dims that do not fit the spacing
  rd::write_grid(f.tmp / "small.nii.gz", rd::make_grid(rd::Geometry::make(10, 17, 13, 1, 1, 1, {-10, -8, -6}), 5));
  expect_bad(field(ref, f.p("small.nii.gz")), out, "small.nii.gz");
  // NaN / Inf in the grid
  rd::Grid g = rd::make_grid(f.ref.geo, 5);
  g.data[17] = std::nanf("");
  rd::write_grid(f.tmp / "nan.nii.gz", g);
  expect_bad(field(ref, f.p("nan.nii.gz")), out, "nan.nii.gz");
  g.data[17] = INFINITY;
  rd::write_grid(f.tmp / "inf.nii", g);
  expect_bad(field(ref, f.p("inf.nii")), out, "inf.nii");
  // corrupt gzip (truncated) and garbage gzip
  {
    std::ifstream in(cpp, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(f.tmp / "trunc.nii.gz", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
    for (std::size_t i = 40; i < bytes.size(); i += 3) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
    std::ofstream(f.tmp / "bad.nii.gz", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  expect_bad(field(ref, f.p("trunc.nii.gz")), out, "trunc.nii.gz");
  expect_bad(field(ref, f.p("bad.nii.gz")), out, "bad.nii.gz");
  // empty file, missing file
  std::ofstream(f.tmp / "empty.nii").close();
  expect_bad(field(f.p("empty.nii"), cpp), out, "empty.nii");
  expect_bad(field(f.p("missing.nii"), cpp), out, "missing.nii");
  // unwritable output
  const std::string bad_out = (f.tmp / "no_such_dir" / "o.nii.gz").string();
  const auto r = run_tool("reg_deform", "field --ref " + ref + " --cpp " + cpp + " -o " + bad_out + " --backend cpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_FALSE(fs::exists(bad_out));
  // bad option values
  expect_bad("resample --ref " + ref + " --flo " + ref + " --trans " + cpp + " -o " + out + " --interp sinc", out,
             "--interp");
  expect_bad("grid --ref " + ref + " -o " + out + " --spacing -2", out, "--spacing");
}

// --kernel FILE: a malformed genome, or one for another kernel, is refused (also on the CPU backend).
TEST(RegCli, BadGenomeFileExit2OneLine) {
  Files f;
  const std::string out = f.p("o.nii.gz");
  const std::string field = "field --ref " + f.p("ref.nii.gz") + " --cpp " + f.p("cpp.nii.gz") + " -o " + out + " --kernel ";
  auto genome = [&](const std::string& name, const std::string& header_kernel, const std::string& body) {
    std::ofstream g(f.tmp / name);
    g << "# evokernels genome v1\n";
    if (!header_kernel.empty()) g << "# kernel: " << header_kernel << "\n";
    g << "# cc: 9.0\n" << body << "\n";
    return f.p(name);
  };
  expect_bad(field + genome("norule.genome", "reg_deform", "<_K_99999>"), out, "norule.genome");
  expect_bad(field + genome("trunc.genome", "reg_deform", "BLOCK_SIZE=256 <_K_3"), out, "trunc.genome");
  expect_bad(field + genome("badcfg.genome", "reg_deform", "BLOCK_SIZE=100"), out, "badcfg.genome");
  expect_bad(field + genome("words.genome", "reg_deform", "faster please"), out, "words.genome");
  expect_bad(field + genome("stereo.genome", "stereo", "BLOCK_W=64"), out, "stereo.genome");
  expect_bad(field + genome("nohdr.genome", "", "BLOCK_SIZE=256"), out, "nohdr.genome");
  expect_bad(field + f.p("missing.genome"), out, "missing.genome");
  // a well-formed genome is accepted (the CPU backend computes the reference field)
  const auto r = run_tool("reg_deform", field + genome("ok.genome", "reg_deform", "BLOCK_SIZE=256") + " --backend cpu");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out));
}

TEST(RegCli, DevicesListsTheKernel) {
  const auto r = run_tool("reg_deform", "devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (evk::gpu_environment().usable()) {
    EXPECT_NE(r.out.find("\"reg_deform\""), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("\"tool\": \"reg_deform\""), std::string::npos);
}
