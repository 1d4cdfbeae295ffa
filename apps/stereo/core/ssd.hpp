// The SSD method (Stam's stereoKernel definition, reference.hpp) with the post-processing every
// method shares (sgm.hpp: uniqueness, sub-pixel, median, LR check, speckle).
#pragma once
#include "core/sgm.hpp"
#include "core/types.hpp"

namespace evk::stereo {

// Winner-take-all statistics of the SSD costs: best = the first d of minimal SSD when that SSD is
// below min_ssd (else -1), the costs beside it and the smallest with |k - best| > 1.
WtaResult ssd_wta_cpu(const Image8& left, const Image8& right, const Params& p, int threads = 0);

// The image mirrored left-right (row by row).
Image8 mirror(const Image8& im);
// The right image's map from the SSD map of the mirrored, swapped pair (mirror(R), mirror(L)):
// mirrored back, whole pixels.
DisparityQ ssd_right_map(const DisparityMap& mirrored);

// SSD + refine (uniqueness, sub-pixel) + right map + median + LR check + speckle, on the CPU.
StereoResult ssd_cpu(const Image8& left, const Image8& right, const Params& p, const PostParams& post,
                     int threads = 0);

}  // namespace evk::stereo
