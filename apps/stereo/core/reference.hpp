// The exact CPU reference (what every GPU variant must reproduce bit for bit) and a naive per-pixel
// version of the same definition, used only to test the reference.
#pragma once
#include "core/types.hpp"

namespace evk::stereo {

// For each left pixel (x, y) and d = min..max: SSD over the window of (L(x+i, y+j) - R(x+i-d, y+j))^2,
// reads clamped to the nearest edge pixel; result = the first d whose SSD is strictly smaller than
// all earlier ones and than min_ssd, else -1. Rolling column sums, rows split over threads
// (threads <= 0: all cores).
DisparityMap disparity_cpu(const Image8& left, const Image8& right, const Params& p, int threads = 0);

// The same definition evaluated literally per pixel and disparity (slow; tests only).
DisparityMap disparity_naive(const Image8& left, const Image8& right, const Params& p);

}  // namespace evk::stereo
