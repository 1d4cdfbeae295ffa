// The reg_deform bad-input catalogue (docs/ROBUSTNESS.md): every case through the real executable.
// Rejected: exit 2, one stderr line naming the file or argument and the problem, nothing left in
// the directory. Accepted: the output equals the CPU reference of the well-formed input.
#include <gtest/gtest.h>
#include <nifti2_io.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "catalogue.hpp"
#include "gi/gi_problem.hpp"
#include "gi_rundir_catalogue.hpp"
#include "evk_testing.hpp"
#include "core/field/field_cpu.hpp"
#include "core/field/grid_make.hpp"
#include "io/nifti_io.hpp"

namespace fs = std::filesystem;
namespace rd = evk::reg_deform;
using evk::testing::catalogue::expect_rejected;
using evk::testing::catalogue::files_in;
using evk::testing::catalogue::q;
using evk::testing::catalogue::Recorder;
using evk::testing::catalogue::slurp;
using evk::testing::catalogue::spit;

namespace {

constexpr const char* kTool = "reg_deform";
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// NIfTI-1 header offsets (nifti1.h)
constexpr std::size_t kDim = 40, kIntentP1 = 56, kIntentCode = 68, kDatatype = 70, kBitpix = 72, kPixdim = 76,
                      kVoxOffset = 108, kSclSlope = 112, kSformCode = 254, kSrowX = 280;

struct Setup {
  rd::Volume ref;
  rd::Grid grid;
};

// ref.nii (12x10x8, an origin off zero), cpp.nii (its identity grid at spacing 5, then perturbed).
Setup setup(const fs::path& dir) {
  Setup s;
  s.ref.geo = rd::Geometry::make(12, 10, 8, 1.0, 1.0, 1.0, {-6, -5, -4});
  s.ref.data.resize(s.ref.geo.voxels());
  for (std::size_t i = 0; i < s.ref.data.size(); ++i) s.ref.data[i] = static_cast<float>(i % 29);
  rd::write_volume(dir / "ref.nii", s.ref);
  s.grid = rd::make_grid(s.ref.geo, 5);
  for (std::size_t i = 0; i < s.grid.data.size(); ++i) s.grid.data[i] += static_cast<float>((i % 7) * 0.25);
  rd::write_grid(dir / "cpp.nii", s.grid);
  return s;
}

template <class T>
void patch(const fs::path& p, std::size_t offset, T v) {
  std::string b = slurp(p);
  std::memcpy(&b[offset], &v, sizeof v);
  spit(p, b);
}
template <class T>
T peek(const fs::path& p, std::size_t offset) {
  const std::string b = slurp(p);
  T v;
  std::memcpy(&v, &b[offset], sizeof v);
  return v;
}

std::string field_args(const fs::path& dir, const std::string& ref, const std::string& cpp,
                       const std::string& out = "f.nii") {
  return "field --ref " + q(dir / ref) + " --cpp " + q(dir / cpp) + " -o " + q(dir / out) + " --backend cpu";
}

void expect_field_rejects(Recorder& rec, const fs::path& dir, const std::string& ref, const std::string& cpp,
                          const std::vector<std::string>& mentions) {
  const auto before = files_in(dir);
  expect_rejected(rec.tool(field_args(dir, ref, cpp)), mentions, dir, before);
}

// The field written by an accepted run equals the CPU reference's for the well-formed inputs.
void expect_reference_field(Recorder& rec, const fs::path& dir, const Setup& s, const std::string& ref,
                            const std::string& cpp) {
  const auto& r = rec.tool(field_args(dir, ref, cpp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rd::Grid g = s.grid;
  rd::attach_grid(g, s.ref.geo, "grid");
  EXPECT_EQ(rd::read_transformation(dir / "f.nii", s.ref.geo).field.data, rd::compute_field_cpu(s.ref.geo, g).data);
}

std::string gzip(const fs::path& dir, const std::string& name) {
  EXPECT_EQ(evk::testing::run("gzip -kf " + q(dir / name)).exit_code, 0);
  return name + ".gz";
}

// The first float of the data of a .nii written by us (vox_offset 352).
constexpr std::size_t kData = 352;

}  // namespace

#define CASE(id, category, input, expect) EVK_CATALOGUE_CASE(RegCatalogue, id, kTool, category, input, expect)

// ---- truncation ---------------------------------------------------------------------------------

CASE(T01_VolumeDataCut, "truncation", "reference .nii with its last 100 data bytes missing", "reject") {
  setup(dir);
  fs::resize_file(dir / "ref.nii", fs::file_size(dir / "ref.nii") - 100);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"ref.nii", "truncated image data"});
}
CASE(T02_VolumeHeaderCut, "truncation", "reference .nii cut inside the header (200 bytes)", "reject") {
  setup(dir);
  fs::resize_file(dir / "ref.nii", 200);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"ref.nii", "truncated header"});
}
CASE(T03_GzipStreamCut, "truncation", "reference .nii.gz whose gzip stream is cut in the middle", "reject") {
  setup(dir);
  const std::string gz = slurp(dir / gzip(dir, "ref.nii"));
  spit(dir / "cut.nii.gz", gz.substr(0, gz.size() / 2));
  fs::remove(dir / "ref.nii.gz");
  expect_field_rejects(rec, dir, "cut.nii.gz", "cpp.nii", {"cut.nii.gz", "truncated"});
}
CASE(T04_GzipOfCutFile, "truncation", "complete gzip stream of a .nii whose data is cut", "reject") {
  setup(dir);
  fs::resize_file(dir / "ref.nii", fs::file_size(dir / "ref.nii") - 100);
  gzip(dir, "ref.nii");
  fs::rename(dir / "ref.nii.gz", dir / "cut.nii.gz");
  expect_field_rejects(rec, dir, "cut.nii.gz", "cpp.nii", {"cut.nii.gz", "truncated"});
}
CASE(T05_GzipTrailerMissing, "truncation", "reference .nii.gz without its 8-byte gzip trailer", "reject") {
  setup(dir);
  const std::string gz = slurp(dir / gzip(dir, "ref.nii"));
  spit(dir / "cut.nii.gz", gz.substr(0, gz.size() - 8));
  fs::remove(dir / "ref.nii.gz");
  expect_field_rejects(rec, dir, "cut.nii.gz", "cpp.nii", {"cut.nii.gz", "truncated"});
}
CASE(T06_GridDataCut, "truncation", "control-point grid .nii with its last 4 bytes missing", "reject") {
  setup(dir);
  fs::resize_file(dir / "cpp.nii", fs::file_size(dir / "cpp.nii") - 4);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"cpp.nii", "truncated image data"});
}
CASE(T07_FieldDataCut, "truncation", "deformation field .nii (resample --trans) cut by 1 byte", "reject") {
  Setup s = setup(dir);
  rd::Field f = rd::compute_field_cpu(s.ref.geo, [&] {
    rd::Grid g = s.grid;
    rd::attach_grid(g, s.ref.geo, "grid");
    return g;
  }());
  rd::write_field(dir / "def.nii", f);
  fs::resize_file(dir / "def.nii", fs::file_size(dir / "def.nii") - 1);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("resample --ref " + q(dir / "ref.nii") + " --flo " + q(dir / "ref.nii") + " --trans " +
                           q(dir / "def.nii") + " -o " + q(dir / "o.nii") + " --backend cpu"),
                  {"def.nii", "truncated image data"}, dir, before);
}
CASE(T08_MaskDataCut, "truncation", "mask .nii cut by 10 bytes", "reject") {
  Setup s = setup(dir);
  rd::write_mask(dir / "mask.nii", s.ref.geo, rd::Mask(s.ref.geo.voxels(), 1));
  fs::resize_file(dir / "mask.nii", fs::file_size(dir / "mask.nii") - 10);
  const auto before = files_in(dir);
  expect_rejected(rec.tool(field_args(dir, "ref.nii", "cpp.nii") + " --mask " + q(dir / "mask.nii")),
                  {"mask.nii", "truncated image data"}, dir, before);
}
CASE(T09_HdrImgPairImgCut, "truncation", "an Analyze-style .hdr/.img pair whose .img is cut", "reject") {
  setup(dir);
  std::string nii = slurp(dir / "ref.nii"), hdr = nii.substr(0, 348);
  std::memcpy(&hdr[344], "ni1\0", 4);
  const float zero = 0;
  std::memcpy(&hdr[kVoxOffset], &zero, 4);
  spit(dir / "pair.hdr", hdr);
  spit(dir / "pair.img", nii.substr(kData, nii.size() - kData - 50));
  expect_field_rejects(rec, dir, "pair.hdr", "cpp.nii", {"pair.img", "truncated image data"});
}
CASE(T10_EmptyFile, "truncation", "an empty reference file", "reject") {
  setup(dir);
  spit(dir / "empty.nii", "");
  expect_field_rejects(rec, dir, "empty.nii", "cpp.nii", {"empty.nii", "empty file"});
}
CASE(T11_AffineCut, "truncation", "affine text file with 15 of its 16 numbers", "reject") {
  setup(dir);
  spit(dir / "a.txt", "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool("grid --ref " + q(dir / "ref.nii") + " --affine " + q(dir / "a.txt") + " -o " + q(dir / "g.nii")),
                  {"a.txt", "line 4 holds 3 numbers"}, dir, before);
}
CASE(T12_VoxOffsetBeyondEnd, "truncation", "vox_offset pointing past the end of the file", "reject") {
  setup(dir);
  patch<float>(dir / "ref.nii", kVoxOffset, 100000.0f);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"ref.nii", "truncated image data"});
}

CASE(T13_GenomeHeaderOnly, "truncation", "--kernel genome file cut after its headers ('# genes: 2', no genes)",
     "reject") {
  setup(dir);
  spit(dir / "cut.genome", "# evokernels genome v1\n# kernel: reg_deform\n# cc: 9.0\n# genes: 2\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool(field_args(dir, "ref.nii", "cpp.nii") + " --kernel " + q(dir / "cut.genome")),
                  {"cut.genome", "truncated or edited"}, dir, before);
}
CASE(T14_GenomeOfAnotherTool, "wrong input", "--kernel genome file of another tool (stereo)", "reject") {
  setup(dir);
  spit(dir / "st.genome", "# kernel: stereo\nDPER=2\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool(field_args(dir, "ref.nii", "cpp.nii") + " --kernel " + q(dir / "st.genome")),
                  {"st.genome", "not 'reg_deform'"}, dir, before);
}

// ---- wrong but well-formed ----------------------------------------------------------------------

CASE(W01_FourDimensionalReference, "wrong input", "a 4-D reference (2 time points)", "reject") {
  setup(dir);
  const int64_t dims[8] = {4, 12, 10, 8, 2, 1, 1, 1};
  nifti_image* n = nifti_make_new_nim(dims, DT_FLOAT32, 1);
  nifti_set_filenames(n, (dir / "v4.nii").c_str(), 0, 1);
  nifti_image_write(n);
  nifti_image_free(n);
  expect_field_rejects(rec, dir, "v4.nii", "cpp.nii", {"v4.nii", "3-D scalar volume"});
}
CASE(W02_VectorImageAsReference, "wrong input", "a 5-D vector image (the grid) given as the reference", "reject") {
  setup(dir);
  expect_field_rejects(rec, dir, "cpp.nii", "cpp.nii", {"cpp.nii", "3-D scalar volume"});
}
CASE(W03_VolumeAsGrid, "wrong input", "a scalar volume given as the control-point grid", "reject") {
  setup(dir);
  expect_field_rejects(rec, dir, "ref.nii", "ref.nii", {"ref.nii", "5-D"});
}
CASE(W04_FieldAsGrid, "wrong input", "a deformation field (intent_p1 0) given as the grid", "reject") {
  setup(dir);
  patch<float>(dir / "cpp.nii", kIntentP1, 0.0f);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"cpp.nii", "intent_p1 is not 2"});
}
CASE(W05_GridOfSmallerReference, "wrong input", "a grid made for a smaller reference (does not cover it)", "reject") {
  setup(dir);
  rd::write_grid(dir / "small.nii", rd::make_grid(rd::Geometry::make(6, 10, 8, 1, 1, 1, {-6, -5, -4}), 5));
  expect_field_rejects(rec, dir, "ref.nii", "small.nii", {"small.nii", "do not fit"});
}
CASE(W06_GridOfShiftedReference, "wrong input", "a grid made for a reference with another origin", "reject") {
  setup(dir);
  rd::write_grid(dir / "shift.nii", rd::make_grid(rd::Geometry::make(12, 10, 8, 1, 1, 1, {0, 0, 0}), 5));
  expect_field_rejects(rec, dir, "ref.nii", "shift.nii", {"shift.nii", "grid origin"});
}
CASE(W07_FieldOfOtherDims, "wrong input", "a deformation field of other dims than the reference (resample)",
     "reject") {
  setup(dir);
  rd::Field f;
  f.geo = rd::Geometry::make(11, 10, 8);
  f.data.assign(3 * f.geo.voxels(), 0.0f);
  rd::write_field(dir / "def.nii", f);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("resample --ref " + q(dir / "ref.nii") + " --flo " + q(dir / "ref.nii") + " --trans " +
                           q(dir / "def.nii") + " -o " + q(dir / "o.nii") + " --backend cpu"),
                  {"def.nii", "differ from the reference"}, dir, before);
}
CASE(W08_MaskOfOtherDims, "wrong input", "a mask of other dims than the reference", "reject") {
  setup(dir);
  rd::write_mask(dir / "mask.nii", rd::Geometry::make(12, 10, 7), rd::Mask(12 * 10 * 7, 1));
  const auto before = files_in(dir);
  expect_rejected(rec.tool(field_args(dir, "ref.nii", "cpp.nii") + " --mask " + q(dir / "mask.nii")),
                  {"mask.nii", "differ from the reference"}, dir, before);
}
CASE(W09_GridWithoutVectorIntent, "wrong input", "a grid whose intent_code is 0 instead of 1007", "reject") {
  setup(dir);
  patch<std::int16_t>(dir / "cpp.nii", kIntentCode, 0);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"cpp.nii", "not 1007"});
}
CASE(W10_ComplexDatatype, "wrong input", "a reference of datatype COMPLEX64", "reject") {
  setup(dir);
  const int64_t dims[8] = {3, 4, 4, 4, 1, 1, 1, 1};
  nifti_image* n = nifti_make_new_nim(dims, DT_COMPLEX64, 1);
  nifti_set_filenames(n, (dir / "c.nii").c_str(), 0, 1);
  nifti_image_write(n);
  nifti_image_free(n);
  expect_field_rejects(rec, dir, "c.nii", "cpp.nii", {"c.nii", "unsupported datatype"});
}
CASE(W11_OutputNotNifti, "wrong input", "output named .img", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool(field_args(dir, "ref.nii", "cpp.nii", "f.img")), {"f.img", ".nii or .nii.gz"}, dir, before);
}
CASE(W12_TextAsNifti, "wrong input", "a text file given as the reference", "reject") {
  setup(dir);
  spit(dir / "t.nii", std::string(400, 'x'));
  expect_field_rejects(rec, dir, "t.nii", "cpp.nii", {"t.nii", "not a NIfTI"});
}
CASE(W13_PlainFileNamedGz, "wrong input", "an uncompressed .nii named .nii.gz", "reject") {
  setup(dir);
  fs::copy_file(dir / "ref.nii", dir / "plain.nii.gz");
  expect_field_rejects(rec, dir, "plain.nii.gz", "cpp.nii", {"plain.nii.gz", "not a gzip file"});
}
CASE(W14_Nifti2Inputs, "wrong input", "NIfTI-2 reference and grid", "accept: same field") {
  Setup s = setup(dir);
  rd::write_volume(dir / "ref2.nii", s.ref, {2});
  rd::write_grid(dir / "cpp2.nii", s.grid, {2});
  expect_reference_field(rec, dir, s, "ref2.nii", "cpp2.nii");
}
CASE(W15_HdrImgPair, "wrong input", "an Analyze-style .hdr/.img pair as the reference", "accept: same field") {
  Setup s = setup(dir);
  std::string nii = slurp(dir / "ref.nii"), hdr = nii.substr(0, 348);
  std::memcpy(&hdr[344], "ni1\0", 4);
  const float zero = 0;
  std::memcpy(&hdr[kVoxOffset], &zero, 4);
  spit(dir / "pair.hdr", hdr);
  spit(dir / "pair.img", nii.substr(kData));
  expect_reference_field(rec, dir, s, "pair.hdr", "cpp.nii");
}
CASE(W16_TwoDimensionalReference, "wrong input", "a 2-D reference (dim[0] = 2) with a grid for nz = 1",
     "accept: same field") {
  Setup s;
  s.ref.geo = rd::Geometry::make(12, 10, 1, 1.0, 1.0, 1.0, {-6, -5, 0});
  s.ref.data.assign(s.ref.geo.voxels(), 1.0f);
  rd::write_volume(dir / "ref.nii", s.ref);
  patch<std::int16_t>(dir / "ref.nii", kDim, 2);
  s.grid = rd::make_grid(s.ref.geo, 5);
  rd::write_grid(dir / "cpp.nii", s.grid);
  expect_reference_field(rec, dir, s, "ref.nii", "cpp.nii");
}

// ---- hostile values -----------------------------------------------------------------------------

CASE(W17_NoOverlap, "wrong input", "register: an affine that puts the floating image 1 m away (no overlap)", "reject") {
  setup(dir);
  spit(dir / "far.txt", "1 0 0 1000\n0 1 0 0\n0 0 1 0\n0 0 0 1\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool("register --ref " + q(dir / "ref.nii") + " --flo " + q(dir / "ref.nii") + " --aff " + q(dir / "far.txt") +
                           " --cpp " + q(dir / "c.nii") + " --backend cpu --ln 1 --maxit 2"),
                  {"--aff", "does not overlap"}, dir, before);
}
CASE(W18_EmptyMask, "wrong input", "register and affine with a reference mask of zeros", "reject") {
  setup(dir);
  rd::write_mask(dir / "zero.nii", rd::Geometry::make(12, 10, 8, 1.0, 1.0, 1.0, {-6, -5, -4}), rd::Mask(12 * 10 * 8, 0));
  const auto before = files_in(dir);
  expect_rejected(rec.tool("register --ref " + q(dir / "ref.nii") + " --flo " + q(dir / "ref.nii") + " --rmask " + q(dir / "zero.nii") +
                           " --cpp " + q(dir / "c.nii") + " --backend cpu --ln 1 --maxit 2"),
                  {"zero.nii", "no nonzero voxel"}, dir, before);
  expect_rejected(rec.tool("affine --ref " + q(dir / "ref.nii") + " --flo " + q(dir / "ref.nii") + " --rmask " + q(dir / "zero.nii") +
                           " -o " + q(dir / "a.txt") + " --backend cpu"),
                  {"zero.nii", "empty"}, dir, before);
}
CASE(W19_Anisotropic, "wrong input", "register: 0.5 x 0.5 x 3 mm voxels (as clinical T2 slices)", "accept: a grid") {
  rd::Volume v;
  v.geo = rd::Geometry::make(48, 40, 8, 0.5, 0.5, 3.0, {0, 0, 0});
  v.data.resize(v.geo.voxels());
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 40; ++j)
      for (int i = 0; i < 48; ++i)
        v.data[(static_cast<std::size_t>(k) * 40 + j) * 48 + i] = static_cast<float>(100.0 * std::exp(-((i - 24) * (i - 24) + (j - 20) * (j - 20)) / 200.0) + k);
  rd::write_volume(dir / "a.nii", v);
  const auto& r = rec.tool("register --ref " + q(dir / "a.nii") + " --flo " + q(dir / "a.nii") + " --cpp " + q(dir / "c.nii") +
                           " --backend cpu --ln 1 --maxit 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "c.nii"));
}
CASE(W20_TinyVolume, "wrong input", "affine between two 6x5x4 volumes (too few blocks to match)", "reject") {
  rd::Volume v;
  v.geo = rd::Geometry::make(6, 5, 4, 1.0, 1.0, 1.0, {0, 0, 0});
  v.data.resize(v.geo.voxels());
  for (std::size_t i = 0; i < v.data.size(); ++i) v.data[i] = static_cast<float>((i * 37) % 11);
  rd::write_volume(dir / "t.nii", v);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("affine --ref " + q(dir / "t.nii") + " --flo " + q(dir / "t.nii") + " -o " + q(dir / "a.txt") + " --backend cpu"),
                  {"--ref", "blocks"}, dir, before);
}
CASE(H01_NanInGrid, "hostile value", "a NaN control point", "reject") {
  setup(dir);
  patch<float>(dir / "cpp.nii", kData + 40, kNaN);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"cpp.nii", "NaN or Inf"});
}
CASE(H02_InfInField, "hostile value", "an Inf in a displacement field (resample --trans)", "reject") {
  setup(dir);
  rd::Field f;
  f.geo = rd::Geometry::make(12, 10, 8, 1, 1, 1, {-6, -5, -4});
  f.displacement = true;
  f.data.assign(3 * f.geo.voxels(), 0.0f);
  f.data[17] = std::numeric_limits<float>::infinity();
  rd::write_field(dir / "disp.nii", f);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("resample --ref " + q(dir / "ref.nii") + " --flo " + q(dir / "ref.nii") + " --trans " +
                           q(dir / "disp.nii") + " -o " + q(dir / "o.nii") + " --backend cpu"),
                  {"disp.nii", "NaN or Inf"}, dir, before);
}
CASE(H03_NanInVolume, "hostile value", "NaN voxels in the floating image (resample): NiftyReg's padding value",
     "accept: read as 0, as NiftyReg") {
  setup(dir);
  fs::copy_file(dir / "ref.nii", dir / "flo.nii");
  fs::copy_file(dir / "ref.nii", dir / "zero.nii");
  for (int k : {0, 100, 101}) {
    patch<float>(dir / "flo.nii", kData + 4 * k, kNaN);
    patch<float>(dir / "zero.nii", kData + 4 * k, 0.f);
  }
  for (const char* f : {"flo.nii", "zero.nii"}) {
    const auto& r = rec.tool("resample --ref " + q(dir / "ref.nii") + " --flo " + q(dir / f) + " --trans " +
                             q(dir / "cpp.nii") + " -o " + q(dir / (std::string("o_") + f)) + " --pad 0 --backend cpu");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const rd::Volume a = rd::read_volume(dir / "o_flo.nii"), b = rd::read_volume(dir / "o_zero.nii");
  EXPECT_EQ(a.data, b.data);  // the NaN voxels took part as 0, nothing became NaN
}
CASE(H04_ZeroPixdim, "hostile value", "reference pixdim[1] = 0", "reject") {
  setup(dir);
  patch<float>(dir / "ref.nii", kPixdim + 4, 0.0f);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"ref.nii", "pixdim[1]"});
}
CASE(H05_NegativePixdim, "hostile value", "reference pixdim[2] = -1", "reject") {
  setup(dir);
  patch<float>(dir / "ref.nii", kPixdim + 8, -1.0f);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"ref.nii", "pixdim[2]"});
}
CASE(H06_NanPixdim, "hostile value", "grid pixdim[3] = NaN", "reject") {
  setup(dir);
  patch<float>(dir / "cpp.nii", kPixdim + 12, kNaN);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"cpp.nii", "pixdim[3]"});
}
CASE(H07_DimsOverflow, "hostile value", "dims 32767 x 32767 x 32767 x 32767 on a small file (product overflows)",
     "reject") {
  setup(dir);
  patch<std::int16_t>(dir / "ref.nii", kDim, 4);
  for (int i = 1; i <= 4; ++i) patch<std::int16_t>(dir / "ref.nii", kDim + 2 * i, 32767);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"ref.nii"});
}
CASE(H08_Nifti2HugeDims, "hostile value", "NIfTI-2 reference with dims 2^40 x 2^40 x 2^40", "reject") {
  Setup s = setup(dir);
  rd::write_volume(dir / "ref2.nii", s.ref, {2});
  for (int i = 1; i <= 3; ++i) patch<std::int64_t>(dir / "ref2.nii", 16 + 8 * i, std::int64_t{1} << 40);
  expect_field_rejects(rec, dir, "ref2.nii", "cpp.nii", {"ref2.nii"});
}
CASE(H09_NegativeDim, "hostile value", "reference dim[2] = -10", "reject") {
  setup(dir);
  patch<std::int16_t>(dir / "ref.nii", kDim + 4, -10);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"ref.nii"});
}
CASE(H10_DimZeroTooLarge, "hostile value", "reference dim[0] = 9", "reject") {
  setup(dir);
  patch<std::int16_t>(dir / "ref.nii", kDim, 9);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"ref.nii"});
}
CASE(H11_SingularSform, "hostile value", "reference sform of zeros (sform_code 1)", "reject") {
  setup(dir);
  for (int i = 0; i < 12; ++i) patch<float>(dir / "ref.nii", kSrowX + 4 * i, 0.0f);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"ref.nii", "sform matrix is singular"});
}
CASE(H12_NanSform, "hostile value", "reference sform with a NaN", "reject") {
  setup(dir);
  patch<float>(dir / "ref.nii", kSrowX + 12, kNaN);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"ref.nii", "sform matrix is not finite"});
}
CASE(H13_NanSclSlope, "hostile value", "reference scl_slope = NaN (NIfTI: no scaling)", "accept: same field") {
  Setup s = setup(dir);
  patch<float>(dir / "ref.nii", kSclSlope, kNaN);
  expect_reference_field(rec, dir, s, "ref.nii", "cpp.nii");
}
CASE(H14_WrongBitpix, "hostile value", "grid datatype FLOAT64 with bitpix 32 (header inconsistent with the data size)",
     "reject") {
  setup(dir);
  patch<std::int16_t>(dir / "cpp.nii", kDatatype, DT_FLOAT64);
  patch<std::int16_t>(dir / "cpp.nii", kBitpix, 32);
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"cpp.nii", "truncated image data"});
}
CASE(H15_SpacingZero, "hostile value", "grid --spacing 0", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("grid --ref " + q(dir / "ref.nii") + " --spacing 0 -o " + q(dir / "g.nii")),
                  {"--spacing", "positive"}, dir, before);
}
CASE(H16_SpacingNan, "hostile value", "grid --spacing nan", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("grid --ref " + q(dir / "ref.nii") + " --spacing nan -o " + q(dir / "g.nii")), {"--spacing"},
                  dir, before);
}
CASE(H17_NegativePerturb, "hostile value", "grid --perturb -1", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("grid --ref " + q(dir / "ref.nii") + " --perturb -1 -o " + q(dir / "g.nii")),
                  {"--perturb", ">= 0"}, dir, before);
}
CASE(H18_AffineNan, "hostile value", "affine text with a nan", "reject") {
  setup(dir);
  spit(dir / "a.txt", "1 0 0 0\n0 nan 0 0\n0 0 1 0\n0 0 0 1\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool("grid --ref " + q(dir / "ref.nii") + " --affine " + q(dir / "a.txt") + " -o " + q(dir / "g.nii")),
                  {"a.txt", "not finite"}, dir, before);
}
CASE(H19_AffineLastRow, "hostile value", "affine whose last row is 0 0 0 2", "reject") {
  setup(dir);
  spit(dir / "a.txt", "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 2\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool("grid --ref " + q(dir / "ref.nii") + " --affine " + q(dir / "a.txt") + " -o " + q(dir / "g.nii")),
                  {"a.txt", "last row"}, dir, before);
}
CASE(H20_NonUtf8FileName, "hostile value", "reference under a non-UTF-8 file name (bytes 0xff 0xfe)",
     "accept: same field") {
  Setup s = setup(dir);
  fs::copy_file(dir / "ref.nii", dir / std::string("r\xff\xfe.nii"));
  expect_reference_field(rec, dir, s, std::string("r\xff\xfe.nii"), "cpp.nii");
}
CASE(H21_NewlineInFileName, "hostile value", "a cut reference whose name contains a newline", "reject") {
  setup(dir);
  fs::copy_file(dir / "ref.nii", dir / "a\nb.nii");
  fs::resize_file(dir / "a\nb.nii", 300);
  expect_field_rejects(rec, dir, "a\nb.nii", "cpp.nii", {"a\\nb.nii", "truncated header"});
}

CASE(H22_InfInVolume, "hostile value", "an Inf voxel in the floating image (resample)", "reject") {
  setup(dir);
  fs::copy_file(dir / "ref.nii", dir / "flo.nii");
  patch<float>(dir / "flo.nii", kData + 4 * 100, std::numeric_limits<float>::infinity());
  const auto before = files_in(dir);
  expect_rejected(rec.tool("resample --ref " + q(dir / "ref.nii") + " --flo " + q(dir / "flo.nii") + " --trans " +
                           q(dir / "cpp.nii") + " -o " + q(dir / "o.nii") + " --backend cpu"),
                  {"flo.nii", "infinite value"}, dir, before);
}

// ---- environment --------------------------------------------------------------------------------

CASE(E01_UnwritableOutputDirectory, "environment", "output in a directory nobody may write (/proc)", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("field --ref " + q(dir / "ref.nii") + " --cpp " + q(dir / "cpp.nii") +
                           " -o /proc/f.nii --backend cpu"),
                  {"/proc/f.nii", "cannot write"}, dir, before);
}
CASE(E02_MissingOutputDirectory, "environment", "output in a directory that does not exist", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool(field_args(dir, "ref.nii", "cpp.nii", "no/such/f.nii")), {"f.nii", "does not exist"}, dir,
                  before);
}
CASE(E03_OutputIsAnInput, "environment", "output path equal to the reference (-o ref.nii)", "reject") {
  setup(dir);
  const std::string keep = slurp(dir / "ref.nii");
  const auto before = files_in(dir);
  expect_rejected(rec.tool(field_args(dir, "ref.nii", "cpp.nii", "ref.nii")), {"ref.nii", "is also an input"}, dir,
                  before);
  EXPECT_EQ(slurp(dir / "ref.nii"), keep) << "the input was changed";
}
CASE(E04_OutputIsADirectory, "environment", "output path is an existing directory named f.nii", "reject") {
  setup(dir);
  fs::create_directories(dir / "f.nii");
  expect_field_rejects(rec, dir, "ref.nii", "cpp.nii", {"f.nii", "is a directory"});
}
CASE(E05_InputIsADirectory, "environment", "reference path is a directory", "reject") {
  setup(dir);
  fs::create_directories(dir / "d.nii");
  expect_field_rejects(rec, dir, "d.nii", "cpp.nii", {"d.nii", "is a directory"});
}
CASE(E06_StdoutFull, "environment", "standard output on a full device (gi grammar >/dev/full)", "reject") {
  const auto before = files_in(dir);
  const auto& r = rec.run("'" + (evk::testing::bin_dir() / kTool).string() + "' gi grammar >/dev/full");
  expect_rejected(r, {"standard output", "write failed"}, dir, before);
}
CASE(E07_FileSizeLimit, "environment", "output hits the file size limit (ulimit -f 8: a full disk)", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  const auto& r = rec.run("trap '' XFSZ; ulimit -f 8; '" + (evk::testing::bin_dir() / kTool).string() + "' " +
                          field_args(dir, "ref.nii", "cpp.nii"));
  expect_rejected(r, {"f.nii", "write failed"}, dir, before);
}
CASE(E08_FullFileSystem, "environment", "output on a full 64 KiB tmpfs (needs mount permission)", "reject") {
  setup(dir);
  fs::create_directories(dir / "small");
  if (evk::testing::run("mount -t tmpfs -o size=64k tmpfs " + q(dir / "small")).exit_code != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here";
  spit(dir / "small" / "fill", std::string(60 * 1024, 'x'));
  const auto before = files_in(dir / "small");
  const auto& r = rec.tool(field_args(dir, "ref.nii", "cpp.nii", "small/f.nii"));
  expect_rejected(r, {"f.nii", "write failed"}, dir / "small", before);
  evk::testing::run("umount " + q(dir / "small"));
}
CASE(E09_SigintMidWrite, "environment", "SIGINT while a large .nii.gz field is being written",
     "exit 130, nothing left") {
  rd::Volume big;
  big.geo = rd::Geometry::make(200, 200, 160);
  big.data.assign(big.geo.voxels(), 1.0f);
  rd::write_volume(dir / "big.nii", big);
  rd::write_grid(dir / "bigcpp.nii", rd::make_grid(big.geo, 5));
  const auto before = files_in(dir);
  const auto& r = rec.run(evk::testing::catalogue::interrupt_when(
      "'" + (evk::testing::bin_dir() / kTool).string() + "' " + field_args(dir, "big.nii", "bigcpp.nii", "f.nii.gz"),
      "ls -a " + q(dir) + " | grep -q '^\\.f\\.nii\\.gz\\.tmp'"));
  EXPECT_NE(r.err.find("exit 130"), std::string::npos) << r.err;
  for (const auto& f : files_in(dir)) EXPECT_TRUE(before.count(f)) << "left behind: " << f;
}
CASE(E10_RandomCaseIntoAFile, "environment", "random-case -o naming an existing file, not a directory", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("random-case --seed 1 --size 8 -o " + q(dir / "ref.nii")), {"ref.nii", "directory"}, dir,
                  before);
}

// A damaged GI run directory under `reg_deform gi run --resume` and `reg_deform gi report` (tests/support/gi_rundir_catalogue.hpp).
namespace {
std::unique_ptr<evk::gi::Problem> evk_rd_gi_problem() { return evk::reg_deform::make_gi_problem(); }
}  // namespace
EVK_GI_RUNDIR_CASES(RegCatalogue, "reg_deform", evk_rd_gi_problem)

TEST(RegCatalogue, EveryCaseIsInTheDocs) { evk::testing::catalogue::expect_documented(kTool); }
