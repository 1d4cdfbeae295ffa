#include "evk/stereo/compute.hpp"

#include <algorithm>

#include "evk/cli.hpp"
#include "evk/error.hpp"
#include "evk/stereo/gpu.hpp"
#include "evk/stereo/reference.hpp"

namespace evk::stereo {

std::vector<std::string> methods() { return {"ssd"}; }

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

}  // namespace

DisparityMap compute_disparity(const Image8& left, const Image8& right, const ComputeOptions& opt, ComputeInfo* info) {
  const auto ms = methods();
  if (std::find(ms.begin(), ms.end(), opt.method) == ms.end()) {
    std::string have;
    for (const auto& m : ms) have += (have.empty() ? "" : ", ") + m;
    input_error("--method " + opt.method, "no such matching method in this build (available: " + have + ")");
  }
  if (opt.backend != "auto" && opt.backend != "cpu" && opt.backend != "gpu")
    input_error("--backend " + opt.backend, "must be auto, cpu or gpu");
  validate(opt.params);
  validate_pair(left, right, "left, right");
  ComputeInfo local;
  ComputeInfo& i = info ? *info : local;
  return run_ssd(left, right, opt, i);
}

}  // namespace evk::stereo
