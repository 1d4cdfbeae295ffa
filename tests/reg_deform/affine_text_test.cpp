// NiftyReg's affine text format: reading reg_aladin's own output, exact round trips, and every kind
// of bad file (garbled, truncated, singular, non-finite, wrong last row) as an InputError naming
// the file; through the CLI, exit 2 with one line on stderr.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "io/affine_text.hpp"
#include "io/nifti_io.hpp"

namespace rd = evk::reg_deform;
namespace fs = std::filesystem;

namespace {
void put(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}
std::string error_of(const std::string& text) {
  try {
    rd::parse_affine(text, "m.txt");
  } catch (const evk::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(RegAffineText, ReadsRegAladinOutput) {
  // reg_aladin writes each row with "%.7g %.7g %.7g %.7g\n" (this block is its output on the
  // subject -> ICBM pair, level 2 of 3).
  const std::string aladin =
      "1.01295 -4.66146e-05 -0.0240165 -2.33483\n"
      "-0.00584415 1.03689 -0.213126 39.3286\n"
      "0.03403 0.140089 0.997927 -26.7909\n"
      "0 0 0 1\n";
  const rd::Mat44 m = rd::parse_affine(aladin, "aladin.txt");
  EXPECT_DOUBLE_EQ(m.m[0][0], 1.01295);
  EXPECT_DOUBLE_EQ(m.m[0][1], -4.66146e-05);
  EXPECT_DOUBLE_EQ(m.m[1][3], 39.3286);
  EXPECT_DOUBLE_EQ(m.m[2][2], 0.997927);
  EXPECT_EQ(m.m[3][3], 1.0);
  // Tabs, CRLF, a trailing blank line and leading '+' are all still 4x4.
  const rd::Mat44 t = rd::parse_affine("1\t0\t0\t+2\r\n0 1 0 3\r\n0 0 1 4\r\n0 0 0 1\r\n\r\n", "t.txt");
  EXPECT_EQ(t.m[0][3], 2.0);
  EXPECT_EQ(t.m[2][3], 4.0);
}

TEST(RegAffineText, RoundTripIsExact) {
  evk::testing::TempDir tmp;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-2, 2), tr(-80, 80);
  for (int k = 0; k < 50; ++k) {
    rd::Mat44 m;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m.m[i][j] = (i == j ? 1 : 0) + 0.3 * u(rng);
      m.m[i][3] = tr(rng);
    }
    const fs::path p = tmp / ("m" + std::to_string(k) + ".txt");
    rd::write_affine(p, m);
    const rd::Mat44 r = rd::read_affine(p);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) EXPECT_EQ(r.m[i][j], m.m[i][j]) << k << " " << i << j;
  }
  // The written text is 4 lines of 4 numbers, last line exactly "0 0 0 1" (what NiftyReg writes).
  const std::string s = rd::format_affine(rd::Mat44::identity());
  EXPECT_EQ(s, "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n");
}

TEST(RegAffineText, BadMatricesAreInputErrors) {
  const std::string good_rows = "1 0 0 1\n0 1 0 2\n0 0 1 3\n";
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of("\n \n").find("empty"), std::string::npos);
  EXPECT_NE(error_of("1 0 0 1\n0 1 0 2\n").find("truncated"), std::string::npos);  // 2 rows
  EXPECT_NE(error_of(good_rows + "0 0 0").find("line 4 holds 3 numbers"), std::string::npos);
  EXPECT_NE(error_of(good_rows + "0 0 0 1 0").find("holds 5 numbers"), std::string::npos);
  EXPECT_NE(error_of(good_rows + "0 0 0 1\n0 0 0 1\n").find("more than 4 rows"), std::string::npos);
  EXPECT_NE(error_of("1 0 0 x\n0 1 0 2\n0 0 1 3\n0 0 0 1\n").find("'x' is not a number"), std::string::npos);
  EXPECT_NE(error_of("1 0 0 1e\n0 1 0 2\n0 0 1 3\n0 0 0 1\n").find("not a number"), std::string::npos);
  EXPECT_NE(error_of("1 0 0 1,5\n0 1 0 2\n0 0 1 3\n0 0 0 1\n").find("not a number"), std::string::npos);
  EXPECT_NE(error_of("1 0 0 nan\n0 1 0 2\n0 0 1 3\n0 0 0 1\n").find("not finite"), std::string::npos);
  EXPECT_NE(error_of("1 0 0 inf\n0 1 0 2\n0 0 1 3\n0 0 0 1\n").find("not finite"), std::string::npos);
  EXPECT_NE(error_of("1 0 0 1e999\n0 1 0 2\n0 0 1 3\n0 0 0 1\n").find("m.txt"), std::string::npos);
  EXPECT_NE(error_of(good_rows + "0 0 0 2\n").find("last row"), std::string::npos);
  EXPECT_NE(error_of(good_rows + "0 0.5 0 1\n").find("last row"), std::string::npos);
  // Singular: a zero column, two equal rows, all zeros.
  EXPECT_NE(error_of("1 0 0 1\n0 0 0 2\n0 0 1 3\n0 0 0 1\n").find("singular"), std::string::npos);
  EXPECT_NE(error_of("1 2 3 1\n1 2 3 2\n0 0 1 3\n0 0 0 1\n").find("singular"), std::string::npos);
  EXPECT_NE(error_of("0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 1\n").find("singular"), std::string::npos);
  // Every message names the source first.
  EXPECT_EQ(error_of("garbage").rfind("m.txt: ", 0), 0u);
  // Files: missing, a directory, binary data; the writer refuses a singular matrix.
  evk::testing::TempDir tmp;
  EXPECT_THROW(rd::read_affine(tmp / "none.txt"), evk::InputError);
  EXPECT_THROW(rd::read_affine(tmp.path()), evk::InputError);
  put(tmp / "bin.txt", std::string("1 0 0 0\n\0\0\0", 11));
  EXPECT_THROW(rd::read_affine(tmp / "bin.txt"), evk::InputError);
  rd::Mat44 z = rd::Mat44::identity();
  z.m[1][1] = 0;
  EXPECT_THROW(rd::write_affine(tmp / "z.txt", z), evk::InputError);
  EXPECT_FALSE(fs::exists(tmp / "z.txt"));
}

TEST(RegAffineText, CliRejectsBadAffineFiles) {
  evk::testing::TempDir tmp;
  rd::Volume ref;
  ref.geo = rd::Geometry::make(9, 8, 7);
  ref.data.assign(ref.geo.voxels(), 1.0f);
  rd::write_volume(tmp / "ref.nii.gz", ref);
  put(tmp / "sing.txt", "1 0 0 1\n0 0 0 2\n0 0 1 3\n0 0 0 1\n");
  put(tmp / "garbled.txt", "1 0 0 1\n0 1 0 2\n0 0 1 three\n0 0 0 1\n");
  put(tmp / "short.txt", "1 0 0 1\n0 1 0 2\n0 0 1");
  for (const char* bad : {"sing.txt", "garbled.txt", "short.txt"}) {
    const auto r = evk::testing::run_tool(
        "reg_deform", "grid --ref " + (tmp / "ref.nii.gz").string() + " -o " + (tmp / "g.nii.gz").string() +
                          " --affine " + (tmp / bad).string());
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "g.nii.gz"));
  }
}
