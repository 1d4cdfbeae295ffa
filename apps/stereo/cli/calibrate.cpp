// stereo calibrate: chessboard views of a rig -> the rig file (io/rig.hpp), with a line per view
// rejected and the calibration's errors.
#include <cmath>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "evk/error.hpp"
#include "io/rig.hpp"

namespace stereo_cli {

void add_calibrate_command(CLI::App& app, CalibrateCmd& c) {
  auto* cmd = app.add_subcommand("calibrate", "Calibrate a stereo rig from chessboard views: intrinsics, distortion, "
                                              "pose and rectification, as OpenCV FileStorage YAML for --rig");
  cmd->add_option("VIEWS", c.views, "Images in pairs: LEFT1 RIGHT1 LEFT2 RIGHT2 ...")->required();
  cmd->add_option("-o,--output", c.out, "Rig file (.yml)")->required();
  cmd->add_option("--board", c.board, "Inner corners of the chessboard, COLSxROWS")->capture_default_str();
  cmd->add_option("--square", c.opt.square, "Size of a square: the unit of T, depth and points")->capture_default_str();
  cmd->add_flag("--json", c.json, "Machine-readable summary on stdout");
  cmd->callback([&c] { run_calibrate(c); });
}

void run_calibrate(CalibrateCmd& c) {
  if (std::sscanf(c.board.c_str(), "%dx%d", &c.opt.cols, &c.opt.rows) != 2 || c.opt.cols < 2 || c.opt.rows < 2)
    evk::input_error("--board", "'" + c.board + "' is not COLSxROWS (inner corners, each at least 2)");
  if (!(c.opt.square > 0)) evk::input_error("--square", "must be positive");
  if (c.views.size() % 2) evk::input_error("VIEWS", std::to_string(c.views.size()) + " images: they must come in left/right pairs");
  std::vector<std::string> left, right;
  for (std::size_t i = 0; i < c.views.size(); i += 2) {
    left.push_back(c.views[i]);
    right.push_back(c.views[i + 1]);
  }
  probe_writable(c.out);
  const evk::stereo::Calibration cal = evk::stereo::calibrate_rig(left, right, c.opt);
  const evk::stereo::Rig& rig = cal.rig;
  evk::stereo::write_rig(rig, c.out);
  const double baseline = std::sqrt(rig.T[0] * rig.T[0] + rig.T[1] * rig.T[1] + rig.T[2] * rig.T[2]);
  if (c.json) {
    nlohmann::json j = {{"views", cal.views.size()}, {"views_used", rig.views_used}, {"rms", rig.rms},
                        {"epipolar_error", rig.epipolar}, {"baseline", baseline}, {"width", rig.width},
                        {"height", rig.height}, {"focal", rig.M1[0]}, {"output", c.out}};
    for (const auto& v : cal.views)
      if (!v.used) j["rejected"].push_back({{"left", v.left}, {"right", v.right}, {"why", v.why}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  for (const auto& v : cal.views)
    if (!v.used) std::printf("view %s / %s left out: %s\n", v.left.c_str(), v.right.c_str(), v.why.c_str());
  std::printf("%d of %zu views used, %dx%d; RMS reprojection error %.4f px, epipolar error %.4f px; focal %.1f px, "
              "baseline %.4f (units of --square)\nwrote %s\n",
              rig.views_used, cal.views.size(), rig.width, rig.height, rig.rms, rig.epipolar, rig.M1[0], baseline, c.out.c_str());
}

}  // namespace stereo_cli
