// Stereo rig calibration from chessboard views (OpenCV's calib3d) and the rig file (OpenCV
// FileStorage YAML, so OpenCV users load it with cv::FileStorage: M1 D1 M2 D2 R T E F R1 R2 P1 P2 Q,
// plus width, height, rms, epipolar_error, views_used). Needs a build with OpenCV; without it each
// call throws InputError saying so.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/rectify.hpp"
#include "core/rig.hpp"
#include "core/sgm.hpp"

namespace evk::stereo {

struct CalibrateOptions {
  int cols = 9, rows = 6;  // inner corners of the chessboard
  double square = 1.0;     // square size: the unit of T, depth and points
};

struct CalibrationView {
  std::string left, right;
  bool used = false;
  std::string why;  // when not used: which image had no board
};

struct Calibration {
  Rig rig;
  std::vector<CalibrationView> views;
};

// Views in pairs (left[i], right[i]): the corners of each (sub-pixel), then stereoCalibrate with
// OpenCV's rational model, one focal length for both, no tangential distortion (as OpenCV's
// stereo_calib sample), then stereoRectify (zero disparity at infinity, every pixel kept). Throws
// InputError for unreadable images, views of different sizes, or fewer than 3 views with a board.
Calibration calibrate_rig(const std::vector<std::string>& left, const std::vector<std::string>& right,
                          const CalibrateOptions& opt);

// The raw pair as the rig's rectification sees it (undistorted and rotated so rows are epipolar
// lines; bilinear, 0 outside the view), in place. InputError when the images are not the rig's size.
// A Rectifier computes the two remap tables once (OpenCV's initUndistortRectifyMap) and may be
// applied from several threads; it samples with remap_cpu (core/rectify.hpp), so the GPU stage that
// takes the same maps gives the same pixels.
class Rectifier {
 public:
  explicit Rectifier(const Rig& rig);
  void apply(Image16& left, Image16& right) const;
  void apply_one(int camera, Image16& image) const;  // 0 left, 1 right
  std::shared_ptr<const RectifyMaps> maps() const { return maps_; }

 private:
  std::shared_ptr<const RectifyMaps> maps_;
};

void write_rig(const Rig& rig, const std::string& path);  // atomically; InputError when unwritable
Rig read_rig(const std::string& path);                    // InputError naming the file and the field

}  // namespace evk::stereo
