// One call from images to a disparity map: the matching method by name, the backend (auto | cpu |
// gpu) and, on the GPU, the kernel variant (auto | original | evolved | genome FILE) chosen as the
// CLI chooses them. Used by the Python module (evokernels.stereo.disparity); no printing.
#pragma once
#include <string>
#include <vector>

#include "evk/stereo/sgm.hpp"
#include "evk/stereo/types.hpp"

namespace evk::stereo {

struct ComputeOptions {
  Params params;                 // ssd: window, min_ssd; both: the disparity range
  std::string method = "ssd";    // matching method; see methods()
  SgmParams sgm;                 // sgm: paths, p1, p2, window (--cost-window); range, cost and post set from the rest
  std::string cost = "census";   // sgm: census | sad | ssd
  std::string subpixel = "none"; // sgm: none | parabola | equiangular
  PostParams post;               // sgm: uniqueness, lr_check, median, speckle (subpixel from the string)
  std::string backend = "auto";  // auto | cpu | gpu
  std::string kernel = "auto";   // auto | original | evolved | genome FILE
  int device = 0;
  int threads = 0;               // CPU threads (<= 0: all cores)
};

struct ComputeInfo {
  std::string backend;   // "cpu" or "gpu"
  std::string kernel;    // variant id ("cpu-reference" on the CPU)
  std::string device;    // GPU name ("" on the CPU)
  std::string reason;    // why this backend (e.g. "no CUDA device: ...")
  double kernel_ms = 0;  // GPU kernel time (CUDA events)
};

// The matching methods this build has ("ssd": Stam's SSD block matcher, the paper's kernel;
// "sgm": semi-global matching with the CLI's post-processing).
std::vector<std::string> methods();

// Throws InputError naming the option (--method, --window, --backend gpu, --kernel ...) when the
// request cannot be met, as the CLI would.
DisparityMap compute_disparity(const Image8& left, const Image8& right, const ComputeOptions& opt,
                               ComputeInfo* info = nullptr);

// method "sgm": the left map in 1/16 pixel (kInvalidQ where none survived), exactly what
// `stereo disparity --method sgm` writes: sgm_cpu on the CPU, SgmPipeline on the GPU.
DisparityQ compute_sgm(const Image8& left, const Image8& right, const ComputeOptions& opt, ComputeInfo* info = nullptr);

}  // namespace evk::stereo
