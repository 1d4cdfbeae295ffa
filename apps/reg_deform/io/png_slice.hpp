// Grey-scale / RGB PNG writing through zlib (no libpng, no OpenCV) and the demo's snapshot: a
// middle axial slice of two volumes side by side with a control-point grid drawn over them.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

// rgb: width * height * 3 bytes, rows top to bottom. Written through evk::AtomicOutput.
void write_png_rgb(const std::filesystem::path& path, int width, int height, const std::vector<std::uint8_t>& rgb);

// The middle axial (z) slice of `before` and `after` side by side (intensities scaled to the 1st..99th
// percentile of `before`), with the deformed grid lines (the field sampled every `spacing` voxels)
// drawn in colour on the right panel and the regular grid on the left.
void write_snapshot(const std::filesystem::path& path, const Volume& before, const Volume& after, const Field& def,
                    double spacing);

// Registration check for `affine --png`: checkerboards of the reference and a floating image resampled
// onto it (tiles of `tile` voxels alternating between the two, each with its own 1st..99th percentile
// window, NaN black), before (left) and after (right) the registration; top row the middle axial
// slice (anterior up), bottom row the middle coronal slice (superior up). Aligned images continue
// each other's edges across the tiles.
void write_checkerboards(const std::filesystem::path& path, const Volume& ref, const std::vector<float>& before,
                         const std::vector<float>& after, int tile = 16);

}  // namespace evk::reg_deform
