// stereo command line: main() wires the commands (cli/: their options, runs and printing); the work
// lives in core/ (the Matcher facade) and io/.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/ssd_gpu.hpp"
#include "evk/cli.hpp"
#include "evk/error.hpp"
#include "evk/gi/cli.hpp"
#include "gi/gi_problem.hpp"
#include "gi/sgm_gi_problem.hpp"

using namespace evk::stereo;
using namespace stereo_cli;

int main(int argc, char** argv) {
  auto app = evk::make_app("stereo", "Disparity maps from rectified stereo pairs: Stam's block matcher (genetically "
                                     "improved per GPU) or semi-global matching, with LR check and sub-pixel refinement");

  DisparityCmd dc;
  auto* dcmd = app->add_subcommand("disparity", "Disparity map of a rectified stereo pair (or a raw one with --rig), depth and points");
  dcmd->add_option("LEFT", dc.left, "Left image (PGM/PPM, or any format OpenCV reads)")->required();
  dcmd->add_option("RIGHT", dc.right, "Right image")->required();
  dcmd->add_option("-o,--output", dc.out, "Output: .pfm (float, invalid +inf), .png or .pgm (16-bit, invalid 0)")
      ->required();
  dcmd->add_option("--color", dc.color, "Also write a colour visualisation (.png; invalid black)");
  dcmd->add_option("--right-output", dc.right_out, "Also write the right image's disparity map (whole pixels)");
  dcmd->add_option("--rig", dc.rig, "Rig file from `stereo calibrate`: the pair is raw and is rectified first");
  dcmd->add_option("--depth", dc.depth, "Also write metric depth (.pfm, +inf where none; needs --rig)");
  dcmd->add_option("--points", dc.points, "Also write the 3-D points, coloured (binary .ply; needs --rig)");
  dcmd->add_option("--rectified", dc.rectified, "Also write the rectified pair: LEFT.pgm RIGHT.pgm (the raw images' "
                                                "depth; needs --rig)")
      ->expected(2);
  add_match_options(dcmd, dc.o);
  dcmd->callback([&] { run_disparity(dc); });

  CalibrateCmd cc;
  add_calibrate_command(*app, cc);

  EvalCmd ec;
  auto* ecmd = app->add_subcommand("eval", "Bad-pixel rates of a disparity map against ground truth");
  ecmd->add_option("DISP", ec.disp, "Disparity map (.pfm, or 16-bit .png/.pgm divided by --disp-scale)")->required();
  ecmd->add_option("GT", ec.gt, "Ground truth (grey image divided by --gt-scale, 0 = unknown; or .pfm)")->required();
  ecmd->add_option("--gt-scale", ec.gt_scale, "Ground-truth scale (Tsukuba 16, Venus 8, aloe 1)")->required();
  ecmd->add_option("--disp-scale", ec.disp_scale, "Scale of a .png/.pgm disparity map")->capture_default_str();
  ecmd->add_option("--mask", ec.mask, "Evaluate only where this mask is 255 (e.g. nonocc.png)");
  ecmd->add_option("--thresholds", ec.thresholds, "Bad-pixel thresholds in pixels")->delimiter(',')->capture_default_str();
  ecmd->add_flag("--json", ec.json, "Machine-readable summary on stdout");
  ecmd->callback([&] { run_eval(ec); });

  BatchCmd bc;
  auto* bcmd = app->add_subcommand("batch", "Many pairs, overlapped (decode, GPU streams, encode): a PAIRS.txt "
                                            "('LEFT RIGHT [NAME]' per line) or a DIR with <name>L.<ext>/<name>R.<ext> pairs");
  bcmd->add_option("INPUT", bc.input, "PAIRS.txt or DIR")->required();
  add_frames_options(bcmd, bc.f);
  bcmd->callback([&] { run_batch(bc); });

  VideoCmd vc;
  auto* vcmd = app->add_subcommand("video", "A stereo video: numbered frames (left/%06d.png right/%06d.png), two "
                                            "directories of frames paired by name, two video files or one side by "
                                            "side (OpenCV builds); prints frames/s end to end");
  vcmd->add_option("LEFT", vc.left, "Left frames: a directory, a pattern with one %d, or a video file "
                                    "(alone: side by side, the left camera in the left half)")->required();
  vcmd->add_option("RIGHT", vc.right, "Right frames: a directory, a pattern with one %d, or a video file");
  vcmd->add_option("--first", vc.first, "First frame: its number in a pattern (default 0, else 1), or the frames of "
                                        "a video file to skip (default 0)");
  vcmd->add_option("--count", vc.count, "At most this many frames (0 = all)")->capture_default_str();
  add_frames_options(vcmd, vc.f);
  vcmd->callback([&] { run_video(vc); });

  evk::add_devices_command(*app, "stereo", [] { return make_registry(); });
  evk::gi::add_gi_command(*app, {{"ssd", "expert", "sgm"}, "ssd", evk::stereo::make_gi_problem_for_seed},
                          [] { return make_registry(); });
  return evk::run_cli(*app, argc, argv);
}
