// The stereo bad-input catalogue (docs/ROBUSTNESS.md): every case through the real executable.
// Rejected: exit 2, one stderr line naming the file or argument and the problem, nothing left in
// the directory. Accepted: the output equals the CPU reference of the well-formed input.
#include <gtest/gtest.h>

#include <cstring>

#include "catalogue.hpp"
#include "gi/gi_problem.hpp"
#include "gi_rundir_catalogue.hpp"
#include "io/io.hpp"
#include "core/reference.hpp"
#include "core/synthetic.hpp"
#include "evk_testing.hpp"

namespace fs = std::filesystem;
using namespace evk::stereo;
using evk::testing::catalogue::expect_rejected;
using evk::testing::catalogue::files_in;
using evk::testing::catalogue::q;
using evk::testing::catalogue::Recorder;
using evk::testing::catalogue::slurp;
using evk::testing::catalogue::spit;

namespace {

constexpr const char* kTool = "stereo";
const Params kParams{0, 12, 5, 500000};
const std::string kOpts = " --max-disparity 12 --window 5 --backend cpu";

// L.pgm / R.pgm: a 40x30 synthetic pair.
SyntheticPair setup(const fs::path& dir) {
  SyntheticPair sp = make_synthetic_pair(40, 30, 12, 3);
  write_pgm8(dir / "L.pgm", sp.left);
  write_pgm8(dir / "R.pgm", sp.right);
  return sp;
}

std::string disparity_args(const fs::path& dir, const std::string& left, const std::string& right,
                           const std::string& out = "d.pfm") {
  return "disparity " + q(dir / left) + " " + q(dir / right) + " -o " + q(dir / out) + kOpts;
}

// A disparity run on (left, right) must be rejected naming `name` and `problem`.
void expect_disparity_rejects(Recorder& rec, const fs::path& dir, const std::string& left, const std::string& right,
                              const std::string& name, const std::string& problem) {
  const auto before = files_in(dir);
  expect_rejected(rec.tool(disparity_args(dir, left, right)), {name, problem}, dir, before);
}

// A damaged left image: writes `bytes` as bad.pgm and expects the rejection.
void bad_left(Recorder& rec, const fs::path& dir, const std::string& bytes, const std::string& problem,
              const std::string& name = "bad.pgm") {
  setup(dir);
  spit(dir / name, bytes);
  expect_disparity_rejects(rec, dir, name, "R.pgm", name, problem);
}

// The accepted run's output equals the reference on the well-formed pair.
void expect_reference_output(Recorder& rec, const fs::path& dir, const SyntheticPair& sp, const std::string& left,
                             const std::string& right) {
  const auto& r = rec.tool(disparity_args(dir, left, right));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_disparity(dir / "d.pfm", 1).v, to_float(disparity_cpu(sp.left, sp.right, kParams)).v);
}

std::string pgm_header(int w, int h, int maxval = 255, const char* magic = "P5") {
  return std::string(magic) + "\n" + std::to_string(w) + " " + std::to_string(h) + "\n" + std::to_string(maxval) + "\n";
}

// PFM text for a w x h map of value v (little-endian).
std::string pfm(int w, int h, float v, const std::string& scale = "-1.0") {
  std::string s = "Pf\n" + std::to_string(w) + " " + std::to_string(h) + "\n" + scale + "\n";
  for (int i = 0; i < w * h; ++i) s.append(reinterpret_cast<const char*>(&v), 4);
  return s;
}

void eval_rejects(Recorder& rec, const fs::path& dir, const std::string& disp, const std::string& gt,
                  const std::vector<std::string>& mentions, const std::string& extra = "") {
  const auto before = files_in(dir);
  expect_rejected(rec.tool("eval " + q(dir / disp) + " " + q(dir / gt) + " --gt-scale 1" + extra), mentions, dir, before);
}

}  // namespace

#define CASE(id, category, input, expect) EVK_CATALOGUE_CASE(StereoCatalogue, id, kTool, category, input, expect)

// ---- truncation ---------------------------------------------------------------------------------

CASE(T01_PgmDataCut, "truncation", "P5 image with its last row missing", "reject") {
  setup(dir);
  const std::string l = slurp(dir / "L.pgm");
  bad_left(rec, dir, l.substr(0, l.size() - 40), "truncated pixel data");
}
CASE(T02_PgmOneByteShort, "truncation", "P5 image one byte short", "reject") {
  setup(dir);
  const std::string l = slurp(dir / "L.pgm");
  bad_left(rec, dir, l.substr(0, l.size() - 1), "truncated pixel data");
}
CASE(T03_PgmHeaderCut, "truncation", "P5 header cut after the width", "reject") {
  bad_left(rec, dir, "P5\n40", "bad Netpbm header (height)");
}
CASE(T04_PgmNoData, "truncation", "P5 header without any pixel data", "reject") {
  bad_left(rec, dir, pgm_header(40, 30), "truncated pixel data");
}
CASE(T05_Pgm16Cut, "truncation", "16-bit P5 cut in the middle of a sample", "reject") {
  bad_left(rec, dir, pgm_header(40, 30, 65535) + std::string(40 * 30 * 2 - 1, '\x10'), "truncated pixel data");
}
CASE(T06_PpmDataCut, "truncation", "P6 colour image cut by one pixel", "reject") {
  bad_left(rec, dir, pgm_header(40, 30, 255, "P6") + std::string(40 * 30 * 3 - 3, 'x'), "truncated pixel data",
           "bad.ppm");
}
CASE(T07_AsciiPgmCut, "truncation", "P2 (text) image with its last sample missing", "reject") {
  std::string s = pgm_header(4, 3, 255, "P2");
  for (int i = 0; i < 11; ++i) s += std::to_string(i * 20) + " ";
  bad_left(rec, dir, s, "truncated or bad pixel data");
}
CASE(T07b_AsciiHeaderOnlyHuge, "truncation", "P3 header announcing 22255x22255 that ends right after maxval (fuzz find)",
     "reject") {
  bad_left(rec, dir, "P3\n22255\n\n\n22255\n\n\n\n\n\n\n\n 2", "truncated pixel data", "bad.ppm");
}
CASE(T08_PfmDataCut, "truncation", "PFM disparity map cut by one float (eval)", "reject") {
  spit(dir / "gt.pfm", pfm(10, 8, 3.0f));
  const std::string d = pfm(10, 8, 3.0f);
  spit(dir / "d.pfm", d.substr(0, d.size() - 4));
  eval_rejects(rec, dir, "d.pfm", "gt.pfm", {"d.pfm", "truncated PFM data"});
}
CASE(T09_PfmHeaderCut, "truncation", "PFM header cut after the size", "reject") {
  spit(dir / "gt.pfm", pfm(10, 8, 3.0f));
  spit(dir / "d.pfm", "Pf\n10 8\n");
  eval_rejects(rec, dir, "d.pfm", "gt.pfm", {"d.pfm", "bad PFM header"});
}
CASE(T10_EmptyFile, "truncation", "empty left image file", "reject") { bad_left(rec, dir, "", "empty file"); }
CASE(T11_PngCut, "truncation", "PNG cut in half (read through OpenCV, or refused without it)", "reject") {
  SyntheticPair sp = setup(dir);
  write_png(dir / "full.png", sp.left.width, sp.left.height, 1, 8, sp.left.pixels);
  const std::string png = slurp(dir / "full.png");
  fs::remove(dir / "full.png");
  bad_left(rec, dir, png.substr(0, png.size() / 2), "bad.png", "bad.png");
}

CASE(T12_GenomeCutBetweenGenes, "truncation", "--kernel genome file (with its '# genes:' header) cut between two genes",
     "reject") {
  setup(dir);
  spit(dir / "cut.genome",
       "# evokernels genome v1\n# kernel: stereo\n# cc: 9.0\n# genes: 3\nOUT_TYPE=uchar DPER=2\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool(disparity_args(dir, "L.pgm", "R.pgm") + " --kernel " + q(dir / "cut.genome")),
                  {"cut.genome", "truncated or edited"}, dir, before);
}
CASE(T13_GenomeCutInAGene, "truncation", "--kernel genome file cut inside a gene", "reject") {
  setup(dir);
  spit(dir / "cut.genome", "# kernel: stereo\n<launchbounds_K_130><launchb");
  const auto before = files_in(dir);
  expect_rejected(rec.tool(disparity_args(dir, "L.pgm", "R.pgm") + " --kernel " + q(dir / "cut.genome")),
                  {"cut.genome"}, dir, before);
}

// ---- wrong but well-formed ----------------------------------------------------------------------

CASE(W01_SizeMismatch, "wrong input", "left and right images of different sizes", "reject") {
  SyntheticPair sp = setup(dir);
  SyntheticPair other = make_synthetic_pair(41, 30, 12, 3);
  write_pgm8(dir / "R41.pgm", other.right);
  expect_disparity_rejects(rec, dir, "L.pgm", "R41.pgm", "R41.pgm", "differ in size");
}
CASE(W02_ColourAndGrey, "wrong input", "colour (P6) left image with a grey (P5) right one, R=G=B",
     "accept: same disparities") {
  SyntheticPair sp = setup(dir);
  std::string ppm = pgm_header(sp.left.width, sp.left.height, 255, "P6");
  for (auto v : sp.left.pixels) ppm += std::string(3, static_cast<char>(v));
  spit(dir / "L.ppm", ppm);
  expect_reference_output(rec, dir, sp, "L.ppm", "R.pgm");
}
CASE(W03_Grey16Bit, "wrong input", "16-bit grey pair whose values are the 8-bit ones x 257",
     "accept: same disparities") {
  SyntheticPair sp = setup(dir);
  for (const char* n : {"L", "R"}) {
    const Image8& im = std::string(n) == "L" ? sp.left : sp.right;
    std::string s = pgm_header(im.width, im.height, 65535);
    for (auto v : im.pixels) s += std::string(2, static_cast<char>(v));
    spit(dir / (std::string(n) + "16.pgm"), s);
  }
  expect_reference_output(rec, dir, sp, "L16.pgm", "R16.pgm");
}
CASE(W04_GroundTruthSizeMismatch, "wrong input", "ground truth of another size than the disparity map (eval)",
     "reject") {
  spit(dir / "d.pfm", pfm(10, 8, 3.0f));
  spit(dir / "gt.pfm", pfm(11, 8, 3.0f));
  eval_rejects(rec, dir, "d.pfm", "gt.pfm", {"gt.pfm", "differs"});
}
CASE(W05_MaskSizeMismatch, "wrong input", "mask of another size than the ground truth (eval)", "reject") {
  spit(dir / "d.pfm", pfm(10, 8, 3.0f));
  spit(dir / "gt.pfm", pfm(10, 8, 3.0f));
  spit(dir / "m.pgm", pgm_header(9, 8) + std::string(72, '\xff'));
  eval_rejects(rec, dir, "d.pfm", "gt.pfm", {"m.pgm", "differs"}, " --mask " + q(dir / "m.pgm"));
}
CASE(W06_TextFileAsImage, "wrong input", "a text file given as the left image", "reject") {
  bad_left(rec, dir, "just some text\n", "bad.txt", "bad.txt");
}
CASE(W07_NiftiAsImage, "wrong input", "a NIfTI header given as the left image", "reject") {
  std::string hdr(352, '\0');
  hdr[0] = 0x5c;
  hdr[1] = 0x01;
  std::memcpy(&hdr[344], "n+1", 4);
  bad_left(rec, dir, hdr, "bad.nii", "bad.nii");
}
CASE(W08_UnknownOutputFormat, "wrong input", "output named .txt", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool(disparity_args(dir, "L.pgm", "R.pgm", "d.txt")), {"d.txt", "unknown output format"}, dir,
                  before);
}
CASE(W09_ColourPfmDisparity, "wrong input", "a colour PF (3 channels) disparity map: the first channel is used",
     "accept: eval as the grey map") {
  spit(dir / "gt.pfm", pfm(10, 8, 3.0f));
  std::string s = "PF\n10 8\n-1.0\n";
  for (int i = 0; i < 80; ++i)
    for (float v : {4.5f, 100.0f, -7.0f}) s.append(reinterpret_cast<const char*>(&v), 4);
  spit(dir / "d.pfm", s);
  const auto& r = rec.tool("eval " + q(dir / "d.pfm") + " " + q(dir / "gt.pfm") + " --gt-scale 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["rms"].get<double>(), 1.5);  // |4.5 - 3| everywhere
  EXPECT_DOUBLE_EQ(j["bad_1.0_percent"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["bad_2.0_percent"].get<double>(), 0.0);
}
CASE(W10_ImageSmallerThanWindow, "wrong input", "a 2x2 pair with a 5x5 window", "accept: the reference's answer") {
  Image8 a{2, 2, {10, 20, 30, 40}}, b{2, 2, {10, 20, 30, 40}};
  write_pgm8(dir / "a.pgm", a);
  write_pgm8(dir / "b.pgm", b);
  const auto& r = rec.tool(disparity_args(dir, "a.pgm", "b.pgm"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_disparity(dir / "d.pfm", 1).v, to_float(disparity_cpu(a, b, kParams)).v);
}
CASE(W11_BatchListMissingImage, "wrong input", "batch list naming a right image that does not exist", "reject") {
  setup(dir);
  fs::create_directories(dir / "out");
  spit(dir / "pairs.txt", "L.pgm R.pgm one\nL.pgm nothere.pgm two\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool("batch " + q(dir / "pairs.txt") + " -o " + q(dir / "out") + kOpts),
                  {"nothere.pgm", "no such file"}, dir, before);
}
CASE(W12_BatchBadPairLeavesNothing, "wrong input", "batch whose second pair is cut: no output of the first stays",
     "reject") {
  setup(dir);
  fs::create_directories(dir / "out");
  const std::string l = slurp(dir / "L.pgm");
  spit(dir / "cut.pgm", l.substr(0, l.size() - 10));
  spit(dir / "pairs.txt", "L.pgm R.pgm one\ncut.pgm R.pgm two\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool("batch " + q(dir / "pairs.txt") + " -o " + q(dir / "out") + " --color" + kOpts),
                  {"cut.pgm", "truncated pixel data"}, dir, before);
}

// ---- hostile values -----------------------------------------------------------------------------

CASE(H01_ZeroWidth, "hostile value", "P5 header with width 0", "reject") {
  bad_left(rec, dir, pgm_header(0, 30), "empty image");
}
CASE(H02_HugeSize, "hostile value", "P5 header of 100000 x 100000 on a small file (no 10 GB allocation)", "reject") {
  bad_left(rec, dir, pgm_header(100000, 100000) + std::string(1000, 'x'), "truncated pixel data");
}
CASE(H03_TooLarge, "hostile value", "P5 header of 100001 x 5", "reject") {
  bad_left(rec, dir, pgm_header(100001, 5) + std::string(500005, 'x'), "image too large");
}
CASE(H04_MaxvalZero, "hostile value", "P5 maxval 0", "reject") {
  bad_left(rec, dir, pgm_header(40, 30, 0) + std::string(1200, 'x'), "maxval must be 1..65535");
}
CASE(H05_MaxvalTooLarge, "hostile value", "P5 maxval 70000", "reject") {
  bad_left(rec, dir, pgm_header(40, 30, 70000) + std::string(2400, 'x'), "maxval must be 1..65535");
}
CASE(H06_SampleAboveMaxval, "hostile value", "P2 sample above maxval", "reject") {
  bad_left(rec, dir, "P2\n2 2\n100\n1 2 3 101\n", "sample above maxval");
}
CASE(H07_NegativeWidth, "hostile value", "P5 header with width -40", "reject") {
  bad_left(rec, dir, "P5\n-40 30\n255\n" + std::string(1200, 'x'), "bad Netpbm header (width)");
}
CASE(H08_WidthOverflow, "hostile value", "P5 width 99999999999999999999 (overflows a long)", "reject") {
  bad_left(rec, dir, "P5\n99999999999999999999 30\n255\n" + std::string(1200, 'x'), "bad Netpbm header (width)");
}
CASE(H09_PfmScaleZero, "hostile value", "PFM scale 0 (no byte order)", "reject") {
  spit(dir / "gt.pfm", pfm(10, 8, 3.0f));
  spit(dir / "d.pfm", pfm(10, 8, 3.0f, "0.0"));
  eval_rejects(rec, dir, "d.pfm", "gt.pfm", {"d.pfm", "bad PFM scale"});
}
CASE(H10_PfmScaleNan, "hostile value", "PFM scale nan", "reject") {
  spit(dir / "gt.pfm", pfm(10, 8, 3.0f));
  spit(dir / "d.pfm", pfm(10, 8, 3.0f, "nan"));
  eval_rejects(rec, dir, "d.pfm", "gt.pfm", {"d.pfm", "PFM"});
}
CASE(H11_PfmHugeSize, "hostile value", "PFM header of 100000 x 100000 on a small file", "reject") {
  spit(dir / "gt.pfm", pfm(10, 8, 3.0f));
  spit(dir / "d.pfm", "Pf\n100000 100000\n-1.0\n" + std::string(400, 'x'));
  eval_rejects(rec, dir, "d.pfm", "gt.pfm", {"d.pfm", "truncated PFM data"});
}
CASE(H12_NanInfGroundTruth, "hostile value", "ground truth with NaN, +Inf and -Inf pixels: unknown, not scored",
     "accept: only finite pixels scored") {
  std::string gt = "Pf\n4 1\n-1.0\n";
  for (float v : {3.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()})
    gt.append(reinterpret_cast<const char*>(&v), 4);
  spit(dir / "gt.pfm", gt);
  spit(dir / "d.pfm", pfm(4, 1, 3.0f));
  const auto& r = rec.tool("eval " + q(dir / "d.pfm") + " " + q(dir / "gt.pfm") + " --gt-scale 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pixels"].get<long long>(), 1);
  EXPECT_DOUBLE_EQ(j["rms"].get<double>(), 0.0);
}
CASE(H13_NanDisparity, "hostile value", "disparity map with NaN pixels: counted invalid", "accept: NaN = invalid") {
  spit(dir / "gt.pfm", pfm(2, 1, 3.0f));
  std::string d = "Pf\n2 1\n-1.0\n";
  for (float v : {3.0f, std::numeric_limits<float>::quiet_NaN()}) d.append(reinterpret_cast<const char*>(&v), 4);
  spit(dir / "d.pfm", d);
  const auto& r = rec.tool("eval " + q(dir / "d.pfm") + " " + q(dir / "gt.pfm") + " --gt-scale 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out)["invalid_percent"].get<double>(), 50.0);
}
CASE(H14_PngScaleOverflow, "hostile value", "--png-scale 10000 with max disparity 12 (does not fit 16 bits)",
     "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool(disparity_args(dir, "L.pgm", "R.pgm", "d.png") + " --png-scale 10000"),
                  {"--png-scale", "16 bits"}, dir, before);
}
CASE(H15_EvenWindow, "hostile value", "--window 4", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("disparity " + q(dir / "L.pgm") + " " + q(dir / "R.pgm") + " -o " + q(dir / "d.pfm") +
                           " --window 4 --backend cpu"),
                  {"--window", "odd"}, dir, before);
}
CASE(H16_DisparityRangeInverted, "hostile value", "--min-disparity 20 above --max-disparity 12", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("disparity " + q(dir / "L.pgm") + " " + q(dir / "R.pgm") + " -o " + q(dir / "d.pfm") +
                           " --min-disparity 20 --max-disparity 12 --backend cpu"),
                  {"--max-disparity"}, dir, before);
}
CASE(H17_CrlfBinaryHeader, "hostile value", "P5 header with CRLF line ends (the LF would be read as a pixel)",
     "reject") {
  SyntheticPair sp = setup(dir);
  std::string s = "P5\r\n40 30\r\n255\r\n";
  s.append(sp.left.pixels.begin(), sp.left.pixels.end());
  bad_left(rec, dir, s, "CRLF");
}
CASE(H18_CrlfAsciiPgm, "hostile value", "P2 (text) images with CRLF line ends", "accept: same disparities") {
  SyntheticPair sp = setup(dir);
  for (const char* n : {"L", "R"}) {
    const Image8& im = std::string(n) == "L" ? sp.left : sp.right;
    std::string s = "P2\r\n# comment\r\n40 30\r\n255\r\n";
    for (std::size_t i = 0; i < im.pixels.size(); ++i) s += std::to_string(im.pixels[i]) + (i % 16 == 15 ? "\r\n" : " ");
    spit(dir / (std::string(n) + "a.pgm"), s);
  }
  expect_reference_output(rec, dir, sp, "La.pgm", "Ra.pgm");
}
CASE(H19_NonUtf8FileName, "hostile value", "left image under a non-UTF-8 file name (bytes 0xff 0xfe)",
     "accept: same disparities") {
  SyntheticPair sp = setup(dir);
  fs::copy_file(dir / "L.pgm", dir / std::string("l\xff\xfe.pgm"));
  expect_reference_output(rec, dir, sp, std::string("l\xff\xfe.pgm"), "R.pgm");
}
CASE(H20_NewlineInFileName, "hostile value", "a cut image whose name contains a newline", "reject") {
  setup(dir);
  spit(dir / "a\nb.pgm", pgm_header(40, 30) + "xx");
  expect_disparity_rejects(rec, dir, "a\nb.pgm", "R.pgm", "a\\nb.pgm", "truncated pixel data");
}

// ---- environment --------------------------------------------------------------------------------

CASE(E01_UnwritableOutputDirectory, "environment", "output in a directory nobody may write (/proc)", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("disparity " + q(dir / "L.pgm") + " " + q(dir / "R.pgm") + " -o /proc/d.pfm" + kOpts),
                  {"/proc/d.pfm", "cannot write"}, dir, before);
}
CASE(E02_MissingOutputDirectory, "environment", "output in a directory that does not exist", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool(disparity_args(dir, "L.pgm", "R.pgm", "no/such/d.pfm")), {"d.pfm", "does not exist"}, dir,
                  before);
}
CASE(E03_OutputIsAnInput, "environment", "output path equal to the left image (-o L.pgm)", "reject") {
  setup(dir);
  const std::string keep = slurp(dir / "L.pgm");
  const auto before = files_in(dir);
  expect_rejected(rec.tool(disparity_args(dir, "L.pgm", "R.pgm", "L.pgm")), {"L.pgm", "is also an input"}, dir, before);
  EXPECT_EQ(slurp(dir / "L.pgm"), keep) << "the input was changed";
}
CASE(E04_ColourOutputIsTheOutput, "environment", "--color path equal to -o", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool(disparity_args(dir, "L.pgm", "R.pgm", "d.png") + " --color " + q(dir / "d.png")),
                  {"d.png", "is also an input"}, dir, before);
}
CASE(E05_OutputIsADirectory, "environment", "output path is an existing directory named d.pfm", "reject") {
  setup(dir);
  fs::create_directories(dir / "d.pfm");
  expect_disparity_rejects(rec, dir, "L.pgm", "R.pgm", "d.pfm", "is a directory");
}
CASE(E06_InputIsADirectory, "environment", "left image path is a directory", "reject") {
  setup(dir);
  fs::create_directories(dir / "img.pgm");
  expect_disparity_rejects(rec, dir, "img.pgm", "R.pgm", "img.pgm", "is a directory");
}
CASE(E07_StdoutFull, "environment", "--json summary to a full standard output (/dev/full)", "reject") {
  setup(dir);
  fs::create_directories(dir / "out");
  const auto before = files_in(dir);
  const auto& r = rec.run("'" + (evk::testing::bin_dir() / kTool).string() + "' eval " + q(dir / "L.pgm") + " " +
                          q(dir / "L.pgm") + " --gt-scale 1 --disp-scale 1 --json >/dev/full");
  expect_rejected(r, {"standard output", "write failed"}, dir, before);
}
CASE(E08_FileSizeLimit, "environment", "output hits the file size limit (ulimit -f 2: a full disk)", "reject") {
  SyntheticPair sp = make_synthetic_pair(200, 100, 12, 3);
  write_pgm8(dir / "L.pgm", sp.left);
  write_pgm8(dir / "R.pgm", sp.right);
  const auto before = files_in(dir);
  const auto& r = rec.run("trap '' XFSZ; ulimit -f 2; '" + (evk::testing::bin_dir() / kTool).string() + "' " +
                          disparity_args(dir, "L.pgm", "R.pgm"));
  expect_rejected(r, {"d.pfm", "write failed"}, dir, before);
}
CASE(E09_FullFileSystem, "environment", "output on a full 64 KiB tmpfs (needs mount permission)", "reject") {
  SyntheticPair sp = make_synthetic_pair(200, 100, 12, 3);
  write_pgm8(dir / "L.pgm", sp.left);
  write_pgm8(dir / "R.pgm", sp.right);
  fs::create_directories(dir / "small");
  if (evk::testing::run("mount -t tmpfs -o size=64k tmpfs " + q(dir / "small")).exit_code != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here";
  const auto before = files_in(dir / "small");
  const auto& r = rec.tool(disparity_args(dir, "L.pgm", "R.pgm", "small/d.pfm"));
  expect_rejected(r, {"d.pfm", "write failed"}, dir / "small", before);
  evk::testing::run("umount " + q(dir / "small"));
}
CASE(E10_Sigint, "environment", "SIGINT during a long disparity run", "exit 130, nothing left") {
  Image8 l = random_image(1500, 1000, 1), r = random_image(1500, 1000, 2);
  write_pgm8(dir / "L.pgm", l);
  write_pgm8(dir / "R.pgm", r);
  const auto before = files_in(dir);
  const auto& res = rec.run(evk::testing::catalogue::interrupt_when(
      "'" + (evk::testing::bin_dir() / kTool).string() + "' disparity " + q(dir / "L.pgm") + " " + q(dir / "R.pgm") +
      " -o " + q(dir / "d.pfm") + " --max-disparity 400 --window 21 --backend cpu"));
  EXPECT_NE(res.err.find("exit 130"), std::string::npos) << res.err;
  for (const auto& f : files_in(dir)) EXPECT_TRUE(before.count(f)) << "left behind: " << f;
}

// A damaged GI run directory under `stereo gi run --resume` and `stereo gi report` (tests/support/gi_rundir_catalogue.hpp).
EVK_GI_RUNDIR_CASES(StereoCatalogue, "stereo", evk::stereo::make_gi_problem_for_seed)

TEST(StereoCatalogue, EveryCaseIsInTheDocs) { evk::testing::catalogue::expect_documented(kTool); }
