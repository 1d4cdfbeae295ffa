// Internal helpers of stereo_io.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace evk::stereo::detail {

// Grey image at its own depth (8 or 16 bit); maxval 255 or up to 65535.
struct Gray {
  int width = 0, height = 0, maxval = 255;
  std::vector<std::uint16_t> v;
};

std::string lower_ext(const std::filesystem::path& p);
bool is_netpbm(const std::filesystem::path& p);   // by magic number
bool is_pfm(const std::filesystem::path& p);      // by magic number
Gray read_netpbm(const std::filesystem::path& p); // colour -> grey (601 weights)
Gray read_opencv(const std::filesystem::path& p, bool any_depth);
std::vector<float> read_pfm(const std::filesystem::path& p, int& width, int& height);
void write_pfm(const std::filesystem::path& p, int width, int height, const std::vector<float>& v);
void write_pgm16(const std::filesystem::path& p, int width, int height, const std::vector<std::uint16_t>& v);
// Binary PGM of that maxval (one byte a sample up to 255, else two).
void write_pgm(const std::filesystem::path& p, int width, int height, int maxval, const std::vector<std::uint16_t>& v);
std::uint8_t rgb_to_gray(int r, int g, int b);

}  // namespace evk::stereo::detail
