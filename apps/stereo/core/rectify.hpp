// Rectification as a remap: each rectified pixel samples the raw image at a position given by two
// maps (a rig's undistort-and-rotate maps, core/rig.hpp and io/rig.hpp). The sampling is bilinear in
// exactly specified integer arithmetic, so the GPU stage (core/src/sgm/rectify.cu) and this CPU
// reference give the same pixels bit for bit:
//  - a position that is not finite or lies outside (-1, W) x (-1, H) gives 0;
//  - else it is rounded to 1/256 pixel, q = floor(256 x + 0.5) (256 x is exact in float, so an FMA
//    contraction of 256 x + 0.5 rounds the same); x0 = q >> 8 (floor), fx = q & 255, the same in y;
//  - the four neighbours (x0, y0) .. (x0 + 1, y0 + 1), each 0 outside the image (OpenCV's
//    BORDER_CONSTANT 0), weighted (256 - fx)(256 - fy), fx (256 - fy), (256 - fx) fy, fx fy (sum 65536);
//  - the value is (sum of weight x pixel + 32768) >> 16 in 32-bit unsigned arithmetic
//    (65536 x 65535 + 32768 < 2^32).
// OpenCV's cv::remap quantises positions to 1/32 pixel instead (INTER_BITS 5): the two differ by at
// most 1 + 0.036 D, D the local range of the pixels (tests/stereo/rig_test.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "core/sgm.hpp"

namespace evk::stereo {

struct RectifyMaps {
  int width = 0, height = 0;       // the raw and the rectified images' size
  std::vector<float> x[2], y[2];   // per camera (0 left, 1 right): width * height raw positions, row-major
};

// dst (w x h) from src (w x h) through one camera's maps (mx, my: w * h positions each).
void remap_cpu(const std::uint8_t* src, int w, int h, const float* mx, const float* my, std::uint8_t* dst);
void remap_cpu(const std::uint16_t* src, int w, int h, const float* mx, const float* my, std::uint16_t* dst);

// InputError naming --rig when frames of width x height do not fit the maps (the rig's views).
void check_rectify_size(const RectifyMaps& m, int width, int height);
// One camera's image (0 left, 1 right) rectified in place (remap_cpu; maxval kept).
void rectify_image(const RectifyMaps& m, int camera, Image16& image);

// Rig-like maps for tests and benchmarks: rectified pixel (u, v) samples the raw image at the point
// rotated by `angle` radians about the centre (the right camera by -angle), then moved radially by
// 1 + k1 r^2 (r: the distance from the centre over half the diagonal).
RectifyMaps synthetic_rectify_maps(int width, int height, double angle, double k1);

}  // namespace evk::stereo
