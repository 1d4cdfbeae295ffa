// The stereo CLI's commands: their options (CLI11) and their runs (parse, call core/ and io/, print).
// main() (cli.cpp) wires them into the application.
#pragma once
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/matcher.hpp"
#include "evk/cli.hpp"
#include "io/io.hpp"
#include "io/rig.hpp"
#include "io/video.hpp"

namespace stereo_cli {

namespace fs = std::filesystem;
using clk = std::chrono::steady_clock;
inline double ms_since(clk::time_point t) { return std::chrono::duration<double, std::milli>(clk::now() - t).count(); }

// The matching options of disparity, batch and video: the facade's request plus the CLI's own.
struct MatchArgs : evk::stereo::MatchOptions {
  evk::stereo::WriteOptions write;
  evk::CommonOptions common;
  // The backend, kernel and device from the common options, then MatchOptions::finalize(): every
  // option checked before any file is read.
  void finalize();
  // --verbose lines of the facade.
  evk::stereo::MatchNote note() const;
};
void add_match_options(CLI::App* c, MatchArgs& o);

// One loaded pair at the file's depth; sizes checked.
struct Pair16 {
  evk::stereo::Image16 left, right;
};
Pair16 read_pair(const std::string& left, const std::string& right);

std::string pct(double v);  // "%.2f"
void probe_writable(const fs::path& p);

// ---- disparity
struct DisparityCmd {
  MatchArgs o;
  std::string left, right, out, color, right_out;
  std::string rig, depth, points;  // --rig: raw frames rectified first; --depth/--points need it
  std::vector<std::string> rectified;  // --rectified LEFT RIGHT: the rectified pair as PGM (needs --rig)
};
void run_disparity(DisparityCmd& c);

// ---- calibrate
struct CalibrateCmd {
  std::vector<std::string> views;
  std::string out, board = "9x6";
  evk::stereo::CalibrateOptions opt;
  bool json = false;
};
void add_calibrate_command(CLI::App& app, CalibrateCmd& c);
void run_calibrate(CalibrateCmd& c);

// ---- eval
struct EvalCmd {
  std::string disp, gt, mask;
  double gt_scale = 0, disp_scale = 256;
  std::vector<double> thresholds{1.0, 2.0};
  bool json = false;
};
void run_eval(const EvalCmd& c);

// ---- batch and video: many frames through the overlapped stream engine
struct FramesCmd {
  MatchArgs o;
  std::string outdir, format = "pfm";
  bool color = false;
  std::string rig;             // raw frames, rectified through this rig first
  bool depth = false, points = false;  // also <name>_depth.pfm, <name>.ply (need --rig)
  bool rectified = false;              // also <name>_rect_left.pgm, <name>_rect_right.pgm (needs --rig)
  int streams = 3, readers = 2, writers = 2;
};
void add_frames_options(CLI::App* c, FramesCmd& f);

// The frames of batch and video: image files (left[i], right[i] for names[i]), or the frames
// first, first + 1, ... of video files (left[0] and right[0], empty right for side by side).
struct FrameSource {
  std::vector<fs::path> left, right;
  std::vector<std::string> names;
  std::shared_ptr<evk::stereo::VideoPair> video;
  int first = 0;
};

struct BatchCmd {
  FramesCmd f;
  std::string input;
};
// PAIRS.txt ('LEFT RIGHT [NAME]' per line) or a directory of <name>L.<ext>/<name>R.<ext> pairs.
FrameSource batch_frames(const fs::path& input);
void run_batch(BatchCmd& c);

struct VideoCmd {
  FramesCmd f;
  std::string left, right;
  int first = -1, count = 0;
};
// Numbered frames (two printf patterns with one %d), two directories of frames paired by name, or
// video files (two, or one side by side: right empty).
FrameSource video_frames(const VideoCmd& c);
void run_video(VideoCmd& c);

}  // namespace stereo_cli
