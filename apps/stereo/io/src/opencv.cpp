// Any image OpenCV reads, as grey (only in builds with OpenCV).
#include "evk/error.hpp"
#include "evk/quiet_stderr.hpp"
#include "io/src/detail.hpp"

#if defined(EVK_HAVE_OPENCV)
#include <algorithm>
#include <fstream>
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

#if defined(EVK_HAVE_OPENCV)
namespace {
// libjpeg decodes a cut file with a grey bottom and a warning only: a PNG or JPEG must end where
// its format says it ends (and the codecs' own messages are kept off stderr, evk::QuietStderr).
void check_complete(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string head(8, '\0');
  in.read(head.data(), 8);
  in.clear();
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::streamoff>(in.tellg());
  auto tail = [&](std::streamoff n) {
    std::string t(static_cast<std::size_t>(std::min<std::streamoff>(n, size)), '\0');
    in.seekg(size - static_cast<std::streamoff>(t.size()));
    in.read(t.data(), static_cast<std::streamsize>(t.size()));
    return t;
  };
  if (head.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0) {
    if (tail(12) != std::string("\0\0\0\0IEND\xae\x42\x60\x82", 12))
      input_error(p.string(), "truncated PNG (no IEND chunk at the end)");
  } else if (static_cast<unsigned char>(head[0]) == 0xff && static_cast<unsigned char>(head[1]) == 0xd8) {
    std::string t = tail(2);
    if (t != "\xff\xd9") input_error(p.string(), "truncated JPEG (no end-of-image marker at the end)");
  }
}
}  // namespace
#endif

Gray read_opencv(const std::filesystem::path& p, bool any_depth) {
#if defined(EVK_HAVE_OPENCV)
  check_complete(p);
  cv::Mat m;
  try {
    evk::QuietStderr quiet;
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
