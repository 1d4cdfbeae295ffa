// `stereo batch` and `stereo video`: many frames through the overlapped stream engine (reader
// threads, the facade's frame matcher, writer threads), all outputs or none, a summary printed.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "core/stream.hpp"
#include "cli/commands.hpp"
#include "io/points.hpp"

namespace stereo_cli {

using namespace evk::stereo;

namespace {
void print_stats(const FramesCmd& c, const StreamStats& st, const MatchInfo& info, const char* unit) {
  const double f = static_cast<double>(std::max<long long>(1, st.frames));
  if (c.o.common.json) {
    std::cout << nlohmann::json{{"count", st.frames}, {"seconds", st.seconds}, {std::string(unit) + "_per_second", st.fps},
                                {"backend", info.backend}, {"kernel", info.kernel}, {"method", c.o.method},
                                {"bound", st.bound}, {"readers", st.readers}, {"writers", st.writers},
                                {"per_frame_ms", {{"read", st.read_ms / f}, {"submit", st.submit_ms / f},
                                                  {"wait", st.wait_ms / f}, {"upload", st.upload_ms / f},
                                                  {"kernels", st.kernel_ms / f}, {"download", st.download_ms / f},
                                                  {"write", st.write_ms / f}}}}
                     .dump(2)
              << "\n";
    return;
  }
  std::printf("%lld %s in %.3f s: %.2f %s/s end to end (%s, %s, %s)\n", st.frames, unit, st.seconds, st.fps, unit,
              c.o.method.c_str(), info.backend.c_str(), info.kernel.c_str());
  std::printf("  per frame: read %.2f ms x %d threads, match %.2f ms (device upload %.3f, kernels %.3f, download "
              "%.3f ms), write %.2f ms x %d threads; bound by %s\n",
              st.read_ms / f, st.readers, (st.submit_ms + st.wait_ms) / f, st.upload_ms / f, st.kernel_ms / f,
              st.download_ms / f, st.write_ms / f, st.writers, st.bound.c_str());
}

// Outputs written before a failing frame are removed again (all or nothing).
struct Written {
  std::mutex mu;
  std::vector<fs::path> files;
  bool done = false;
  void add(const fs::path& p) {
    std::lock_guard<std::mutex> lk(mu);
    files.push_back(p);
  }
  ~Written() {
    std::error_code e;
    if (!done)
      for (const auto& f : files) fs::remove(f, e);
  }
};

void run_frames(FramesCmd& c, const FrameSource& src, const char* unit) {
  const fs::path outdir(c.outdir);
  if (c.streams < 1 || c.readers < 1 || c.writers < 1) evk::input_error("--streams/--readers/--writers", "must be >= 1");
  MatchInfo info;
  const auto first_size = [&] {
    if (src.video) return std::pair<int, int>{src.video->width(), src.video->height()};
    const Pair16 first = read_pair(src.left.front().string(), src.right.front().string());
    return std::pair<int, int>{first.left.width, first.left.height};
  };
  if ((c.depth || c.points || c.rectified) && c.rig.empty())
    evk::input_error(c.depth ? "--depth" : c.points ? "--points" : "--rectified", "needs --rig");
  Rig rig;
  std::unique_ptr<Rectifier> rectify;
  if (!c.rig.empty()) {
    rig = read_rig(c.rig);
    rectify = std::make_unique<Rectifier>(rig);
  }
  // sgm on the GPU rectifies on the device: the readers then pass the raw frames on
  std::unique_ptr<FrameMatcher> fm =
      frame_matcher(c.o, c.streams, first_size, info, c.o.note(), rectify ? rectify->maps() : nullptr);
  const bool host_rectify = rectify && !info.rectifies;
  StreamOptions so;
  so.readers = src.video ? 1 : c.readers;  // a video decodes in order
  so.writers = c.writers;
  const int n = static_cast<int>(src.names.size());
  for (std::size_t i = 0; i < src.names.size(); ++i) {
    const std::size_t k = src.video ? 0 : i;
    std::vector<fs::path> inputs{src.left[k]};
    if (!src.right[k].empty()) inputs.push_back(src.right[k]);
    evk::check_not_an_input(outdir / (src.names[i] + "." + c.format), inputs);
    if (c.color) evk::check_not_an_input(outdir / (src.names[i] + "_color.png"), inputs);
    if (c.rectified)
      for (const char* side : {"_rect_left.pgm", "_rect_right.pgm"}) evk::check_not_an_input(outdir / (src.names[i] + side), inputs);
  }
  // --points, --rectified: each frame's rectified images (the left, or both), from its reader to its
  // writer. Where the device rectifies, the reader rectifies them too with remap_cpu, which gives the
  // device's pixels bit for bit (tests/stereo/rectify_checks.hpp), rather than downloading them.
  std::mutex rect_mu;
  std::map<int, Pair16> rectified;
  auto load = [&](int i) {
    Pair16 p;
    if (src.video) src.video->read(src.first + i, p.left, p.right);
    else p = read_pair(src.left[static_cast<std::size_t>(i)].string(), src.right[static_cast<std::size_t>(i)].string());
    if (host_rectify) rectify->apply(p.left, p.right);
    if (c.points || c.rectified) {
      Pair16 r;
      r.left = p.left;
      if (c.rectified) r.right = p.right;
      if (rectify && !host_rectify) {
        rectify->apply_one(0, r.left);
        if (c.rectified) rectify->apply_one(1, r.right);
      }
      std::lock_guard<std::mutex> lk(rect_mu);
      rectified[i] = std::move(r);
    }
    Frame f;
    f.left = std::move(p.left);
    f.right = std::move(p.right);
    return f;
  };
  Written written;
  auto store = [&](int i, StereoResult& r) {
    const std::string& name = src.names[static_cast<std::size_t>(i)];
    const fs::path out = outdir / (name + "." + c.format);
    written.add(out);
    if (c.color) written.add(outdir / (name + "_color.png"));
    write_disparity(out, r.left, c.o.write);
    if (c.color) write_color_png(outdir / (name + "_color.png"), r.left, c.o.params.min_disparity, c.o.params.max_disparity);
    if (c.depth) {
      written.add(outdir / (name + "_depth.pfm"));
      write_depth_pfm(outdir / (name + "_depth.pfm"), rig, r.left);
    }
    if (c.points || c.rectified) {
      Pair16 rp;
      {
        std::lock_guard<std::mutex> lk(rect_mu);
        rp = std::move(rectified.at(i));
        rectified.erase(i);
      }
      if (c.points) {
        written.add(outdir / (name + ".ply"));
        write_points_ply(outdir / (name + ".ply"), rig, r.left, rp.left);
      }
      if (c.rectified) {
        written.add(outdir / (name + "_rect_left.pgm"));
        write_gray_pgm(outdir / (name + "_rect_left.pgm"), rp.left);
        written.add(outdir / (name + "_rect_right.pgm"));
        write_gray_pgm(outdir / (name + "_rect_right.pgm"), rp.right);
      }
    }
  };
  const StreamStats st = run_stream(n, load, *fm, store, so);
  written.done = true;
  print_stats(c, st, info, unit);
}

void check_outdir(FramesCmd& c) {
  c.o.finalize();
  std::error_code ec;
  if (!fs::is_directory(fs::path(c.outdir), ec)) evk::input_error(c.outdir, "output directory does not exist");
  check_disparity_output(fs::path(c.outdir) / ("x." + c.format), c.o.params.min_disparity, c.o.params.max_disparity,
                         c.o.write);
}
}  // namespace

void run_batch(BatchCmd& c) {
  check_outdir(c.f);
  run_frames(c.f, batch_frames(c.input), "pairs");
}

void run_video(VideoCmd& c) {
  check_outdir(c.f);
  run_frames(c.f, video_frames(c), "frames");
}

}  // namespace stereo_cli
