#include "evk/stereo/compute.hpp"

#include <algorithm>
#include <memory>

#include "evk/cli.hpp"
#include "evk/error.hpp"
#include "evk/stereo/gpu.hpp"
#include "evk/stereo/reference.hpp"
#include "evk/stereo/sgm_gpu.hpp"

namespace evk::stereo {

std::vector<std::string> methods() { return {"ssd", "sgm"}; }

namespace {

// Stam's SSD block matcher on the chosen backend (the CLI's Matcher, without printing).
DisparityMap run_ssd(const Image8& l, const Image8& r, const ComputeOptions& o, ComputeInfo& info) {
  CommonOptions c;
  c.backend = o.backend;
  c.kernel = o.kernel;
  c.device = o.device;
  // A genome file is checked first, so a bad one is reported as such with or without a GPU.
  if (is_genome_file_choice(o.kernel)) make_kernel_variant(select_variant(o.kernel, DeviceInfo{}).variant);
  const BackendChoice b = choose_backend(c);
  info.reason = b.reason;
  if (b.backend == Backend::gpu) {
    const Selection s = select_variant(o.kernel, b.device);
    GpuBackend gpu(o.device, make_kernel_variant(s.variant));
    GpuTimes t;
    DisparityMap d = gpu.run(l, r, o.params, &t);
    info.backend = "gpu";
    info.kernel = s.variant.id;
    info.device = b.device.name;
    info.kernel_ms = t.kernel_ms;
    return d;
  }
  if (o.kernel != "auto" && o.kernel != "original")
    input_error("--kernel " + o.kernel, "kernel variants need the GPU backend");
  info.backend = "cpu";
  info.kernel = "cpu-reference";
  return disparity_cpu(l, r, o.params, o.threads);
}

void check_method(const ComputeOptions& opt) {
  const auto ms = methods();
  if (std::find(ms.begin(), ms.end(), opt.method) == ms.end()) {
    std::string have;
    for (const auto& m : ms) have += (have.empty() ? "" : ", ") + m;
    input_error("--method " + opt.method, "no such matching method in this build (available: " + have + ")");
  }
  if (opt.backend != "auto" && opt.backend != "cpu" && opt.backend != "gpu")
    input_error("--backend " + opt.backend, "must be auto, cpu or gpu");
}

}  // namespace

DisparityMap compute_disparity(const Image8& left, const Image8& right, const ComputeOptions& opt, ComputeInfo* info) {
  check_method(opt);
  if (opt.method != "ssd") input_error("--method " + opt.method, "gives a sub-pixel map: use compute_sgm");
  validate(opt.params);
  validate_pair(left, right, "left, right");
  ComputeInfo local;
  ComputeInfo& i = info ? *info : local;
  return run_ssd(left, right, opt, i);
}

DisparityQ compute_sgm(const Image8& left, const Image8& right, const ComputeOptions& opt, ComputeInfo* info) {
  check_method(opt);
  if (opt.method != "sgm") input_error("--method " + opt.method, "compute_sgm runs --method sgm");
  // The CLI's MatchOptions::finalize for sgm: every option checked before any work.
  SgmParams p = opt.sgm;
  PostParams post = opt.post;
  post.subpixel = parse_subpixel(opt.subpixel);
  post.right = false;
  validate(post);
  p.min_disparity = opt.params.min_disparity;
  p.max_disparity = opt.params.max_disparity;
  p.cost = parse_cost(opt.cost);
  p.post = post;
  validate(p);
  validate_pair(left, right, "left, right");
  if (opt.kernel != "auto" && opt.kernel != "original")
    input_error("--kernel " + opt.kernel, "kernel variants apply to --method ssd");
  ComputeInfo local;
  ComputeInfo& i = info ? *info : local;
  CommonOptions c;
  c.backend = opt.backend;
  c.kernel = opt.kernel;
  c.device = opt.device;
  const BackendChoice b = choose_backend(c);
  i.reason = b.reason;
  // The CLI reads 8-bit files as 16-bit images of maxval 255 and runs those overloads.
  const Image16 l = to_image16(left), r = to_image16(right);
  if (b.backend == Backend::gpu) {
    i.backend = "gpu";
    i.kernel = "sgm-original";
    i.device = b.device.name;
    const std::unique_ptr<SgmDevice> dev = cuda_sgm_device(opt.device);
    SgmPipeline pipeline(*dev, p, l.width, l.height, 8);  // 8-bit pixels (maxval 255), as the CLI's
    return pipeline.run(l, r).left;
  }
  i.backend = "cpu";
  i.kernel = "sgm-cpu-reference";
  return sgm_cpu(l, r, p, opt.threads).left;
}

}  // namespace evk::stereo
