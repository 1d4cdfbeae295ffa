// A small PNG writer (non-interlaced, filter 0, zlib) shared by the tools: grey or RGB, 8 or 16 bit
// samples (16-bit samples big-endian, as PNG stores them). Writes `path` directly; callers wanting
// atomic outputs pass evk::AtomicOutput::temp_path(). Throws InputError naming the file on I/O errors.
#pragma once
#include <filesystem>
#include <vector>

namespace evk {
void write_png(const std::filesystem::path& path, int width, int height, int channels, int bit_depth,
               const std::vector<unsigned char>& samples);
}  // namespace evk
