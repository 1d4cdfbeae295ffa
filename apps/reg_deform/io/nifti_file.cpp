// The nifticlib layer of io/: opening and checking a NIfTI file (its raw header, its data through
// zlib), its geometry and values as float, and writing a nifti_image through an AtomicOutput.
#include "io/nifti_file.hpp"

#include <zlib.h>

#include "io/gzip_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "evk/quiet_stderr.hpp"

namespace evk::reg_deform::nifti {

namespace {


void quiet_nifti() {
  static bool once = [] {
    nifti_set_debug_level(0);  // libraries never print
    return true;
  }();
  (void)once;
}


// The header's dims and pixdim as stored: nifticlib replaces a dim < 1 by 1 and a zero or NaN
// pixdim by 1 without a word, so a damaged header would be read as another image.
struct RawHeader {
  std::int64_t dim[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  double pixdim[8] = {0, 0, 0, 0, 0, 0, 0, 0};
};
RawHeader raw_header(const fs::path& path) {
  RawHeader h;
  gzFile f = gzopen(path.c_str(), "rb");  // plain files are read as they are
  if (!f) input_error(name_of(path), "cannot open for reading");
  unsigned char b[540];
  const int got = gzread(f, b, sizeof b);
  gzclose(f);
  auto u32 = [&](std::size_t o) {
    std::uint32_t v;
    std::memcpy(&v, b + o, 4);
    return v;
  };
  if (got < 4) input_error(name_of(path), "truncated header (" + std::to_string(std::max(got, 0)) + " bytes)");
  const std::uint32_t n = u32(0), swapped_n = __builtin_bswap32(n);
  const bool swap = n != 348 && n != 540;
  const std::uint32_t size = swap ? swapped_n : n;
  if (size != 348 && size != 540) input_error(name_of(path), "not a NIfTI-1/NIfTI-2 file (no header size 348 or 540)");
  if (got < static_cast<int>(size))
    input_error(name_of(path), "truncated header (" + std::to_string(got) + " of " + std::to_string(size) + " bytes)");
  auto get = [&](std::size_t o, std::size_t bytes) {  // an integer or float of `bytes` bytes, swapped
    unsigned char v[8];
    for (std::size_t i = 0; i < bytes; ++i) v[i] = b[o + (swap ? bytes - 1 - i : i)];
    return std::vector<unsigned char>(v, v + bytes);
  };
  for (int i = 0; i < 8; ++i) {
    if (size == 348) {
      const auto d = get(40 + 2 * i, 2), q = get(76 + 4 * i, 4);
      std::int16_t dv;
      float pv;
      std::memcpy(&dv, d.data(), 2);
      std::memcpy(&pv, q.data(), 4);
      h.dim[i] = dv;
      h.pixdim[i] = pv;
    } else {
      const auto d = get(16 + 8 * i, 8), q = get(104 + 8 * i, 8);
      std::memcpy(&h.dim[i], d.data(), 8);
      std::memcpy(&h.pixdim[i], q.data(), 8);
    }
  }
  return h;
}

// Reads `bytes` bytes from `offset` of a plain or gzip file; for gzip the stream must also end
// cleanly after them (a stream without its trailer is cut even when the data bytes are all there).
// file_size: the file's size on disk, which bounds zlib's read buffer (128 KiB for large files; a
// small file gets a small one: zlib's output buffer is twice that size, and allocating 384 KiB to
// read a few KiB dominated reading small files, e.g. the fuzz harness's).
std::size_t read_data(const std::string& name, std::uintmax_t offset, void* buf, std::size_t bytes, bool gz,
                      std::uintmax_t file_size, std::string& problem) {
  gzFile f = gzopen(name.c_str(), "rb");
  if (!f) {
    problem = "cannot open image data";
    return 0;
  }
  gzbuffer(f, static_cast<unsigned>(std::clamp<std::uintmax_t>(file_size, 8192, 1 << 17)));
  std::size_t got = 0;
  if (gzseek(f, static_cast<z_off_t>(offset), SEEK_SET) == static_cast<z_off_t>(offset)) {
    auto* p = static_cast<char*>(buf);
    while (got < bytes) {
      const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(bytes - got, 1u << 30));
      const int r = gzread(f, p + got, chunk);
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    if (got == bytes && gz) {
      char extra[4096];
      while (gzread(f, extra, sizeof extra) > 0) {
      }
    }
  }
  int err = Z_OK;
  const char* msg = gzerror(f, &err);
  if (err != Z_OK && err != Z_STREAM_END) problem = std::string("corrupt or truncated gzip data (") + (msg ? msg : "") + ")";
  gzclose(f);
  return got;
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

}  // namespace

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
  if (!gz && size < 348)
    input_error(name_of(path), "truncated header (" + std::to_string(size) + " bytes; a NIfTI header has at least 348)");
  // The dims, checked before any size is computed from them: each >= 1 and a product that fits;
  // voxel sizes of the spatial axes with more than one voxel positive and finite.
  const RawHeader raw = raw_header(path);
  auto dims = [&] {
    std::string t = "[";
    for (int i = 0; i <= 7 && i <= std::max<std::int64_t>(0, raw.dim[0]); ++i) t += (i ? "," : "") + std::to_string(raw.dim[i]);
    return t + "]";
  };
  if (raw.dim[0] < 1 || raw.dim[0] > 7) input_error(name_of(path), "dim[0] = " + std::to_string(raw.dim[0]) + " is not 1..7");
  std::int64_t nvox = 1;
  for (int i = 1; i <= raw.dim[0]; ++i) {
    if (raw.dim[i] < 1) input_error(name_of(path), "dim[" + std::to_string(i) + "] = " + std::to_string(raw.dim[i]) + " is not positive");
    if (raw.dim[i] > (1 << 24) || __builtin_mul_overflow(nvox, raw.dim[i], &nvox) || nvox > (std::int64_t{1} << 34))
      input_error(name_of(path), "dims " + dims() + " are too large (over 2^34 voxels)");
  }
  for (int i = 1; i <= 3 && i <= raw.dim[0]; ++i)
    if (raw.dim[i] > 1 && (!(raw.pixdim[i] > 0) || !std::isfinite(raw.pixdim[i])))
      input_error(name_of(path), "pixdim[" + std::to_string(i) + "] = " + std::to_string(raw.pixdim[i]) +
                                     ": voxel sizes must be positive and finite");
  NimPtr nim;
  {
    evk::QuietStderr quiet;  // nifticlib prints some errors itself
    nim.reset(nifti_image_read(path.c_str(), 0));
  }
  if (!nim)
    input_error(name_of(path), gz ? "not a readable NIfTI header (truncated or corrupt gzip, or not NIfTI)"
                                  : "not a NIfTI-1/NIfTI-2 file");
  if (nvox != nim->nvox || nim->nbyper <= 0) input_error(name_of(path), "inconsistent dims " + dims());
  // Our own data read: nifti_image_load silently replaces NaN/Inf by 0, and we must see them.
  const std::size_t bytes = static_cast<std::size_t>(nim->nvox) * static_cast<std::size_t>(nim->nbyper);
  const bool data_gz = nifti_is_gzfile(nim->iname) != 0;
  const std::string data_name = nim->iname ? nim->iname : "";
  const std::uintmax_t data_size = fs::file_size(data_name, ec);
  if (ec) input_error(data_name, "cannot open image data: " + ec.message());
  if (nim->iname_offset < 0) input_error(name_of(path), "negative vox_offset");
  const auto offset = static_cast<std::uintmax_t>(nim->iname_offset);
  // Too little data: a plain file must hold it all; deflate compresses at most 1032:1, so a gzip
  // file too small for the header's data size is cut (checked before allocating that size).
  if (!data_gz && data_size < offset + bytes)
    input_error(data_name, "truncated image data (the header's dims " + dims() + " need " +
                               std::to_string(offset + bytes) + " bytes, the file has " + std::to_string(data_size) + ")");
  if (data_gz && static_cast<double>(offset + bytes) > 1032.0 * static_cast<double>(data_size) + 1e6)
    input_error(data_name, "truncated image data (the header's dims " + dims() + " need " +
                               std::to_string(offset + bytes) + " bytes, more than a gzip file of " +
                               std::to_string(data_size) + " bytes can hold)");
  nim->data = std::malloc(bytes);
  if (!nim->data) throw std::bad_alloc();
  std::string problem;
  const std::size_t got = read_data(data_name, offset, nim->data, bytes, data_gz, data_size, problem);
  if (!problem.empty()) input_error(data_name, problem);
  if (got != bytes)
    input_error(data_name, "truncated image data (" + std::to_string(got) + " of " + std::to_string(bytes) +
                               " data bytes after vox_offset " + std::to_string(offset) + ")");
  if (nim->swapsize > 1 && nim->byteorder != nifti_short_order())
    nifti_swap_Nbytes(static_cast<int64_t>(nim->nvox) * (nim->nbyper / nim->swapsize), nim->swapsize, nim->data);
  return nim;
}

// Voxel sizes and the voxel-to-world matrix every computation uses must make sense: positive,
// finite pixdim on the spatial axes, a finite and invertible matrix.
Geometry checked_geometry(const nifti_image* nim, const fs::path& path) {
  for (int i = 1; i <= 3 && i <= nim->dim[0]; ++i)
    if (!(nim->pixdim[i] > 0) || !std::isfinite(nim->pixdim[i]))
      input_error(name_of(path), "pixdim[" + std::to_string(i) + "] = " + std::to_string(nim->pixdim[i]) +
                                     ": voxel sizes must be positive and finite");
  Geometry g = geometry_of(nim);
  for (const auto& row : g.vox2world.m)
    for (double v : row)
      if (!std::isfinite(v)) input_error(name_of(path), std::string(g.sform_code > 0 ? "sform" : "qform") + " matrix is not finite");
  try {
    (void)g.vox2world.inverse();
  } catch (const std::exception&) {
    input_error(name_of(path), std::string(g.sform_code > 0 ? "sform" : "qform") + " matrix is singular");
  }
  return g;
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

// Converts nvals elements of any real datatype to float (with scaling unless `scaled` is false).
std::vector<float> to_float(const nifti_image* nim, std::size_t offset, std::size_t n, const fs::path& path,
                            bool scaled) {
  std::vector<float> out(n);
  const double slope = (scaled && nim->scl_slope != 0 && std::isfinite(nim->scl_slope)) ? nim->scl_slope : 1.0;
  const double inter = (scaled && nim->scl_slope != 0 && std::isfinite(nim->scl_inter)) ? nim->scl_inter : 0.0;
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

// Intensity volumes: NaN voxels read as 0, as NiftyReg reads them (its nifticlib reader replaces
// them), so that NaN-padded images (reg_resample -pad nan, our --res outputs) go through every
// command as the background they stand for; an infinite value is still bad input.
void nan_to_zero_reject_inf(std::vector<float>& v, const fs::path& path) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) v[i] = 0.f;
    else if (std::isinf(v[i])) input_error(name_of(path), "holds an infinite value (element " + std::to_string(i) + ")");
  }
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
  // The temporary file keeps the extension (nifticlib and readers go by it); it is registered for
  // removal on failure and on SIGINT/SIGTERM like every AtomicOutput.
  AtomicOutput out(path, gz ? ".nii.gz" : ".nii");
  const int type = nim->nifti_type;  // nifti_set_filenames may change it
  if (nifti_set_filenames(nim, out.temp_path().c_str(), 0, 1) != 0) input_error(name_of(path), "cannot name output file");
  nim->nifti_type = type;
  // Written here rather than by nifti_image_write, which reports no write error (a full disk would
  // leave a short file) and, in nifticlib 3.0, puts NIfTI-2 data at offset 0 over the header:
  // the header, 4 zero bytes (no extensions), then the data.
  const bool v2 = type == NIFTI_FTYPE_NIFTI2_1;
  nifti_1_header h1;
  nifti_2_header h2;
  const void* hdr = nullptr;
  std::size_t hdr_bytes = 0;
  if (v2) {
    if (nifti_convert_nim2n2hdr(nim, &h2) != 0) throw std::runtime_error("nifti_convert_nim2n2hdr failed");
    h2.vox_offset = 544;
    std::memcpy(h2.magic, "n+2\0\r\n\032\n", 8);
    hdr = &h2;
    hdr_bytes = sizeof h2;
  } else {
    if (nifti_convert_nim2n1hdr(nim, &h1) != 0) throw std::runtime_error("nifti_convert_nim2n1hdr failed");
    h1.vox_offset = 352;
    std::memcpy(h1.magic, "n+1\0", 4);
    hdr = &h1;
    hdr_bytes = sizeof h1;
  }
  const char no_ext[4] = {0, 0, 0, 0};
  const std::size_t bytes = static_cast<std::size_t>(nim->nvox) * static_cast<std::size_t>(nim->nbyper);
  bool ok = false;
  if (gz) {  // compressed on every core (io/gzip_parallel.hpp)
    ok = write_gzip_parallel(out.temp_path().string(), {{hdr, hdr_bytes}, {no_ext, 4}, {nim->data, bytes}});
  } else {
    znzFile fp = znzopen(out.temp_path().c_str(), "wb", 0);
    if (znz_isnull(fp)) input_error(name_of(path), "cannot open for writing");
    ok = znzwrite(hdr, 1, hdr_bytes, fp) == hdr_bytes && znzwrite(no_ext, 1, 4, fp) == 4 && znzwrite(nim->data, 1, bytes, fp) == bytes;
    ok = znzclose(fp) == 0 && ok;  // stdio buffers are written at close: check it too
  }
  if (!ok) input_error(name_of(path), "write failed (disk full or not writable?)");
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
}  // namespace evk::reg_deform::nifti
