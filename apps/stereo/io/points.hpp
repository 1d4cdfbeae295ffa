// What a calibrated rig makes of a left-image disparity map (core/rig.hpp's Q): metric depth as PFM
// (+inf where there is none) and the 3-D points as a binary little-endian PLY (x y z float, red green
// blue uchar from the left image; pixels without a disparity left out), the layout CloudCompare,
// Open3D, MeshLab and meshio read. Written atomically; InputError naming the file on failure.
#pragma once
#include <cstddef>
#include <filesystem>

#include "core/rig.hpp"
#include "core/sgm.hpp"

namespace evk::stereo {

void write_depth_pfm(const std::filesystem::path& path, const Rig& rig, const DisparityQ& d);
// Returns the number of points written.
std::size_t write_points_ply(const std::filesystem::path& path, const Rig& rig, const DisparityQ& d, const Image16& left);

}  // namespace evk::stereo
