// `stereo disparity`: one pair through the facade, the maps written, a summary printed.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <tuple>
#include <nlohmann/json.hpp>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "cli/commands.hpp"
#include "io/points.hpp"

namespace stereo_cli {

using namespace evk::stereo;

namespace {
long long count_invalid(const DisparityQ& d) { return std::count(d.q.begin(), d.q.end(), kInvalidQ); }

// Every output checked (format, not an input, writable) before any file is read.
void check_outputs(DisparityCmd& c) {
  check_disparity_output(c.out, c.o.params.min_disparity, c.o.params.max_disparity, c.o.write);
  evk::check_not_an_input(c.out, {c.left, c.right});
  probe_writable(c.out);
  if (!c.right_out.empty()) {
    check_disparity_output(c.right_out, c.o.params.min_disparity, c.o.params.max_disparity, c.o.write);
    evk::check_not_an_input(c.right_out, {c.left, c.right, c.out});
    probe_writable(c.right_out);
  }
  if (!c.color.empty()) {
    if (fs::path(c.color).extension() != ".png") evk::input_error(c.color, "--color output must be a .png file");
    evk::check_not_an_input(c.color, {c.left, c.right, c.out});
    probe_writable(c.color);
  }
  std::vector<std::tuple<std::string, const char*, const char*>> rig_outputs = {{c.depth, ".pfm", "--depth"},
                                                                                {c.points, ".ply", "--points"}};
  for (const std::string& r : c.rectified) rig_outputs.emplace_back(r, ".pgm", "--rectified");
  if (c.rectified.size() == 2) evk::check_not_an_input(c.rectified[1], {c.rectified[0]});
  for (const auto& [path, ext, opt] : rig_outputs) {
    if (path.empty()) continue;
    if (c.rig.empty())
      evk::input_error(opt, std::string("needs --rig") + (path == c.depth || path == c.points ? " (the rig's baseline and focal length)" : ""));
    if (fs::path(path).extension() != ext) evk::input_error(path, std::string(opt) + " output must be a " + ext + " file");
    evk::check_not_an_input(path, {c.left, c.right, c.out, c.rig});
    probe_writable(path);
  }
}

struct Times {
  double read = 0, compute = 0, write = 0;
};

void print_summary(const DisparityCmd& c, const StereoResult& d, const MatchInfo& m, const Times& t) {
  const long long invalid = count_invalid(d.left);
  const int W = d.left.width, H = d.left.height;
  if (c.o.common.json) {
    nlohmann::json j = {{"left", c.left}, {"right", c.right}, {"output", c.out}, {"width", W}, {"height", H},
                        {"method", c.o.method}, {"min_disparity", c.o.params.min_disparity},
                        {"max_disparity", c.o.params.max_disparity}, {"backend", m.backend}, {"kernel", m.kernel},
                        {"device", m.device}, {"invalid_pixels", invalid},
                        {"uniqueness", c.o.post.uniqueness}, {"subpixel", c.o.subpixel},
                        {"lr_check", c.o.post.lr_check}, {"median", c.o.post.median},
                        {"speckle_size", c.o.post.speckle_size},
                        {"times_ms", {{"read", t.read}, {"compute", t.compute}, {"kernel", m.kernel_ms},
                                      {"write", t.write}}}};
    if (c.o.is_sgm()) {
      j["paths"] = c.o.sgm.paths;
      j["p1"] = c.o.sgm.p1;
      j["p2"] = c.o.sgm.p2;
      j["cost"] = c.o.cost;
    } else {
      j["window"] = c.o.params.window;
      j["min_ssd"] = c.o.params.min_ssd;
    }
    if (!c.color.empty()) j["color"] = c.color;
    if (!c.right_out.empty()) j["right_output"] = c.right_out;
    if (!c.rig.empty()) j["rig"] = c.rig;
    if (!c.depth.empty()) j["depth"] = c.depth;
    if (!c.points.empty()) j["points"] = c.points;
    if (!c.rectified.empty()) j["rectified"] = c.rectified;
    std::cout << j.dump(2) << "\n";
    return;
  }
  const std::string what = c.o.is_sgm() ? "sgm " + c.o.cost + " " + std::to_string(c.o.sgm.paths) + " paths"
                                        : "window " + std::to_string(c.o.params.window);
  std::printf("%s: %dx%d, disparities %d..%d, %s, %s (%s), %lld invalid pixels (%.2f%%)\n", c.out.c_str(), W, H,
              c.o.params.min_disparity, c.o.params.max_disparity, what.c_str(), m.backend.c_str(), m.kernel.c_str(),
              invalid, 100.0 * invalid / d.left.q.size());
}
}  // namespace

void run_disparity(DisparityCmd& c) {
  if (!c.right_out.empty()) c.o.post.right = true;
  c.o.finalize();
  check_outputs(c);
  Times t;
  auto t0 = clk::now();
  Rig rig;
  std::shared_ptr<const RectifyMaps> maps;
  if (!c.rig.empty()) {
    rig = read_rig(c.rig);
    maps = Rectifier(rig).maps();
  }
  Pair16 pr = read_pair(c.left, c.right);
  if (maps) check_rectify_size(*maps, pr.left.width, pr.left.height);
  t.read = ms_since(t0);
  evk::verbose_line(c.o.common, "read " + std::to_string(pr.left.width) + "x" + std::to_string(pr.left.height) +
                                    " pair (maxval " + std::to_string(pr.left.maxval) + ") in " + pct(t.read) + " ms");
  // with a rig the matcher takes the raw pair and rectifies it (sgm on the GPU: on the device)
  Matcher m(c.o, pr.left.width, pr.left.height, c.o.note(), maps);
  auto tc = clk::now();
  StereoResult d = m.run(pr.left, pr.right);
  t.compute = ms_since(tc);
  evk::verbose_line(c.o.common, "compute (" + c.o.method + ", " + m.info().backend + "): " + pct(t.compute) + " ms");
  auto t1 = clk::now();
  write_disparity(c.out, d.left, c.o.write);
  if (!c.right_out.empty()) write_disparity(c.right_out, d.right, c.o.write);
  if (!c.color.empty()) write_color_png(c.color, d.left, c.o.params.min_disparity, c.o.params.max_disparity);
  if (!c.depth.empty()) write_depth_pfm(c.depth, rig, d.left);
  if (maps && (!c.points.empty() || !c.rectified.empty())) {
    // the colours and --rectified: the pair rectified here by remap_cpu, which gives the device's
    // pixels bit for bit (tests/stereo/rectify_checks.hpp), rather than a download of the device's
    rectify_image(*maps, 0, pr.left);
    if (!c.rectified.empty()) rectify_image(*maps, 1, pr.right);
  }
  if (!c.points.empty()) write_points_ply(c.points, rig, d.left, pr.left);
  if (!c.rectified.empty()) {
    write_gray_pgm(c.rectified[0], pr.left);
    write_gray_pgm(c.rectified[1], pr.right);
  }
  t.write = ms_since(t1);
  evk::verbose_line(c.o.common, "write: " + pct(t.write) + " ms");
  print_summary(c, d, m.info(), t);
}

}  // namespace stereo_cli
