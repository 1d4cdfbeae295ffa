// Stereo video files, read through OpenCV's VideoCapture (builds with OpenCV's videoio module): two
// files (the left and the right camera) or one side-by-side file (the left half and the right half
// of each frame). Frames are decoded in order and converted to grey as read_gray16 converts a colour
// image (ITU-R 601 weights; 8-bit values, maxval 255). Every problem is an InputError naming the file.
#pragma once
#include <filesystem>
#include <memory>

#include "core/sgm.hpp"

namespace evk::stereo {

bool have_video();  // whether this build reads video files
// A name a video file has (.avi, .mp4, .mkv, .mov, .webm, .mjpeg, .mpg, .mpeg, .m4v, .wmv).
bool looks_like_video(const std::filesystem::path& p);

class VideoPair {
 public:
  // right empty: `left` is side by side (an even width). Opens the files and counts their frames
  // (the container's count, else by reading through); two files must have the same frame size and
  // count.
  VideoPair(const std::filesystem::path& left, const std::filesystem::path& right);
  ~VideoPair();
  VideoPair(const VideoPair&) = delete;
  VideoPair& operator=(const VideoPair&) = delete;
  int width() const { return width_; }  // of one camera's frame
  int height() const { return height_; }
  int frames() const { return frames_; }
  // Frame i: the next one or a later one (those before it are decoded and dropped).
  void read(int i, Image16& left, Image16& right);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int width_ = 0, height_ = 0, frames_ = 0, next_ = 0;
};

}  // namespace evk::stereo
