// The nifticlib layer of io/ (nifti_io.cpp's, not a public interface): a NIfTI file opened and
// checked (every problem an InputError naming the file), its geometry and values, and writing.
#pragma once
#include <nifti2_io.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/nifti_io.hpp"

namespace evk::reg_deform::nifti {

namespace fs = std::filesystem;

struct NimDeleter {
  void operator()(nifti_image* n) const { nifti_image_free(n); }
};
using NimPtr = std::unique_ptr<nifti_image, NimDeleter>;

inline std::string name_of(const fs::path& p) { return p.string(); }

// The file read and checked against its raw header (dims and pixdim as stored), data included.
NimPtr open_nifti(const fs::path& path);
Geometry geometry_of(const nifti_image* nim);
// geometry_of with positive finite voxel sizes and a finite, invertible voxel-to-world matrix.
Geometry checked_geometry(const nifti_image* nim, const fs::path& path);
// n elements from `offset` of any real datatype as float (scl_slope/scl_inter applied when scaled).
std::vector<float> to_float(const nifti_image* nim, std::size_t offset, std::size_t n, const fs::path& path,
                            bool scaled = true);
std::string dims_text(const nifti_image* nim);
void check_scalar_3d(const nifti_image* nim, const fs::path& path);
void check_vector_5d(const nifti_image* nim, const fs::path& path);
void check_finite(const std::vector<float>& v, const fs::path& path);
void nan_to_zero_reject_inf(std::vector<float>& v, const fs::path& path);
void check_same_grid(const Geometry& a, const Geometry& ref, const fs::path& path);

// A new image of g's geometry (nt time points, nu vector components) and datatype.
NimPtr new_nim(const Geometry& g, int nt, int nu, int datatype, const WriteOptions& opt);
// Written through an AtomicOutput (.nii or .nii.gz by the name; write errors are InputErrors).
void write_nim(nifti_image* nim, const fs::path& path);
// NiftyReg's transformation intent: vector, intent_p1, "NREG_TRANS".
void set_vector_intent(nifti_image* nim, double p1);

}  // namespace evk::reg_deform::nifti
