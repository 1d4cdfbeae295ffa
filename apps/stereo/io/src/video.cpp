#include "io/video.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

#include "evk/error.hpp"
#include "evk/quiet_stderr.hpp"

#if defined(EVK_HAVE_OPENCV_VIDEOIO)
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#endif

namespace evk::stereo {

bool have_video() {
#if defined(EVK_HAVE_OPENCV_VIDEOIO)
  return true;
#else
  return false;
#endif
}

bool looks_like_video(const std::filesystem::path& p) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* v : {".avi", ".mp4", ".mkv", ".mov", ".webm", ".mjpeg", ".mjpg", ".mpg", ".mpeg", ".m4v", ".wmv"})
    if (e == v) return true;
  return false;
}

#if defined(EVK_HAVE_OPENCV_VIDEOIO)
namespace {
struct Video {
  std::filesystem::path path;
  cv::VideoCapture cap;
  int width = 0, height = 0, frames = 0;
};

void open(Video& v) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(v.path, ec)) input_error(v.path.string(), "no such file");
  {
    evk::QuietStderr quiet;  // the backends' own messages
    v.cap.open(v.path.string());
  }
  if (!v.cap.isOpened()) input_error(v.path.string(), "not a video OpenCV can read");
  v.width = static_cast<int>(v.cap.get(cv::CAP_PROP_FRAME_WIDTH));
  v.height = static_cast<int>(v.cap.get(cv::CAP_PROP_FRAME_HEIGHT));
  v.frames = static_cast<int>(v.cap.get(cv::CAP_PROP_FRAME_COUNT));
  if (v.frames <= 0) {  // no count in the container: read through a second capture
    cv::VideoCapture c;
    evk::QuietStderr quiet;
    c.open(v.path.string());
    v.frames = 0;
    while (c.grab()) ++v.frames;
  }
  if (v.width <= 0 || v.height <= 0 || v.frames <= 0) input_error(v.path.string(), "a video without frames");
}

void next_frame(Video& v, int i, cv::Mat& grey) {
  cv::Mat m;
  bool ok = false;
  {
    evk::QuietStderr quiet;
    ok = v.cap.read(m);
  }
  if (!ok || m.empty())
    input_error(v.path.string(), "frame " + std::to_string(i) + " of " + std::to_string(v.frames) + " cannot be read");
  if (m.cols != v.width || m.rows != v.height)
    input_error(v.path.string(), "frame " + std::to_string(i) + " is " + std::to_string(m.cols) + "x" + std::to_string(m.rows) +
                                     ", the video " + std::to_string(v.width) + "x" + std::to_string(v.height));
  if (m.depth() != CV_8U) input_error(v.path.string(), "frames deeper than 8 bits are not supported");
  if (m.channels() == 1) grey = m;
  else if (m.channels() == 3) cv::cvtColor(m, grey, cv::COLOR_BGR2GRAY);
  else if (m.channels() == 4) cv::cvtColor(m, grey, cv::COLOR_BGRA2GRAY);
  else input_error(v.path.string(), "frames with " + std::to_string(m.channels()) + " channels");
}

Image16 to_image(const cv::Mat& grey, int x0, int w) {
  Image16 im;
  im.width = w;
  im.height = grey.rows;
  im.maxval = 255;
  im.pixels.resize(static_cast<std::size_t>(w) * grey.rows);
  for (int y = 0; y < grey.rows; ++y) {
    const std::uint8_t* row = grey.ptr<std::uint8_t>(y) + x0;
    std::copy(row, row + w, im.pixels.begin() + static_cast<std::ptrdiff_t>(y) * w);
  }
  return im;
}
}  // namespace

struct VideoPair::Impl {
  Video left, right;
  bool sbs = false;
};

VideoPair::VideoPair(const std::filesystem::path& left, const std::filesystem::path& right) : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.left.path = left;
  d.sbs = right.empty();
  open(d.left);
  width_ = d.left.width;
  height_ = d.left.height;
  frames_ = d.left.frames;
  if (d.sbs) {
    if (width_ % 2) input_error(left.string(), "side by side needs an even width, the video is " + std::to_string(width_) + " wide");
    width_ /= 2;
    return;
  }
  d.right.path = right;
  open(d.right);
  if (d.right.width != d.left.width || d.right.height != d.left.height)
    input_error(left.string() + ", " + right.string(),
                "left and right videos differ in frame size (" + std::to_string(d.left.width) + "x" + std::to_string(d.left.height) +
                    " vs " + std::to_string(d.right.width) + "x" + std::to_string(d.right.height) + ")");
  if (d.right.frames != d.left.frames)
    input_error(left.string() + ", " + right.string(), "left and right videos differ in length (" + std::to_string(d.left.frames) +
                                                           " vs " + std::to_string(d.right.frames) + " frames)");
}

void VideoPair::read(int i, Image16& left, Image16& right) {
  Impl& d = *impl_;
  if (i < next_) throw std::logic_error("VideoPair::read: frames are read in order");
  cv::Mat l, r;
  for (; next_ < i; ++next_) {  // frames before i: decoded and dropped
    next_frame(d.left, next_, l);
    if (!d.sbs) next_frame(d.right, next_, r);
  }
  ++next_;
  next_frame(d.left, i, l);
  if (d.sbs) {
    left = to_image(l, 0, width_);
    right = to_image(l, width_, width_);
    return;
  }
  next_frame(d.right, i, r);
  left = to_image(l, 0, width_);
  right = to_image(r, 0, width_);
}
#else
struct VideoPair::Impl {};
VideoPair::VideoPair(const std::filesystem::path& left, const std::filesystem::path&) {
  input_error(left.string(), "this build reads no video files (no OpenCV videoio); give numbered frames or two directories");
}
void VideoPair::read(int, Image16&, Image16&) {}
#endif

VideoPair::~VideoPair() = default;

}  // namespace evk::stereo
