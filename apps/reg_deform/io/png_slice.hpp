// Grey-scale / RGB PNG writing through zlib (no libpng, no OpenCV) and the demo's snapshot: a
// middle axial slice of two volumes side by side with a control-point grid drawn over them.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

#include "../core/types.hpp"

namespace evk::reg_deform {

// rgb: width * height * 3 bytes, rows top to bottom. Written through evk::AtomicOutput.
void write_png_rgb(const std::filesystem::path& path, int width, int height, const std::vector<std::uint8_t>& rgb);

// The middle axial (z) slice of `before` and `after` side by side (intensities scaled to the 1st..99th
// percentile of `before`), with the deformed grid lines (the field sampled every `spacing` voxels)
// drawn in colour on the right panel and the regular grid on the left.
void write_snapshot(const std::filesystem::path& path, const Volume& before, const Volume& after, const Field& def,
                    double spacing);

}  // namespace evk::reg_deform
