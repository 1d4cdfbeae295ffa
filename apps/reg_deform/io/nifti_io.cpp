#include "nifti_io.hpp"

#include <nifti2_io.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "../core/grid_make.hpp"

namespace evk::reg_deform {

namespace {

struct NimDeleter {
  void operator()(nifti_image* n) const { nifti_image_free(n); }
};
using NimPtr = std::unique_ptr<nifti_image, NimDeleter>;

void quiet_nifti() {
  static bool once = [] {
    nifti_set_debug_level(0);  // libraries never print
    return true;
  }();
  (void)once;
}

std::string name_of(const fs::path& p) { return p.string(); }

NimPtr open_nifti(const fs::path& path) {
  quiet_nifti();
  std::error_code ec;
  if (!fs::exists(path, ec)) input_error(name_of(path), "no such file");
  if (fs::is_directory(path, ec)) input_error(name_of(path), "is a directory, not a NIfTI file");
  const auto size = fs::file_size(path, ec);
  if (ec) input_error(name_of(path), "cannot read file size: " + ec.message());
  if (size == 0) input_error(name_of(path), "empty file");
  std::ifstream probe(path, std::ios::binary);
  if (!probe) input_error(name_of(path), "cannot open for reading");
  unsigned char magic[2] = {0, 0};
  probe.read(reinterpret_cast<char*>(magic), 2);
  const bool gz = magic[0] == 0x1f && magic[1] == 0x8b;
  const std::string ext = path.extension().string();
  if (ext == ".gz" && !gz) input_error(name_of(path), "not a gzip file despite its .gz name");
  NimPtr nim(nifti_image_read(path.c_str(), 0));
  if (!nim) input_error(name_of(path), gz ? "not a readable NIfTI header (corrupt gzip or not NIfTI)" : "not a NIfTI-1/NIfTI-2 file");
  // Our own data read: nifti_image_load silently replaces NaN/Inf by 0, and we must see them.
  const std::size_t bytes = static_cast<std::size_t>(nim->nvox) * static_cast<std::size_t>(nim->nbyper);
  if (nim->nvox <= 0 || nim->nbyper <= 0) input_error(name_of(path), "holds no voxels");
  znzFile fp = znzopen(nim->iname, "rb", nifti_is_gzfile(nim->iname));
  if (znz_isnull(fp)) input_error(name_of(path), "cannot open image data");
  nim->data = std::malloc(bytes);
  if (!nim->data) {
    znzclose(fp);
    throw std::bad_alloc();
  }
  const bool sought = znzseek(fp, static_cast<long>(nim->iname_offset), SEEK_SET) >= 0;
  const std::size_t got = sought ? znzread(nim->data, 1, bytes, fp) : 0;
  znzclose(fp);
  if (got != bytes) input_error(name_of(path), gz ? "corrupt or truncated gzip data" : "truncated image data");
  if (nim->swapsize > 1 && nim->byteorder != nifti_short_order())
    nifti_swap_Nbytes(static_cast<int64_t>(nim->nvox) * (nim->nbyper / nim->swapsize), nim->swapsize, nim->data);
  return nim;
}

Mat44 from_dmat(const nifti_dmat44& d) {
  Mat44 m;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) m.m[i][j] = d.m[i][j];
  return m;
}
nifti_dmat44 to_dmat(const Mat44& m) {
  nifti_dmat44 d;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) d.m[i][j] = m.m[i][j];
  return d;
}

Geometry geometry_of(const nifti_image* nim) {
  Geometry g;
  g.nx = static_cast<int>(nim->nx);
  g.ny = static_cast<int>(nim->ny);
  g.nz = static_cast<int>(nim->nz);
  g.dx = nim->dx;
  g.dy = nim->dy;
  g.dz = nim->dz;
  g.qform_code = nim->qform_code;
  g.sform_code = nim->sform_code;
  g.qform = from_dmat(nim->qto_xyz);  // nifticlib fills a pixdim-diagonal matrix when qform_code is 0
  g.sform = from_dmat(nim->sto_xyz);
  g.update_world();
  return g;
}

// Converts nvals elements of any real datatype to float (with scaling).
std::vector<float> to_float(const nifti_image* nim, std::size_t offset, std::size_t n, const fs::path& path) {
  std::vector<float> out(n);
  const double slope = (nim->scl_slope != 0 && std::isfinite(nim->scl_slope)) ? nim->scl_slope : 1.0;
  const double inter = (nim->scl_slope != 0 && std::isfinite(nim->scl_inter)) ? nim->scl_inter : 0.0;
  const bool scale = slope != 1.0 || inter != 0.0;
  auto conv = [&](const auto* src) {
    for (std::size_t i = 0; i < n; ++i) {
      const double v = static_cast<double>(src[offset + i]);
      out[i] = static_cast<float>(scale ? v * slope + inter : v);
    }
  };
  switch (nim->datatype) {
    case DT_UINT8: conv(static_cast<const std::uint8_t*>(nim->data)); break;
    case DT_INT8: conv(static_cast<const std::int8_t*>(nim->data)); break;
    case DT_INT16: conv(static_cast<const std::int16_t*>(nim->data)); break;
    case DT_UINT16: conv(static_cast<const std::uint16_t*>(nim->data)); break;
    case DT_INT32: conv(static_cast<const std::int32_t*>(nim->data)); break;
    case DT_UINT32: conv(static_cast<const std::uint32_t*>(nim->data)); break;
    case DT_INT64: conv(static_cast<const std::int64_t*>(nim->data)); break;
    case DT_UINT64: conv(static_cast<const std::uint64_t*>(nim->data)); break;
    case DT_FLOAT32: conv(static_cast<const float*>(nim->data)); break;
    case DT_FLOAT64: conv(static_cast<const double*>(nim->data)); break;
    default:
      input_error(name_of(path), std::string("unsupported datatype ") + nifti_datatype_string(nim->datatype) +
                                     " (need a real scalar type)");
  }
  return out;
}

std::string dims_text(const nifti_image* nim) {
  std::string s = "[";
  for (int i = 0; i <= 7 && i <= nim->dim[0]; ++i) {
    if (i) s.push_back(',');
    s.append(std::to_string(nim->dim[i]));
  }
  s.push_back(']');
  return s;
}

void check_scalar_3d(const nifti_image* nim, const fs::path& path) {
  bool ok = nim->dim[0] >= 2 && nim->dim[0] <= 7 && nim->nx >= 1 && nim->ny >= 1 && nim->nz >= 1;
  for (int i = 4; ok && i <= nim->dim[0]; ++i) ok = nim->dim[i] <= 1;
  if (!ok) input_error(name_of(path), "must be a 3-D scalar volume, has dims " + dims_text(nim));
  if (nim->nvox > 0xffffffffll) input_error(name_of(path), "too many voxels");
}

// 5-D vector image [nx, ny, nz, 1, 3] with intent 1007.
void check_vector_5d(const nifti_image* nim, const fs::path& path) {
  if (nim->dim[0] != 5 || nim->dim[4] != 1 || nim->dim[5] != 3)
    input_error(name_of(path), "must be a 5-D image with dims [5,nx,ny,nz,1,3], has " + dims_text(nim));
  if (nim->intent_code != kIntentVector)
    input_error(name_of(path), "intent_code " + std::to_string(nim->intent_code) + " is not 1007 (NIFTI_INTENT_VECTOR)");
}

void check_finite(const std::vector<float>& v, const fs::path& path) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) input_error(name_of(path), "holds NaN or Inf (element " + std::to_string(i) + ")");
}

void check_same_grid(const Geometry& a, const Geometry& ref, const fs::path& path) {
  if (a.nx != ref.nx || a.ny != ref.ny || a.nz != ref.nz)
    input_error(name_of(path), "dims " + std::to_string(a.nx) + "x" + std::to_string(a.ny) + "x" + std::to_string(a.nz) +
                                   " differ from the reference's " + std::to_string(ref.nx) + "x" +
                                   std::to_string(ref.ny) + "x" + std::to_string(ref.nz));
}

// ---- writing --------------------------------------------------------------------------------

NimPtr new_nim(const Geometry& g, int nt, int nu, int datatype, const WriteOptions& opt) {
  quiet_nifti();
  int64_t dims[8] = {nu > 1 ? 5 : 3, g.nx, g.ny, g.nz, nt, nu, 1, 1};
  NimPtr nim(nifti_make_new_nim(dims, datatype, 1));
  if (!nim) throw std::runtime_error("nifti_make_new_nim failed");
  nim->dx = nim->pixdim[1] = g.dx;
  nim->dy = nim->pixdim[2] = g.dy;
  nim->dz = nim->pixdim[3] = g.dz;
  nim->xyz_units = NIFTI_UNITS_MM;
  nim->qform_code = g.qform_code;
  nim->sform_code = g.sform_code;
  if (g.qform_code > 0) {
    double qb, qc, qd, qx, qy, qz, dx, dy, dz, qfac;
    nifti_dmat44_to_quatern(to_dmat(g.qform), &qb, &qc, &qd, &qx, &qy, &qz, &dx, &dy, &dz, &qfac);
    nim->quatern_b = qb;
    nim->quatern_c = qc;
    nim->quatern_d = qd;
    nim->qoffset_x = qx;
    nim->qoffset_y = qy;
    nim->qoffset_z = qz;
    nim->qfac = qfac;
    nim->dx = nim->pixdim[1] = dx;
    nim->dy = nim->pixdim[2] = dy;
    nim->dz = nim->pixdim[3] = dz;
    nim->pixdim[0] = qfac;
    nim->qto_xyz = to_dmat(g.qform);
  }
  if (g.sform_code > 0) nim->sto_xyz = to_dmat(g.sform);
  nim->nifti_type = opt.nifti_version == 2 ? NIFTI_FTYPE_NIFTI2_1 : NIFTI_FTYPE_NIFTI1_1;
  return nim;
}

void write_nim(nifti_image* nim, const fs::path& path) {
  const std::string name = path.filename().string();
  const bool gz = name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0;
  const bool nii = name.size() > 4 && (name.compare(name.size() - 4, 4, ".nii") == 0 ||
                                       (gz && name.size() > 7 && name.compare(name.size() - 7, 7, ".nii.gz") == 0));
  if (!nii) input_error(name_of(path), "output name must end in .nii or .nii.gz");
  AtomicOutput out(path);
  // nifticlib picks the format and compression from the file name, so it writes a hidden sibling
  // with the target's extension, which then becomes the AtomicOutput's temporary file.
  const std::string ext = gz ? ".nii.gz" : ".nii";
  const fs::path staging = path.parent_path() / std::string(".").append(out.temp_path().filename().string()).append(ext);
  struct Remove {
    fs::path p;
    ~Remove() {
      std::error_code e;
      fs::remove(p, e);
    }
  } cleanup{staging};
  const int type = nim->nifti_type;
  if (nifti_set_filenames(nim, staging.c_str(), 0, 1) != 0) input_error(name_of(path), "cannot name output file");
  if (type == NIFTI_FTYPE_NIFTI2_1) {
    // nifticlib 3.0's writer puts NIfTI-2 data at offset 0 over the header; write it ourselves:
    // the 540-byte header, 4 zero bytes (no extensions), the data at 544.
    nim->nifti_type = type;
    nifti_2_header h;
    if (nifti_convert_nim2n2hdr(nim, &h) != 0) throw std::runtime_error("nifti_convert_nim2n2hdr failed");
    h.vox_offset = 544;
    std::memcpy(h.magic, "n+2\0\r\n\032\n", 8);
    znzFile fp = znzopen(staging.c_str(), "wb", gz ? 1 : 0);
    if (znz_isnull(fp)) input_error(name_of(path), "cannot open for writing");
    const char no_ext[4] = {0, 0, 0, 0};
    const std::size_t bytes = static_cast<std::size_t>(nim->nvox) * static_cast<std::size_t>(nim->nbyper);
    const bool ok = znzwrite(&h, 1, sizeof h, fp) == sizeof h && znzwrite(no_ext, 1, 4, fp) == 4 &&
                    znzwrite(nim->data, 1, bytes, fp) == bytes;
    znzclose(fp);
    if (!ok) input_error(name_of(path), "write failed (disk full or not writable?)");
  } else {
    nifti_image_write(nim);
  }
  std::error_code ec;
  if (!fs::exists(staging, ec) || fs::file_size(staging, ec) == 0 || ec)
    input_error(name_of(path), "write failed (disk full or not writable?)");
  fs::rename(staging, out.temp_path(), ec);
  if (ec) input_error(name_of(path), "cannot rename temporary file: " + ec.message());
  out.commit();
}

void set_vector_intent(nifti_image* nim, double p1) {
  nim->intent_code = kIntentVector;
  nim->intent_p1 = p1;
  std::memset(nim->intent_name, 0, sizeof(nim->intent_name));
  std::strncpy(nim->intent_name, kIntentName, sizeof(nim->intent_name) - 1);
  nim->pixdim[4] = nim->dt = 1;
  nim->pixdim[5] = nim->du = 1;
}

void write_vector(const fs::path& path, const Geometry& geo, const std::vector<float>& planar, double p1,
                  const WriteOptions& opt) {
  NimPtr nim = new_nim(geo, 1, 3, DT_FLOAT32, opt);
  set_vector_intent(nim.get(), p1);
  std::memcpy(nim->data, planar.data(), planar.size() * sizeof(float));
  write_nim(nim.get(), path);
}

}  // namespace

Volume read_volume(const fs::path& path) {
  NimPtr nim = open_nifti(path);
  check_scalar_3d(nim.get(), path);
  Volume v;
  v.geo = geometry_of(nim.get());
  v.data = to_float(nim.get(), 0, static_cast<std::size_t>(v.geo.voxels()), path);
  return v;
}

Mask read_mask(const fs::path& path, const Geometry& ref) {
  Volume v = read_volume(path);
  check_same_grid(v.geo, ref, path);
  Mask m(v.data.size());
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = v.data[i] != 0 && !std::isnan(v.data[i]);
  return m;
}

Grid read_grid(const fs::path& path, const Geometry& ref) {
  Transformation t = read_transformation(path, ref);
  if (t.kind != TransKind::grid)
    input_error(name_of(path), "intent_p1 is not 2: not a cubic B-spline control-point grid");
  return std::move(t.grid);
}

Transformation read_transformation(const fs::path& path, const Geometry& ref) {
  NimPtr nim = open_nifti(path);
  check_vector_5d(nim.get(), path);
  Transformation t;
  const double p1 = nim->intent_p1;
  Geometry g = geometry_of(nim.get());
  std::vector<float> data = to_float(nim.get(), 0, static_cast<std::size_t>(nim->nvox), path);
  check_finite(data, path);
  if (p1 == kSplineGrid) {
    t.kind = TransKind::grid;
    t.grid.geo = g;
    t.grid.data = std::move(data);
    attach_grid(t.grid, ref, name_of(path));
  } else if (p1 == kDefField || p1 == kDispField) {
    t.kind = p1 == kDefField ? TransKind::deformation : TransKind::displacement;
    check_same_grid(g, ref, path);
    t.field.geo = ref;  // the reference's geometry (a field lives on the reference grid)
    t.field.displacement = p1 == kDispField;
    t.field.data = std::move(data);
  } else {
    input_error(name_of(path), "intent_p1 " + std::to_string(p1) +
                                   " is not 0 (deformation), 1 (displacement) or 2 (cubic B-spline grid)");
  }
  return t;
}

void write_volume(const fs::path& path, const Volume& v, const WriteOptions& opt) {
  NimPtr nim = new_nim(v.geo, 1, 1, DT_FLOAT32, opt);
  std::memcpy(nim->data, v.data.data(), v.data.size() * sizeof(float));
  write_nim(nim.get(), path);
}

void write_mask(const fs::path& path, const Geometry& geo, const Mask& m, const WriteOptions& opt) {
  NimPtr nim = new_nim(geo, 1, 1, DT_UINT8, opt);
  std::memcpy(nim->data, m.data(), m.size());
  write_nim(nim.get(), path);
}

void write_grid(const fs::path& path, const Grid& g, const WriteOptions& opt) {
  write_vector(path, g.geo, g.data, kSplineGrid, opt);
}

void write_field(const fs::path& path, const Field& f, const WriteOptions& opt) {
  write_vector(path, f.geo, f.data, f.displacement ? kDispField : kDefField, opt);
}

}  // namespace evk::reg_deform
