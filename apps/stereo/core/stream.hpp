// Overlapped processing of many pairs (`stereo batch`, `stereo video`): pairs decoded on reader
// threads, matched on the device in several slots (each slot its own queue and pinned buffers, so the
// upload, kernels and download of one frame overlap those of the others), post-processed and encoded
// on writer threads. Libraries do not print: the caller gets StreamStats.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/sgm.hpp"
#include "core/sgm_gpu.hpp"

namespace evk::stereo {

// A decoded pair. prepare() (on the reader thread) may add the pixels in the form the matcher uploads.
struct Frame {
  int index = 0;
  Image16 left, right;  // full depth (maxval kept)
  int bits = 0;         // 8 or 16 when `bytes` holds the upload form
  std::vector<std::uint8_t> bytes[2];
  bool raw = false;     // `bytes` are the raw pair, which the matcher's device rectifies
};

// Matches frames in independent slots: submit() enqueues a frame on a slot, collect() waits for the
// slot's last frame and returns its maps.
class FrameMatcher {
 public:
  virtual ~FrameMatcher() = default;
  virtual int slots() const = 0;
  virtual void prepare(Frame&) const {}  // thread-safe; runs on reader threads
  virtual void submit(int slot, Frame& f) = 0;
  virtual StereoResult collect(int slot) = 0;
  virtual void finish(StereoResult&) const {}  // host-side post-processing; thread-safe, on writer threads
  // Device times of the slot's last frame (upload, kernels, download; 0 when unknown).
  virtual void device_times(int, double& up, double& kernels, double& down) const { up = kernels = down = 0; }
};

// SGM on GPU `device` with `slots` streams (uploads, kernels and downloads of different frames overlap).
// rectify: a rig's maps; the frames are then raw and rectified on the device (prepare() says how).
std::unique_ptr<FrameMatcher> sgm_gpu_matcher(const SgmParams& p, int device, int slots, SgmTuning t = {},
                                              std::shared_ptr<const RectifyMaps> rectify = nullptr);
// The same on any SgmDevice (one made per slot; tests use the CUDA emulator).
std::unique_ptr<FrameMatcher> sgm_device_matcher(const SgmParams& p, std::function<std::unique_ptr<SgmDevice>()> make,
                                                 int slots, SgmTuning t = {},
                                                 std::shared_ptr<const RectifyMaps> rectify = nullptr);
// Any synchronous function as a one-slot matcher (CPU backends, the SSD kernel).
std::unique_ptr<FrameMatcher> sync_matcher(std::function<StereoResult(const Frame&)> f);

struct StreamOptions {
  int readers = 2, writers = 2;
  int queue = 6;  // decoded frames waiting at most
};

struct StreamStats {
  long long frames = 0;
  double seconds = 0, fps = 0;
  // summed over frames (each stage's threads work in parallel)
  double read_ms = 0, submit_ms = 0, wait_ms = 0, write_ms = 0;
  double upload_ms = 0, kernel_ms = 0, download_ms = 0;  // device (CUDA events)
  int readers = 0, writers = 0, slots = 0;
  std::string bound;  // which stage limits the frame rate, from the per-frame times per thread
};

// Frames 0..n-1: load(i) on reader threads, the matcher on the calling thread, store(i, result) on
// writer threads (in any order). The first exception of any stage stops the run and is rethrown.
StreamStats run_stream(int n, const std::function<Frame(int)>& load, FrameMatcher& m,
                       const std::function<void(int, StereoResult&)>& store, const StreamOptions& o = {});

}  // namespace evk::stereo
