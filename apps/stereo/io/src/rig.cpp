#include "io/rig.hpp"

#include <filesystem>
#include <system_error>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"

#ifdef EVK_HAVE_OPENCV
#include <opencv2/calib3d.hpp>
#include <opencv2/core/persistence.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace evk::stereo {

#ifndef EVK_HAVE_OPENCV
Calibration calibrate_rig(const std::vector<std::string>&, const std::vector<std::string>&, const CalibrateOptions&) {
  input_error("calibrate", "this build has no OpenCV (calib3d), which calibration needs");
}
Rectifier::Rectifier(const Rig&) { input_error("--rig", "this build has no OpenCV to rectify with"); }
void Rectifier::apply(Image16&, Image16&) const {}
void Rectifier::apply_one(int, Image16&) const {}
void write_rig(const Rig&, const std::string& path) { input_error(path, "this build has no OpenCV to write a rig file"); }
Rig read_rig(const std::string& path) { input_error(path, "this build has no OpenCV to read a rig file"); }
#else
namespace {

template <std::size_t N>
void from_mat(const cv::Mat& m, std::array<double, N>& out) {
  cv::Mat d;
  m.convertTo(d, CV_64F);
  if (d.total() != N) throw std::invalid_argument("matrix of " + std::to_string(d.total()) + " values, not " + std::to_string(N));
  for (std::size_t i = 0; i < N; ++i) out[i] = d.at<double>(static_cast<int>(i));
}
std::vector<double> vec_of(const cv::Mat& m) {
  cv::Mat d;
  m.convertTo(d, CV_64F);
  return std::vector<double>(d.begin<double>(), d.end<double>());
}
template <std::size_t N>
cv::Mat mat_of(const std::array<double, N>& a, int rows) {
  return cv::Mat(rows, static_cast<int>(N) / rows, CV_64F, const_cast<double*>(a.data())).clone();
}

// The board's inner corners in one image (sub-pixel), tried at the image's size and doubled.
bool find_corners(const cv::Mat& gray, cv::Size board, std::vector<cv::Point2f>& corners) {
  for (int scale = 1; scale <= 2; ++scale) {
    cv::Mat img = gray;
    if (scale > 1) cv::resize(gray, img, cv::Size(), scale, scale, cv::INTER_LINEAR);
    if (!cv::findChessboardCorners(img, board, corners, cv::CALIB_CB_ADAPTIVE_THRESH | cv::CALIB_CB_NORMALIZE_IMAGE)) continue;
    for (auto& c : corners) c *= 1.0f / static_cast<float>(scale);
    cv::cornerSubPix(gray, corners, cv::Size(11, 11), cv::Size(-1, -1),
                     cv::TermCriteria(cv::TermCriteria::COUNT + cv::TermCriteria::EPS, 30, 0.01));
    return true;
  }
  return false;
}

// Mean distance of each corner to the epipolar line of its match in the other image.
double epipolar_error(const std::vector<std::vector<cv::Point2f>> pts[2], const cv::Mat M[2], const cv::Mat D[2], const cv::Mat& F) {
  double err = 0;
  std::size_t n = 0;
  for (std::size_t v = 0; v < pts[0].size(); ++v) {
    std::vector<cv::Point2f> und[2];
    std::vector<cv::Vec3f> lines[2];
    for (int k = 0; k < 2; ++k) {
      cv::undistortPoints(pts[k][v], und[k], M[k], D[k], cv::Mat(), M[k]);
      cv::computeCorrespondEpilines(und[k], k + 1, F, lines[k]);
    }
    for (std::size_t j = 0; j < und[0].size(); ++j, ++n)
      err += std::abs(und[0][j].x * lines[1][j][0] + und[0][j].y * lines[1][j][1] + lines[1][j][2]) +
             std::abs(und[1][j].x * lines[0][j][0] + und[1][j].y * lines[0][j][1] + lines[0][j][2]);
  }
  return n ? err / (2.0 * static_cast<double>(n)) : 0;
}

}  // namespace

Calibration calibrate_rig(const std::vector<std::string>& left, const std::vector<std::string>& right,
                          const CalibrateOptions& opt) {
  if (left.size() != right.size()) input_error("calibrate", "left and right views must come in pairs");
  const cv::Size board(opt.cols, opt.rows);
  Calibration cal;
  std::vector<std::vector<cv::Point2f>> pts[2];
  cv::Size size;
  for (std::size_t i = 0; i < left.size(); ++i) {
    CalibrationView view{left[i], right[i], false, ""};
    std::vector<cv::Point2f> c[2];
    bool found = true;
    for (int k = 0; k < 2 && found; ++k) {
      const std::string& path = k ? right[i] : left[i];
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec)) input_error(path, "cannot open (no such file)");
      const cv::Mat gray = cv::imread(path, cv::IMREAD_GRAYSCALE);
      if (gray.empty()) input_error(path, "cannot read the image");
      if (size.area() == 0) size = gray.size();
      if (gray.size() != size)
        input_error(path, std::to_string(gray.cols) + "x" + std::to_string(gray.rows) + ", not " + std::to_string(size.width) + "x" +
                              std::to_string(size.height) + " as the first view");
      found = find_corners(gray, board, c[k]);
      if (!found) view.why = "no " + std::to_string(opt.cols) + "x" + std::to_string(opt.rows) + " board found in " + path;
    }
    if (found) {
      view.used = true;
      pts[0].push_back(c[0]);
      pts[1].push_back(c[1]);
    }
    cal.views.push_back(view);
  }
  if (pts[0].size() < 3)
    input_error("calibrate", std::to_string(pts[0].size()) + " of " + std::to_string(left.size()) +
                                 " views show the whole board in both images; at least 3 are needed");
  std::vector<std::vector<cv::Point3f>> obj(pts[0].size());
  for (auto& o : obj)
    for (int r = 0; r < opt.rows; ++r)
      for (int c = 0; c < opt.cols; ++c) o.emplace_back(static_cast<float>(c * opt.square), static_cast<float>(r * opt.square), 0.f);
  cv::Mat M[2], D[2], R, T, E, F;
  for (int k = 0; k < 2; ++k) M[k] = cv::initCameraMatrix2D(obj, pts[k], size, 0);
  Rig& rig = cal.rig;
  rig.rms = cv::stereoCalibrate(obj, pts[0], pts[1], M[0], D[0], M[1], D[1], size, R, T, E, F,
                                cv::CALIB_FIX_ASPECT_RATIO | cv::CALIB_ZERO_TANGENT_DIST | cv::CALIB_USE_INTRINSIC_GUESS |
                                    cv::CALIB_SAME_FOCAL_LENGTH | cv::CALIB_RATIONAL_MODEL | cv::CALIB_FIX_K3 | cv::CALIB_FIX_K4 |
                                    cv::CALIB_FIX_K5,
                                cv::TermCriteria(cv::TermCriteria::COUNT + cv::TermCriteria::EPS, 100, 1e-5));
  rig.epipolar = epipolar_error(pts, M, D, F);
  cv::Mat R1, R2, P1, P2, Q;
  cv::stereoRectify(M[0], D[0], M[1], D[1], size, R, T, R1, R2, P1, P2, Q, cv::CALIB_ZERO_DISPARITY, 1, size);
  rig.width = size.width;
  rig.height = size.height;
  from_mat(M[0], rig.M1);
  from_mat(M[1], rig.M2);
  rig.D1 = vec_of(D[0]);
  rig.D2 = vec_of(D[1]);
  from_mat(R, rig.R);
  from_mat(T, rig.T);
  from_mat(E, rig.E);
  from_mat(F, rig.F);
  from_mat(R1, rig.R1);
  from_mat(R2, rig.R2);
  from_mat(P1, rig.P1);
  from_mat(P2, rig.P2);
  from_mat(Q, rig.Q);
  rig.views_used = static_cast<int>(pts[0].size());
  return cal;
}

Rectifier::Rectifier(const Rig& rig) {
  auto m = std::make_shared<RectifyMaps>();
  m->width = rig.width;
  m->height = rig.height;
  for (int k = 0; k < 2; ++k) {  // per camera: the raw position each rectified pixel takes
    cv::Mat x, y;
    cv::initUndistortRectifyMap(mat_of(k ? rig.M2 : rig.M1, 3), cv::Mat(k ? rig.D2 : rig.D1, true), mat_of(k ? rig.R2 : rig.R1, 3),
                                mat_of(k ? rig.P2 : rig.P1, 3), cv::Size(rig.width, rig.height), CV_32FC1, x, y);
    m->x[k].assign(x.ptr<float>(), x.ptr<float>() + x.total());
    m->y[k].assign(y.ptr<float>(), y.ptr<float>() + y.total());
  }
  maps_ = std::move(m);
}

void Rectifier::apply_one(int k, Image16& im) const { rectify_image(*maps_, k, im); }

void Rectifier::apply(Image16& left, Image16& right) const {
  apply_one(0, left);
  apply_one(1, right);
}

void write_rig(const Rig& rig, const std::string& path) {
  AtomicOutput out(path, ".yml");
  {
    cv::FileStorage fs(out.temp_path().string(), cv::FileStorage::WRITE | cv::FileStorage::FORMAT_YAML);
    if (!fs.isOpened()) input_error(path, "cannot write");
    fs << "width" << rig.width << "height" << rig.height;
    fs << "M1" << mat_of(rig.M1, 3) << "D1" << cv::Mat(rig.D1, true).t() << "M2" << mat_of(rig.M2, 3)
       << "D2" << cv::Mat(rig.D2, true).t();
    fs << "R" << mat_of(rig.R, 3) << "T" << mat_of(rig.T, 3) << "E" << mat_of(rig.E, 3) << "F" << mat_of(rig.F, 3);
    fs << "R1" << mat_of(rig.R1, 3) << "R2" << mat_of(rig.R2, 3) << "P1" << mat_of(rig.P1, 3) << "P2" << mat_of(rig.P2, 3)
       << "Q" << mat_of(rig.Q, 4);
    fs << "rms" << rig.rms << "epipolar_error" << rig.epipolar << "views_used" << rig.views_used;
  }
  out.commit();
}

Rig read_rig(const std::string& path) {
  std::error_code ec;  // (OpenCV logs a missing file on stderr itself: checked here first)
  if (!std::filesystem::is_regular_file(path, ec)) input_error(path, "cannot open the rig file (no such file)");
  cv::FileStorage fs;
  try {
    if (!fs.open(path, cv::FileStorage::READ)) input_error(path, "cannot open the rig file");
  } catch (const cv::Exception&) {
    input_error(path, "not a rig file (OpenCV FileStorage YAML/XML expected)");
  }
  Rig rig;
  auto mat = [&](const char* name) {
    cv::Mat m;
    fs[name] >> m;
    if (m.empty()) input_error(path, std::string("no ") + name + " in the rig file");
    return m;
  };
  try {
    fs["width"] >> rig.width;
    fs["height"] >> rig.height;
    if (rig.width <= 0 || rig.height <= 0) input_error(path, "no width and height in the rig file");
    from_mat(mat("M1"), rig.M1);
    from_mat(mat("M2"), rig.M2);
    rig.D1 = vec_of(mat("D1"));
    rig.D2 = vec_of(mat("D2"));
    from_mat(mat("R"), rig.R);
    from_mat(mat("T"), rig.T);
    from_mat(mat("R1"), rig.R1);
    from_mat(mat("R2"), rig.R2);
    from_mat(mat("P1"), rig.P1);
    from_mat(mat("P2"), rig.P2);
    from_mat(mat("Q"), rig.Q);
  } catch (const std::invalid_argument& e) {
    input_error(path, std::string("a matrix of the wrong size: ") + e.what());
  } catch (const cv::Exception&) {
    input_error(path, "a field of the rig file is not a matrix");
  }
  fs["rms"] >> rig.rms;
  fs["epipolar_error"] >> rig.epipolar;
  fs["views_used"] >> rig.views_used;
  return rig;
}
#endif

}  // namespace evk::stereo
