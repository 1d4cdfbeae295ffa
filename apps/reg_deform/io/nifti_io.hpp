// NIfTI-1 / NIfTI-2 files (.nii, .nii.gz) <-> reg_deform's types, in NiftyReg's conventions:
// control-point grids and deformation/displacement fields are 5-D [nx, ny, nz, 1, 3], planar
// float32, intent_code 1007 (vector), intent_name "NREG_TRANS", intent_p1 0 deformation /
// 1 displacement / 2 cubic B-spline grid. Every problem is an InputError naming the file.
#pragma once
#include <filesystem>
#include <string>

#include "core/types.hpp"

namespace evk::reg_deform {

namespace fs = std::filesystem;

inline constexpr int kIntentVector = 1007;
inline constexpr double kDefField = 0, kDispField = 1, kSplineGrid = 2;
inline constexpr const char* kIntentName = "NREG_TRANS";

struct WriteOptions {
  int nifti_version = 1;  // 1 or 2
};

// A 3-D scalar volume, any real datatype (scl_slope/scl_inter applied), as float. NaN voxels
// (NiftyReg's padding value) are read as 0, as NiftyReg reads them; an infinite value is an
// InputError. (Grids and fields keep rejecting NaN and Inf.)
Volume read_volume(const fs::path& path);
// A mask volume on the reference's grid (nonzero = active).
Mask read_mask(const fs::path& path, const Geometry& ref);
// A cubic B-spline control-point grid for `ref`: 5-D, intent 1007, intent_p1 2, finite values,
// NiftyReg layout relative to the reference, dims covering the reference at its spacing.
Grid read_grid(const fs::path& path, const Geometry& ref);

// A transformation told apart by intent_p1 (0, 1 or 2), checked against the reference.
Transformation read_transformation(const fs::path& path, const Geometry& ref);
// The same, refusing anything but a grid (intent_p1 2) when grid_only.
Transformation read_transformation(const fs::path& path, const Geometry& ref, bool grid_only);

// Writers: through evk::AtomicOutput (nothing is left behind on failure).
void write_volume(const fs::path& path, const Volume& v, const WriteOptions& opt = {});
void write_mask(const fs::path& path, const Geometry& geo, const Mask& m, const WriteOptions& opt = {});
void write_grid(const fs::path& path, const Grid& g, const WriteOptions& opt = {});
void write_field(const fs::path& path, const Field& f, const WriteOptions& opt = {});

// A scalar volume as stored, for the drop-in NiftyReg commands, which keep the floating image's
// datatype and scaling as NiftyReg does: values without scl_slope/scl_inter, and the header
// fields written back with them.
struct StoredInfo {
  int datatype = 16;  // NIfTI datatype code (16 = float32)
  double scl_slope = 0, scl_inter = 0, cal_min = 0, cal_max = 0;
  int intent_code = 0;
  double intent_p1 = 0, intent_p2 = 0;
  std::string intent_name;
  int nifti_version = 1;
};
struct StoredVolume {
  Volume vol;  // stored values as float (no scaling)
  StoredInfo info;
};
// NaN read as 0 and Inf rejected, as read_volume.
StoredVolume read_stored_volume(const fs::path& path);
// v's values written in info.datatype (integers: truncated toward zero, clamped to the type's
// range, NaN as 0), with info's scaling and intent and the description `descrip`.
void write_stored_volume(const fs::path& path, const Volume& v, const StoredInfo& info, const std::string& descrip);

// A floating image's storage (datatype, scaling) from its header alone (float32 when unreadable).
StoredInfo stored_info(const fs::path& path);
// A warped floating image (values in the floating image's units, scaling applied) written as
// NiftyReg writes its results: in the floating image's datatype and scaling (integers: truncated
// toward zero, clamped to the type, NaN as 0), or float32 when keep_float or the floating image is
// float32 already. Returns the values a reader gets back (what NMI of the written file sees).
Volume write_as_floating(const fs::path& path, const Volume& warped, const StoredInfo& flo, bool keep_float, const std::string& descrip);

}  // namespace evk::reg_deform
