// A calibrated stereo rig (what `stereo calibrate` writes and `--rig` reads): each camera's matrix
// and distortion (OpenCV's rational model), the right camera's pose in the left's frame, and the
// rectification that makes the pair's rows epipolar lines (R1/R2 rotations, P1/P2 projections, Q
// the disparity-to-depth matrix). Matrices row-major; lengths in the unit of the board's squares.
#pragma once
#include <array>
#include <string>
#include <vector>

namespace evk::stereo {

struct Rig {
  int width = 0, height = 0;  // the views' size, which every frame must have
  std::array<double, 9> M1{}, M2{};
  std::vector<double> D1, D2;  // distortion coefficients (k1 k2 p1 p2 k3 k4 k5 k6)
  std::array<double, 9> R{}, E{}, F{}, R1{}, R2{};
  std::array<double, 3> T{};
  std::array<double, 12> P1{}, P2{};
  std::array<double, 16> Q{};
  double rms = 0;        // RMS reprojection error of the calibration, pixels
  double epipolar = 0;   // mean distance of a corner to its epipolar line, pixels
  int views_used = 0;
};

// Metric depth of a rectified left-image disparity through Q (as OpenCV's reprojectImageTo3D):
// Z = Q[11] / (Q[14] d + Q[15]); non-finite or non-positive disparities give +inf (no depth).
float depth_from_disparity(const Rig& rig, float d);

// The 3-D point of left-image pixel (x, y) with disparity d: [X Y Z W] = Q [x y d 1], divided by W.
// False where the disparity is invalid (as depth_from_disparity).
bool point_from_disparity(const Rig& rig, int x, int y, float d, std::array<float, 3>& p);

}  // namespace evk::stereo
