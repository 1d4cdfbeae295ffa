// Core types of the stereo tool: 8-bit grey images, disparity maps and the matching parameters.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace evk::stereo {

struct Image8 {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  // row-major, width * height
  std::uint8_t at(int x, int y) const { return pixels[static_cast<std::size_t>(y) * width + x]; }
};

// Disparities in pixels; kInvalid (-1) where no disparity beat min_ssd.
constexpr int kInvalid = -1;
struct DisparityMap {
  int width = 0, height = 0;
  std::vector<int> d;
  int at(int x, int y) const { return d[static_cast<std::size_t>(y) * width + x]; }
};

// Real-valued maps (disparity files, ground truth): +inf (any non-finite or negative value) = unknown.
struct FloatMap {
  int width = 0, height = 0;
  std::vector<float> v;
  float at(int x, int y) const { return v[static_cast<std::size_t>(y) * width + x]; }
};
FloatMap to_float(const DisparityMap& m);  // -1 -> +inf

struct Params {
  int min_disparity = 0;
  int max_disparity = 50;
  int window = 11;          // odd, >= 3: the SSD window is window x window
  int min_ssd = 500000;     // a disparity is kept only when its SSD is strictly smaller than this
  int radius() const { return window / 2; }
  int count() const { return max_disparity - min_disparity + 1; }
};

// Largest window whose SSD of 8-bit differences always fits in a signed 32-bit int.
constexpr int kMaxWindow = 181;

// Throws InputError naming the option (--window, --max-disparity, ...) when p is unusable.
void validate(const Params& p);
// Throws InputError naming `what` when the pair is empty or the sizes differ.
void validate_pair(const Image8& left, const Image8& right, const std::string& what = "images");

}  // namespace evk::stereo
