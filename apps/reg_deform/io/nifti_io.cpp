// reg_deform's types <-> NIfTI files (through nifti_file.hpp's nifticlib layer).
#include "io/nifti_io.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/field/grid_make.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#include "io/nifti_file.hpp"

namespace evk::reg_deform {

using namespace nifti;

namespace {

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
  v.geo = checked_geometry(nim.get(), path);
  v.data = to_float(nim.get(), 0, static_cast<std::size_t>(v.geo.voxels()), path);
  nan_to_zero_reject_inf(v.data, path);
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
  Transformation t = read_transformation(path, ref, true);
  if (t.kind != TransKind::grid)
    input_error(name_of(path), "intent_p1 is not 2: not a cubic B-spline control-point grid");
  return std::move(t.grid);
}

Transformation read_transformation(const fs::path& path, const Geometry& ref) {
  return read_transformation(path, ref, false);
}

Transformation read_transformation(const fs::path& path, const Geometry& ref, bool grid_only) {
  NimPtr nim = open_nifti(path);
  check_vector_5d(nim.get(), path);
  if (grid_only && nim->intent_p1 != kSplineGrid)
    input_error(name_of(path), "intent_p1 is not 2: not a cubic B-spline control-point grid");
  Transformation t;
  const double p1 = nim->intent_p1;
  Geometry g = checked_geometry(nim.get(), path);
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

StoredVolume read_stored_volume(const fs::path& path) {
  NimPtr nim = open_nifti(path);
  check_scalar_3d(nim.get(), path);
  StoredVolume sv;
  sv.vol.geo = geometry_of(nim.get());
  sv.vol.data = to_float(nim.get(), 0, static_cast<std::size_t>(sv.vol.geo.voxels()), path, false);
  nan_to_zero_reject_inf(sv.vol.data, path);
  StoredInfo& i = sv.info;
  i.datatype = nim->datatype;
  i.scl_slope = nim->scl_slope;
  i.scl_inter = nim->scl_inter;
  i.cal_min = nim->cal_min;
  i.cal_max = nim->cal_max;
  i.intent_code = nim->intent_code;
  i.intent_p1 = nim->intent_p1;
  i.intent_p2 = nim->intent_p2;
  i.intent_name = nim->intent_name;
  i.nifti_version = nim->nifti_type == NIFTI_FTYPE_NIFTI2_1 || nim->nifti_type == NIFTI_FTYPE_NIFTI2_2 ? 2 : 1;
  return sv;
}

namespace {
// Saturating, truncating conversion (C's float -> integer conversion within the type's range; NaN -> 0).
template <class T>
T stored_value(float f) {
  const double x = f;
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(x);
  } else {
    if (x != x) return 0;
    if (x <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (x >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(x);
  }
}
template <class T>
void store_as(const std::vector<float>& v, void* dst) {
  T* out = static_cast<T*>(dst);
  parallel_for(v.size(), [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) out[i] = stored_value<T>(v[i]);
  });
}
}  // namespace

void write_stored_volume(const fs::path& path, const Volume& v, const StoredInfo& info, const std::string& descrip) {
  WriteOptions opt;
  opt.nifti_version = info.nifti_version;
  NimPtr nim = new_nim(v.geo, 1, 1, info.datatype, opt);
  switch (info.datatype) {
    case DT_UINT8: store_as<std::uint8_t>(v.data, nim->data); break;
    case DT_INT8: store_as<std::int8_t>(v.data, nim->data); break;
    case DT_INT16: store_as<std::int16_t>(v.data, nim->data); break;
    case DT_UINT16: store_as<std::uint16_t>(v.data, nim->data); break;
    case DT_INT32: store_as<std::int32_t>(v.data, nim->data); break;
    case DT_UINT32: store_as<std::uint32_t>(v.data, nim->data); break;
    case DT_INT64: store_as<std::int64_t>(v.data, nim->data); break;
    case DT_UINT64: store_as<std::uint64_t>(v.data, nim->data); break;
    case DT_FLOAT32: store_as<float>(v.data, nim->data); break;
    case DT_FLOAT64: store_as<double>(v.data, nim->data); break;
    default:
      input_error(name_of(path), std::string("cannot write datatype ") + nifti_datatype_string(info.datatype));
  }
  nim->scl_slope = static_cast<float>(info.scl_slope);
  nim->scl_inter = static_cast<float>(info.scl_inter);
  nim->cal_min = static_cast<float>(info.cal_min);
  nim->cal_max = static_cast<float>(info.cal_max);
  nim->intent_code = info.intent_code;
  nim->intent_p1 = static_cast<float>(info.intent_p1);
  nim->intent_p2 = static_cast<float>(info.intent_p2);
  std::snprintf(nim->intent_name, sizeof nim->intent_name, "%s", info.intent_name.c_str());
  std::snprintf(nim->descrip, sizeof nim->descrip, "%s", descrip.c_str());
  write_nim(nim.get(), path);
}

StoredInfo stored_info(const fs::path& path) {
  nifti_set_debug_level(0);  // libraries never print
  StoredInfo i;
  NimPtr nim(nifti_image_read(path.c_str(), 0));
  if (!nim) return i;
  i.datatype = nim->datatype;
  i.scl_slope = nim->scl_slope;
  i.scl_inter = nim->scl_inter;
  i.nifti_version = nim->nifti_type == NIFTI_FTYPE_NIFTI2_1 || nim->nifti_type == NIFTI_FTYPE_NIFTI2_2 ? 2 : 1;
  return i;
}

Volume write_as_floating(const fs::path& path, const Volume& warped, const StoredInfo& flo, bool keep_float, const std::string& descrip) {
  const bool is_float = flo.datatype == DT_FLOAT32 || flo.datatype == DT_FLOAT64;
  const bool known = is_float || flo.datatype == DT_UINT8 || flo.datatype == DT_INT8 || flo.datatype == DT_INT16 ||
                     flo.datatype == DT_UINT16 || flo.datatype == DT_INT32 || flo.datatype == DT_UINT32;
  if (keep_float || flo.datatype == DT_FLOAT32 || !known) {
    write_volume(path, warped);
    return warped;
  }
  // stored = (value - inter) / slope (slope 0: no scaling, as NIfTI says), then the type's conversion
  const bool scaled = flo.scl_slope != 0 && std::isfinite(flo.scl_slope) && (flo.scl_slope != 1 || flo.scl_inter != 0);
  Volume scaled_copy;
  if (scaled) {
    scaled_copy = warped;
    parallel_for(warped.data.size(), [&](std::size_t i0, std::size_t i1) {
      for (std::size_t i = i0; i < i1; ++i) scaled_copy.data[i] = static_cast<float>((warped.data[i] - flo.scl_inter) / flo.scl_slope);
    });
  }
  const Volume& stored = scaled ? scaled_copy : warped;
  StoredInfo info;
  info.datatype = flo.datatype;
  info.scl_slope = scaled ? flo.scl_slope : 0;
  info.scl_inter = scaled ? flo.scl_inter : 0;
  info.nifti_version = flo.nifti_version;
  write_stored_volume(path, stored, info, descrip);
  // what a reader gets back: the type's truncation and clamping, NaN as 0, the scaling applied
  Volume back;
  back.geo = stored.geo;
  back.data.resize(stored.data.size());
  auto round_trip = [&](auto zero) {
    using T = decltype(zero);
    parallel_for(stored.data.size(), [&](std::size_t i0, std::size_t i1) {
      for (std::size_t i = i0; i < i1; ++i) {
        const float x = static_cast<float>(stored_value<T>(stored.data[i]));
        back.data[i] = scaled ? static_cast<float>(x * flo.scl_slope + flo.scl_inter) : x;
      }
    });
  };
  switch (flo.datatype) {
    case DT_UINT8: round_trip(std::uint8_t{}); break;
    case DT_INT8: round_trip(std::int8_t{}); break;
    case DT_INT16: round_trip(std::int16_t{}); break;
    case DT_UINT16: round_trip(std::uint16_t{}); break;
    case DT_INT32: round_trip(std::int32_t{}); break;
    case DT_UINT32: round_trip(std::uint32_t{}); break;
    default: round_trip(double{}); break;
  }
  return back;
}

}  // namespace evk::reg_deform
