// The one way in to stereo matching: a request (MatchOptions) in, disparity maps out, no printing.
// It picks the backend (auto | cpu | gpu), on the GPU the kernel variant (ssd: auto | original |
// evolved | expert | genome FILE) and runs ssd or sgm with the shared post-processing. Used by the
// CLI's disparity, batch and video commands and by the Python module alike.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/sgm.hpp"
#include "core/sgm_gpu.hpp"
#include "core/types.hpp"

namespace evk::stereo {

class FrameMatcher;

struct MatchOptions {
  std::string method = "ssd";     // see methods()
  Params params;                  // ssd: window, min_ssd; both: the disparity range
  SgmParams sgm;                  // sgm: paths, p1, p2, window (--cost-window); finalize() sets the rest
  std::string cost = "census";    // sgm: census | sad | ssd
  std::string subpixel = "none";  // none | parabola | equiangular
  PostParams post;                // uniqueness, lr_check, median, speckle, right (subpixel from the string)
  std::string backend = "auto";   // auto | cpu | gpu
  std::string kernel = "auto";    // auto | original | evolved | expert (ssd) | genome FILE
  int device = 0;
  int threads = 0;                // CPU threads (<= 0: all cores)
  SgmTuning tuning;               // sgm on the GPU: speed only, never the maps (bands, copy threads, ...)
  bool is_sgm() const { return method == "sgm"; }
  // Checks the method and backend names, parses cost and subpixel, validates everything and copies
  // the range, cost and post-processing into `sgm`: every InputError before any file is read.
  void finalize();
};

// What ran.
struct MatchInfo {
  std::string backend = "cpu";            // "cpu" or "gpu"
  std::string kernel = "cpu-reference";   // variant id ("cpu-reference", "sgm-original", "ssd-expert", ...)
  std::string device;                     // GPU name ("" on the CPU)
  std::string reason;                     // why this backend (e.g. "no CUDA device: ...")
  double kernel_ms = 0;                   // ssd on the GPU: the last kernel's time (CUDA events)
  bool rectifies = false;                 // frame_matcher: the frames go in raw (sgm on the GPU rectifies them)
};

// The matching methods this build has ("ssd": Stam's SSD block matcher, the paper's kernel;
// "sgm": semi-global matching).
std::vector<std::string> methods();

// Progress notes for --verbose (backend, kernel, device stages); the caller prints them.
using MatchNote = std::function<void(const std::string&)>;

// Computes disparities with the chosen method and backend; the GPU state is kept between calls.
class Matcher {
 public:
  // o: finalized options (kept by reference). width x height: the (first) pair's size, for the
  // kernel variant's applicability and size class. Throws InputError naming the option.
  // rectify: a rig's maps (core/rectify.hpp); run() then takes raw pairs and rectifies them, on the
  // device for sgm on the GPU (sgm_pixels_exact pairs), else on the host with remap_cpu: the same
  // pixels either way.
  Matcher(const MatchOptions& o, int width, int height, MatchNote note = {},
          std::shared_ptr<const RectifyMaps> rectify = nullptr);
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;
  // Pixels of any depth (maxval kept): ssd matches their 8-bit form; sgm's census keeps 16 bits.
  StereoResult run(const Image16& left, const Image16& right);
  const MatchInfo& info() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Many frames (batch, video) through the stream engine: sgm on the GPU in `streams` slots (each its
// own CUDA stream), anything else one frame at a time through a Matcher made for the size that
// first_size() returns (called only then). info: what runs.
// rectify: a rig's maps, which sgm on the GPU applies on the device to raw frames (info.rectifies);
// the other matchers take frames rectified before.
std::unique_ptr<FrameMatcher> frame_matcher(const MatchOptions& o, int streams,
                                            const std::function<std::pair<int, int>()>& first_size,
                                            MatchInfo& info, MatchNote note = {},
                                            std::shared_ptr<const RectifyMaps> rectify = nullptr);

}  // namespace evk::stereo
