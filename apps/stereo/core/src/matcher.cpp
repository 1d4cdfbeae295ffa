// The stereo facade (matcher.hpp): backend and kernel choice, then ssd or sgm on the CPU reference,
// Stam's kernel variants, the expert SSD kernel or the SGM pipeline.
#include "core/matcher.hpp"

#include <algorithm>
#include <cstdio>

#include "core/ssd.hpp"
#include "core/ssd_expert.hpp"
#include "core/ssd_gpu.hpp"
#include "core/stream.hpp"
#include "evk/cli.hpp"
#include "evk/error.hpp"

namespace evk::stereo {

std::vector<std::string> methods() { return {"ssd", "sgm"}; }

void MatchOptions::finalize() {
  const auto ms = methods();
  if (std::find(ms.begin(), ms.end(), method) == ms.end()) {
    std::string have;
    for (const auto& m : ms) have += (have.empty() ? "" : ", ") + m;
    input_error("--method " + method, "no such matching method in this build (available: " + have + ")");
  }
  if (backend != "auto" && backend != "cpu" && backend != "gpu") input_error("--backend " + backend, "must be auto, cpu or gpu");
  if (tuning.bands < 0) input_error("--bands", "must be >= 0");
  if (tuning.copy_threads < 0) input_error("--copy-threads", "must be >= 0");
  if (tuning.copy_chunk_kib < 0) input_error("--copy-chunk", "must be >= 0");
  post.subpixel = parse_subpixel(subpixel);
  validate(post);
  if (is_sgm()) {
    sgm.min_disparity = params.min_disparity;
    sgm.max_disparity = params.max_disparity;
    sgm.cost = parse_cost(cost);
    sgm.post = post;
    validate(sgm);
  } else {
    validate(params);
  }
}

namespace {
CommonOptions common_of(const MatchOptions& o) {
  CommonOptions c;
  c.backend = o.backend;
  c.kernel = o.kernel;
  c.device = o.device;
  return c;
}
bool plain_kernel(const std::string& k) { return k == "auto" || k == "original"; }
}  // namespace

struct Matcher::Impl {
  const MatchOptions& o;
  MatchNote note;
  std::shared_ptr<const RectifyMaps> rect;
  MatchInfo info;
  std::unique_ptr<GpuBackend> gpu;
  std::unique_ptr<SgmDevice> dev;  // sgm and the expert SSD kernel
  std::unique_ptr<SgmPipeline> pipeline;
  bool pipeline_rectifies = false;
  std::unique_ptr<SsdExpert> expert;

  void say(const std::string& s) const {
    if (note) note(s);
  }
  void choose(int width, int height);
  StereoResult run_ssd(const Image16& left, const Image16& right);
  DisparityMap run_ssd_gpu(const Image8& l, const Image8& r);
  StereoResult run_sgm(const Image16& left, const Image16& right);
};

void Matcher::Impl::choose(int width, int height) {
  const Request request = make_request(o.params, width, height);
  // A genome file is checked before anything else, so a bad one is reported as such with or
  // without a GPU (reading and applying a genome needs no device).
  const bool expert_kernel = !o.is_sgm() && o.kernel == "expert";
  if (!o.is_sgm() && !expert_kernel && is_genome_file_choice(o.kernel))
    make_kernel_variant(select_variant(o.kernel, DeviceInfo{}, request).variant);
  if (o.is_sgm() && !plain_kernel(o.kernel))
    throw InputError("--kernel " + o.kernel + ": kernel variants apply to --method ssd");
  const BackendChoice b = choose_backend(common_of(o));
  info.reason = b.reason;
  say("backend: " + b.reason);
  if (b.backend != Backend::gpu) {
    if (!o.is_sgm() && !plain_kernel(o.kernel))
      throw InputError("--kernel " + o.kernel + ": kernel variants need the GPU backend");
    info.kernel = o.is_sgm() ? "sgm-cpu-reference" : "cpu-reference";
    return;
  }
  info.backend = "gpu";
  info.device = b.device.name;
  if (o.is_sgm()) {
    dev = cuda_sgm_device(o.device);
    info.kernel = "sgm-original";
    return;
  }
  if (o.post.uniqueness > 0 || o.post.subpixel != Subpixel::none)
    throw InputError("--method ssd --backend gpu: --uniqueness and --subpixel need the SSD costs, which "
                     "the SSD kernels do not keep; use --backend cpu or --method sgm");
  if (expert_kernel) {
    dev = cuda_sgm_device(o.device);
    info.kernel = "ssd-expert";
    say("kernel: the expert SSD kernel (kernels/original/stereo/ssd_expert.cu)");
    return;
  }
  Selection s = select_variant(o.kernel, b.device, request);
  KernelVariant kv = make_kernel_variant(s.variant);
  say("kernel stereo: " + s.variant.id + " (" + s.rule + ")" + (kv.is_original() ? "" : ", genome: " + kv.genome));
  gpu = std::make_unique<GpuBackend>(o.device, std::move(kv));
  info.kernel = s.variant.id;
}

StereoResult Matcher::Impl::run_ssd(const Image16& left, const Image16& right) {
  const Image8 l = to_image8(left), r = to_image8(right);
  validate_pair(l, r);
  if (!gpu && !dev) return ssd_cpu(l, r, o.params, o.post, o.threads);
  StereoResult res;
  res.left = to_q(run_ssd_gpu(l, r));
  if (o.post.needs_right()) res.right = ssd_right_map(run_ssd_gpu(mirror(r), mirror(l)));
  postprocess_cpu(res, o.post);
  if (!o.post.right) res.right = {};
  return res;
}

DisparityMap Matcher::Impl::run_ssd_gpu(const Image8& l, const Image8& r) {
  if (dev) {  // the expert kernel
    if (!expert || expert->width() != l.width || expert->height() != l.height) {
      expert.reset();
      expert = std::make_unique<SsdExpert>(*dev, l.width, l.height);
    }
    return expert->run(l, r, o.params);
  }
  GpuTimes gt;
  DisparityMap d = gpu->run(l, r, o.params, &gt);
  say("gpu: " + gpu->describe());
  char buf[200];
  std::snprintf(buf, sizeof buf, "gpu stages: load %.2f ms, upload %.2f ms, kernel %.3f ms, download %.2f ms",
                gt.load_ms, gt.upload_ms, gt.kernel_ms, gt.download_ms);
  say(buf);
  info.kernel_ms = gt.kernel_ms;
  return d;
}

StereoResult Matcher::Impl::run_sgm(const Image16& left, const Image16& right) {
  if (!dev) return sgm_cpu(left, right, o.sgm, o.threads);
  const int bits = sgm_pixel_bits(o.sgm, left, right);
  const bool on_device = rect && sgm_pixels_exact(o.sgm, left, right);  // else run() rectified them
  if (!pipeline || pipeline->layout().width != left.width || pipeline->layout().height != left.height ||
      pipeline->bits() != bits || pipeline_rectifies != on_device) {
    pipeline.reset();
    pipeline = std::make_unique<SgmPipeline>(*dev, o.sgm, left.width, left.height, bits, o.tuning);
    if (on_device) pipeline->set_rectify(*rect);
    pipeline_rectifies = on_device;
    const SgmLayout& l = pipeline->layout();
    say("gpu: " + info.device + ", SGM pipeline " + std::to_string(bits) + "-bit" + (on_device ? ", rectifying" : "") +
        ", " + std::to_string(l.count) + " disparities as " + std::to_string(l.G) + " lanes x " + std::to_string(l.K) +
        ", " + std::to_string(pipeline->device_bytes() >> 20) + " MiB on the device");
  }
  return pipeline->run(left, right);
}

Matcher::Matcher(const MatchOptions& o, int width, int height, MatchNote note, std::shared_ptr<const RectifyMaps> rectify)
    : impl_(std::make_unique<Impl>(Impl{o, std::move(note), std::move(rectify), {}, {}, {}, {}, false, {}})) {
  impl_->choose(width, height);
}

Matcher::~Matcher() = default;

StereoResult Matcher::run(const Image16& left, const Image16& right) {
  Impl& m = *impl_;
  if (m.rect) {
    check_rectify_size(*m.rect, left.width, left.height);
    check_rectify_size(*m.rect, right.width, right.height);
    // sgm on the GPU rectifies on the device where the pixels it takes are the images' own values
    if (!(m.o.is_sgm() && m.dev && sgm_pixels_exact(m.o.sgm, left, right))) {
      Image16 l = left, r = right;
      rectify_image(*m.rect, 0, l);
      rectify_image(*m.rect, 1, r);
      return m.o.is_sgm() ? m.run_sgm(l, r) : m.run_ssd(l, r);
    }
  }
  return m.o.is_sgm() ? m.run_sgm(left, right) : m.run_ssd(left, right);
}

const MatchInfo& Matcher::info() const { return impl_->info; }

std::unique_ptr<FrameMatcher> frame_matcher(const MatchOptions& o, int streams,
                                            const std::function<std::pair<int, int>()>& first_size,
                                            MatchInfo& info, MatchNote note, std::shared_ptr<const RectifyMaps> rectify) {
  const BackendChoice b = o.is_sgm() ? choose_backend(common_of(o)) : BackendChoice{};
  if (o.is_sgm() && b.backend == Backend::gpu) {
    if (!plain_kernel(o.kernel)) throw InputError("--kernel " + o.kernel + ": kernel variants apply to --method ssd");
    auto fm = sgm_gpu_matcher(o.sgm, o.device, streams, o.tuning, rectify);
    info = MatchInfo{};
    info.rectifies = rectify != nullptr;
    info.backend = "gpu";
    info.kernel = "sgm-original, " + std::to_string(streams) + " streams";
    info.device = b.device.name;
    info.reason = b.reason;
    if (note) note("backend: " + b.reason);
    return fm;
  }
  // The variant is chosen for the first pair's size (applicability, size class).
  const auto [w, h] = first_size();
  auto m = std::make_shared<Matcher>(o, w, h, std::move(note));
  info = m->info();
  return sync_matcher([m](const Frame& f) { return m->run(f.left, f.right); });
}

}  // namespace evk::stereo
