// NIfTI round trips, read back with nifticlib itself and checked field by field.
#include <nifti2_io.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/field/grid_make.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "io/nifti_io.hpp"

namespace rd = evk::reg_deform;

namespace {
struct Nim {
  nifti_image* p;
  explicit Nim(const std::filesystem::path& f) : p(nifti_image_read(f.c_str(), 1)) {}
  ~Nim() {
    if (p) nifti_image_free(p);
  }
};

rd::Geometry test_geometry() {
  rd::Geometry g = rd::Geometry::make(13, 11, 9, 1.5, 2.0, 2.5, {-10, 20, -30});
  const double c = std::cos(0.2), s = std::sin(0.2);
  rd::Mat44 rot;
  rot.m[1] = {0, c, -s, 0};
  rot.m[2] = {0, s, c, 0};
  g.qform = rot * g.qform;  // a rotated qform (orthonormal, representable as a quaternion)
  g.qform_code = 1;
  g.sform = g.qform;
  g.sform.m[0][3] += 0.5;  // and a different sform
  g.sform_code = 2;
  g.update_world();
  return g;
}

void expect_mat_near(const nifti_dmat44& a, const rd::Mat44& b, double tol) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(a.m[i][j], b.m[i][j], tol) << i << "," << j;
}
}  // namespace

TEST(RegIo, GridHeaderRoundTripFieldByField) {
  evk::testing::TempDir tmp;
  const rd::Geometry ref = test_geometry();
  rd::Grid g = rd::make_grid(ref, 5);
  for (std::size_t i = 0; i < g.data.size(); ++i) g.data[i] += 0.001f * (i % 97);
  for (int version : {1, 2}) {
    for (const char* name : {"cpp.nii", "cpp.nii.gz"}) {
      const auto path = tmp / (std::to_string(version) + name);
      rd::write_grid(path, g, {version});
      Nim n(path);
      ASSERT_NE(n.p, nullptr);
      int nver = 0;
      void* hdr = nifti_read_header(path.c_str(), &nver, 1);  // the on-disk header version
      ASSERT_NE(hdr, nullptr);
      std::free(hdr);
      EXPECT_EQ(nver, version);
      const int64_t dims[8] = {5, 6, 6, 5, 1, 3, 1, 1};  // ceil(13/5+3)=6, ceil(11/5+3)=6, ceil(9/5+3)=5
      for (int i = 0; i < 6; ++i) EXPECT_EQ(n.p->dim[i], dims[i]) << "dim " << i;
      EXPECT_EQ(n.p->datatype, DT_FLOAT32);
      EXPECT_EQ(n.p->intent_code, 1007);
      EXPECT_STREQ(n.p->intent_name, "NREG_TRANS");
      EXPECT_EQ(n.p->intent_p1, 2.0);
      EXPECT_NEAR(n.p->dx, 7.5, 1e-5);
      EXPECT_NEAR(n.p->dy, 10.0, 1e-5);
      EXPECT_NEAR(n.p->dz, 12.5, 1e-5);
      EXPECT_EQ(n.p->qform_code, 1);
      EXPECT_EQ(n.p->sform_code, 2);
      // qform/sform of the reference, scaled by 5 and shifted by -1 control point
      rd::Mat44 t = rd::Mat44::diag(5, 5, 5);
      for (int a = 0; a < 3; ++a) t.m[a][3] = -5;
      expect_mat_near(n.p->qto_xyz, ref.qform * t, 1e-4);
      expect_mat_near(n.p->sto_xyz, ref.sform * t, 1e-4);
      // planar layout: all x, then all y, then all z
      const float* d = static_cast<const float*>(n.p->data);
      for (std::size_t i = 0; i < g.data.size(); ++i) ASSERT_EQ(d[i], g.data[i]) << i;
      // and our reader accepts it for the reference, recovering the spacing
      const rd::Grid back = rd::read_grid(path, ref);
      EXPECT_EQ(back.sx, 5);
      EXPECT_EQ(back.sz, 5);
      EXPECT_EQ(back.data, g.data);
    }
  }
}

TEST(RegIo, FieldHeadersDeformationAndDisplacement) {
  evk::testing::TempDir tmp;
  const rd::Geometry ref = test_geometry();
  for (bool disp : {false, true}) {
    rd::Field f;
    f.geo = ref;
    f.displacement = disp;
    f.data.resize(3 * ref.voxels());
    for (std::size_t i = 0; i < f.data.size(); ++i) f.data[i] = static_cast<float>(i) * 0.25f;
    const auto path = tmp / (disp ? "disp.nii.gz" : "def.nii.gz");
    rd::write_field(path, f);
    Nim n(path);
    ASSERT_NE(n.p, nullptr);
    const int64_t dims[6] = {5, 13, 11, 9, 1, 3};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(n.p->dim[i], dims[i]);
    EXPECT_EQ(n.p->intent_code, 1007);
    EXPECT_STREQ(n.p->intent_name, "NREG_TRANS");
    EXPECT_EQ(n.p->intent_p1, disp ? 1.0 : 0.0);
    EXPECT_EQ(n.p->datatype, DT_FLOAT32);
    expect_mat_near(n.p->qto_xyz, ref.qform, 1e-4);
    expect_mat_near(n.p->sto_xyz, ref.sform, 1e-4);
    const float* d = static_cast<const float*>(n.p->data);
    for (std::size_t i = 0; i < f.data.size(); ++i) ASSERT_EQ(d[i], f.data[i]);
    const rd::Transformation t = rd::read_transformation(path, ref);
    EXPECT_EQ(t.kind, disp ? rd::TransKind::displacement : rd::TransKind::deformation);
    EXPECT_EQ(t.field.data, f.data);
  }
}

TEST(RegIo, VolumeAnyDatatypeWithScalingAndWorldFromSformElseQform) {
  evk::testing::TempDir tmp;
  const int64_t dims[8] = {3, 4, 3, 2, 1, 1, 1, 1};
  for (int dt : {DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_FLOAT32, DT_FLOAT64, DT_INT8, DT_INT64}) {
    nifti_image* n = nifti_make_new_nim(dims, dt, 1);
    for (int i = 0; i < 24; ++i) {
      switch (dt) {
        case DT_UINT8: static_cast<uint8_t*>(n->data)[i] = i; break;
        case DT_INT8: static_cast<int8_t*>(n->data)[i] = i; break;
        case DT_INT16: static_cast<int16_t*>(n->data)[i] = i; break;
        case DT_UINT16: static_cast<uint16_t*>(n->data)[i] = i; break;
        case DT_INT32: static_cast<int32_t*>(n->data)[i] = i; break;
        case DT_INT64: static_cast<int64_t*>(n->data)[i] = i; break;
        case DT_FLOAT32: static_cast<float*>(n->data)[i] = i; break;
        case DT_FLOAT64: static_cast<double*>(n->data)[i] = i; break;
      }
    }
    n->scl_slope = 2;
    n->scl_inter = 1;
    n->qform_code = 1;
    n->qoffset_x = 5;  // qform only: world = pixdim-scaled index + offset
    n->sform_code = 0;
    std::string name = "v";
    name.append(std::to_string(dt)).append(".nii");
    const std::filesystem::path path = tmp.path() / name;
    nifti_set_filenames(n, path.c_str(), 0, 1);
    nifti_image_write(n);
    nifti_image_free(n);
    const rd::Volume v = rd::read_volume(path);
    ASSERT_EQ(v.data.size(), 24u);
    for (int i = 0; i < 24; ++i) ASSERT_EQ(v.data[i], 2.0f * i + 1) << "datatype " << dt;
    EXPECT_NEAR(v.geo.vox2world.apply(1, 0, 0)[0], 6.0, 1e-6);
  }
  // sform wins over the qform when set
  rd::Volume v;
  v.geo = rd::Geometry::make(4, 3, 2);
  v.geo.sform.m[0][3] = 100;
  v.geo.update_world();
  v.data.assign(24, 1.0f);
  rd::write_volume(tmp / "s.nii.gz", v);
  EXPECT_NEAR(rd::read_volume(tmp / "s.nii.gz").geo.vox2world.apply(0, 0, 0)[0], 100.0, 1e-6);
}

TEST(RegIo, GzipWrittenInPiecesReadsAsOneFileEverywhere) {
  // a volume of 2.3 MB of floats: nine gzip members of 256 KiB each, written in parallel. gzip -dc
  // gives the bytes of the same volume written as .nii, nifticlib reads the values back, and so
  // does nibabel (Python's gzip) where it is installed
  evk::testing::TempDir dir;
  rd::Volume v;
  v.geo = rd::Geometry::make(97, 83, 71, 1.0, 1.0, 1.0, {0, 0, 0});
  v.data.resize(v.geo.voxels());
  for (std::size_t i = 0; i < v.data.size(); ++i) v.data[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)) * 1000.0);
  rd::write_volume(dir / "v.nii.gz", v);
  rd::write_volume(dir / "v.nii", v);
  const auto z = evk::testing::run("gzip -dc " + (dir / "v.nii.gz").string() + " | cmp - " + (dir / "v.nii").string());
  EXPECT_EQ(z.exit_code, 0) << z.out << z.err;
  const auto members = evk::testing::run("/usr/bin/python3 -c \"import sys, zlib; d = open(sys.argv[1], 'rb').read(); n = 0\n"
                                         "while d:\n o = zlib.decompressobj(31); o.decompress(d); d = o.unused_data; n += 1\n"
                                         "print(n)\" " + (dir / "v.nii.gz").string());
  ASSERT_EQ(members.exit_code, 0) << members.err;
  EXPECT_EQ(std::stoi(members.out), 9);
  Nim nim(dir / "v.nii.gz");
  ASSERT_NE(nim.p, nullptr);
  ASSERT_EQ(static_cast<std::size_t>(nim.p->nvox), v.data.size());
  EXPECT_EQ(std::memcmp(nim.p->data, v.data.data(), v.data.size() * 4), 0);
  if (evk::testing::run("/usr/bin/python3 -c 'import nibabel'").exit_code == 0) {
    const auto nb = evk::testing::run("/usr/bin/python3 -c \"import sys, nibabel, numpy; a = nibabel.load(sys.argv[1]).get_fdata(); "
                                      "b = nibabel.load(sys.argv[2]).get_fdata(); print(int(a.shape == b.shape and (a == b).all()))\" " +
                                      (dir / "v.nii.gz").string() + " " + (dir / "v.nii").string());
    EXPECT_EQ(nb.exit_code, 0) << nb.err;
    EXPECT_EQ(nb.out, "1\n");
  }
}
