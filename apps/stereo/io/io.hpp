// Stereo file formats. Images: PGM/PPM (P2, P3, P5, P6; 8 or 16 bit) read natively, any other
// format OpenCV reads (PNG, JPEG, ...) through OpenCV when the build has it. Disparity files:
//   .pfm  32-bit float, Middlebury convention (little-endian "Pf", rows bottom to top); invalid = +inf
//   .png  16-bit grey, value = round(disparity * scale), invalid (and disparity 0) = 0
//   .pgm  16-bit binary PGM, same values as .png
// Colour visualisation: 8-bit RGB PNG, a colour map over [min, max] disparity, invalid black.
// PNG is written natively (zlib). Readers and writers throw InputError naming the file.
#pragma once
#include <filesystem>

#include "core/sgm.hpp"
#include "core/types.hpp"
#include "evk/png.hpp"

namespace evk::stereo {

bool have_opencv();  // whether this build reads non-Netpbm images

// 8-bit grey (colour converted with the ITU-R 601 weights; 16-bit scaled to 8 bit).
Image8 read_gray(const std::filesystem::path& path);

// Grey at the file's own depth (8 or 16 bit; maxval kept); colour converted as read_gray does.
Image16 read_gray16(const std::filesystem::path& path);

// Ground truth / disparity as numbers: PFM values as stored (negative or non-finite = unknown);
// PNG/PGM/other grey images at their full depth, divided by scale, 0 = unknown (+inf).
FloatMap read_disparity(const std::filesystem::path& path, double scale);

// Mask image (8-bit grey; 255 = inside).
Image8 read_mask(const std::filesystem::path& path);

struct WriteOptions {
  double png_scale = 256;   // .png/.pgm: stored value = disparity * png_scale
};
// Writes by extension (.pfm, .png, .pgm) through an atomic temporary file.
void write_disparity(const std::filesystem::path& path, const DisparityMap& d, const WriteOptions& opt = {});
// Checks that the extension is known and the scale fits (max_disparity * scale <= 65535) before any work.
void check_disparity_output(const std::filesystem::path& path, int max_disparity, const WriteOptions& opt = {});
void write_color_png(const std::filesystem::path& path, const DisparityMap& d, int min_disparity, int max_disparity);
// Maps in 1/16 pixel: .pfm keeps the fractions; .png/.pgm store round(d x png_scale) and cannot hold
// negative disparities (checked before anything is written, as is the 16-bit range).
void write_disparity(const std::filesystem::path& path, const DisparityQ& d, const WriteOptions& opt = {});
void check_disparity_output(const std::filesystem::path& path, int min_disparity, int max_disparity,
                            const WriteOptions& opt);
void write_color_png(const std::filesystem::path& path, const DisparityQ& d, int min_disparity, int max_disparity);

// Low-level writers (also used by tests and tools).
void write_pgm8(const std::filesystem::path& path, const Image8& im);
// A grey image as binary PGM at its own depth (maxval kept: read back, the same Image16), atomically.
void write_gray_pgm(const std::filesystem::path& path, const Image16& im);
using evk::write_png;  // common/include/evk/png.hpp

}  // namespace evk::stereo
