// Any image OpenCV reads, as grey (only in builds with OpenCV).
#include "detail.hpp"
#include "evk/error.hpp"

#if defined(EVK_HAVE_OPENCV)
#include <opencv2/imgcodecs.hpp>
#endif

namespace evk::stereo {
bool have_opencv() {
#if defined(EVK_HAVE_OPENCV)
  return true;
#else
  return false;
#endif
}
}  // namespace evk::stereo

namespace evk::stereo::detail {

Gray read_opencv(const std::filesystem::path& p, bool any_depth) {
#if defined(EVK_HAVE_OPENCV)
  cv::Mat m;
  try {
    m = cv::imread(p.string(), any_depth ? (cv::IMREAD_GRAYSCALE | cv::IMREAD_ANYDEPTH) : cv::IMREAD_GRAYSCALE);
  } catch (const cv::Exception& e) {
    input_error(p.string(), "cannot read image: " + std::string(e.what()));
  }
  if (m.empty()) input_error(p.string(), "not an image OpenCV can read (or empty)");
  Gray g;
  g.width = m.cols;
  g.height = m.rows;
  g.v.resize(static_cast<std::size_t>(m.cols) * m.rows);
  if (m.depth() == CV_16U) {
    g.maxval = 65535;
    for (int y = 0; y < m.rows; ++y)
      for (int x = 0; x < m.cols; ++x) g.v[static_cast<std::size_t>(y) * m.cols + x] = m.at<std::uint16_t>(y, x);
  } else if (m.depth() == CV_8U) {
    for (int y = 0; y < m.rows; ++y)
      for (int x = 0; x < m.cols; ++x) g.v[static_cast<std::size_t>(y) * m.cols + x] = m.at<std::uint8_t>(y, x);
  } else {
    input_error(p.string(), "unsupported pixel depth (8 or 16 bit grey expected)");
  }
  return g;
#else
  (void)any_depth;
  input_error(p.string(), "this build reads only PGM/PPM/PFM (no OpenCV); convert the image to PGM");
#endif
}

}  // namespace evk::stereo::detail
