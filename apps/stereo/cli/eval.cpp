// `stereo eval`: bad-pixel rates of a disparity map against ground truth.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "evk/error.hpp"
#include "core/eval.hpp"
#include "cli/commands.hpp"

namespace stereo_cli {

using namespace evk::stereo;

void run_eval(const EvalCmd& c) {
  if (!(c.gt_scale > 0)) evk::input_error("--gt-scale", "must be > 0");
  if (c.thresholds.empty()) evk::input_error("--thresholds", "at least one threshold");
  FloatMap d = read_disparity(c.disp, c.disp_scale);
  FloatMap g = read_disparity(c.gt, c.gt_scale);
  auto size = [](int w, int h) { return std::to_string(w) + "x" + std::to_string(h); };
  if (d.width != g.width || d.height != g.height)
    evk::input_error(c.gt, "size " + size(g.width, g.height) + " differs from the disparity map's " + size(d.width, d.height));
  Image8 mask;
  if (!c.mask.empty()) mask = read_mask(c.mask);
  if (!c.mask.empty() && (mask.width != g.width || mask.height != g.height))
    evk::input_error(c.mask, "size " + size(mask.width, mask.height) + " differs from the ground truth's " +
                                 size(g.width, g.height));
  EvalResult r = evaluate(d, g, c.mask.empty() ? nullptr : &mask, c.thresholds);
  if (c.json) {
    nlohmann::json j = {{"disparity", c.disp}, {"ground_truth", c.gt}, {"gt_scale", c.gt_scale},
                        {"pixels", r.pixels}, {"invalid_percent", r.percent(r.invalid)}, {"rms", r.rms}};
    if (!c.mask.empty()) j["mask"] = c.mask;
    for (std::size_t k = 0; k < r.thresholds.size(); ++k) {
      char key[32];
      std::snprintf(key, sizeof key, "bad_%.1f_percent", r.thresholds[k]);
      j[key] = r.percent(r.bad[k]);
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf("%s vs %s%s%s: %lld pixels with ground truth\n", c.disp.c_str(), c.gt.c_str(),
              c.mask.empty() ? "" : " in ", c.mask.c_str(), r.pixels);
  for (std::size_t k = 0; k < r.thresholds.size(); ++k)
    std::printf("  bad-%.1f  %6.2f %%\n", r.thresholds[k], r.percent(r.bad[k]));
  std::printf("  invalid  %6.2f %%\n  rms      %6.3f px\n", r.percent(r.invalid), r.rms);
}

}  // namespace stereo_cli
