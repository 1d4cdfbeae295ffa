// Synthetic stereo pairs with known disparities (tests, gi training cases, benchmarks).
#pragma once
#include <cstdint>

#include "core/types.hpp"

namespace evk::stereo {

// Uniform random grey levels (deterministic for a seed).
Image8 random_image(int width, int height, std::uint64_t seed);

struct SyntheticPair {
  Image8 left, right;
  DisparityMap truth;  // disparity of each left pixel (0..max_disparity)
};
// A textured background plane and a few fronto-parallel rectangles at larger disparities; the right
// image is the left one shifted by each pixel's disparity (nearer surfaces win), disoccluded pixels
// are fresh texture. Texture is noise smoothed over 2x2 pixels, so matching is well posed.
SyntheticPair make_synthetic_pair(int width, int height, int max_disparity, std::uint64_t seed);

}  // namespace evk::stereo
