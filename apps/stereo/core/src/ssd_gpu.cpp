#include "core/ssd_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "gi/gi_problem.hpp"

#if defined(EVK_HAVE_CUDA)
#include "core/gpu_frame.hpp"
#include "evk/cuda_check.hpp"
#endif

namespace evk::stereo {

Registry make_registry() {
  Registry reg;
  reg.add_kernel("stereo");
  reg.add_builtin();
  // What a variant's configuration implies for requests (the GI problem's constraints: an 8-bit
  // output holds 0..253, 254 being the poison and 255 "invalid"; the widest window it can run).
  reg.set_implied_constraints("stereo", [](const Variant& v) {
    std::vector<Constraint> cs;
    try {
      for (const std::string& line : gi_constraints(make_kernel_variant(v).config)) {
        const gi::Constraint c = gi::parse_constraint(line);
        cs.push_back({c.name, c.op, c.value});
      }
    } catch (const std::exception&) {
      // a bad genome is reported when the variant is made, not here
    }
    return cs;
  });
  add_installed_variants(reg);
  return reg;
}

// The GI problem's classes (gi_problem.cpp gi_class_of: the nearest class by pixel count), one
// definition for searching and dispatch.
std::string size_class_of(int width, int height) { return gi_class_of({{"width", width}, {"height", height}}); }

Request make_request(const Params& p, int width, int height) {
  Request r;
  r.size_class = size_class_of(width, height);
  r.props = {{"disparities", p.count()}, {"max_disparity", p.max_disparity}, {"min_disparity", p.min_disparity},
             {"window", p.window}, {"width", width}, {"height", height}};
  return r;
}

Selection select_variant(const std::string& choice, const DeviceInfo& device, const Request& request) {
  Registry reg = make_registry();
  std::filesystem::path overlay = default_overlay_dir();
  if (!overlay.empty()) reg.load_overlay(overlay);
  return reg.select("stereo", DeviceKey{device.cc(), device.name}, choice, request);
}

bool is_genome_file_choice(const std::string& choice) {
  return choice != "auto" && choice != "original" && choice != "evolved";
}

KernelVariant make_kernel_variant(const Variant& v) {
  KernelVariant k;
  k.id = v.id;
  if (v.genome.empty()) return k;
  const std::string what = v.path.empty() ? "kernel variant " + v.id : v.path;
  std::unique_ptr<gi::Problem> problem = make_gi_problem();
  gi::Variant patched;
  try {
    patched = gi::apply_genome(*problem, v.genome);
    KernelSettings::from(patched.config);  // an illegal combination is the genome's fault too
  } catch (const InputError& e) {
    input_error(what, std::string("bad genome: ") + e.what());
  }
  k.genome = v.genome;
  k.source = patched.source;
  k.config = patched.config;
  return k;
}

#if defined(EVK_HAVE_CUDA)
struct GpuBackend::Impl {
  int device = 0;
  DeviceInfo info;
  KernelVariant variant;
  std::map<int, LoadedKernel> kernels;  // by radius
  std::map<int, KernelSettings> settings;
  DeviceFrame frame;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev[2] = {nullptr, nullptr};
  std::string origin = "not loaded yet";
  ~Impl() {
    if (ev[0]) cudaEventDestroy(ev[0]);
    if (ev[1]) cudaEventDestroy(ev[1]);
    if (stream) cudaStreamDestroy(stream);
  }
};

GpuBackend::GpuBackend(int device, gi::Config cfg) : GpuBackend(device, [&] {
  KernelVariant v;
  v.config = std::move(cfg);
  return v;
}()) {}

GpuBackend::GpuBackend(int device, KernelVariant variant) : impl_(std::make_unique<Impl>()) {
  const GpuEnvironment& env = gpu_environment();
  if (!env.usable()) input_error("--backend gpu", env.status);
  if (device < 0 || device >= static_cast<int>(env.devices.size()))
    input_error("--device", "no CUDA device " + std::to_string(device));
  impl_->device = device;
  impl_->info = env.devices[static_cast<std::size_t>(device)];
  impl_->variant = std::move(variant);
  KernelSettings::from(impl_->variant.config);  // validate early
  EVK_CUDA(cudaSetDevice(device));
  EVK_CUDA(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking));
  EVK_CUDA(cudaEventCreate(&impl_->ev[0]));
  EVK_CUDA(cudaEventCreate(&impl_->ev[1]));
}

GpuBackend::~GpuBackend() = default;

DisparityMap GpuBackend::run(const Image8& L, const Image8& R, const Params& p, GpuTimes* times) {
  using clk = std::chrono::steady_clock;
  auto ms = [](clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  validate(p);
  Impl& m = *impl_;
  EVK_CUDA(cudaSetDevice(m.device));
  GpuTimes t;
  auto t0 = clk::now();
  const int r = p.radius();
  if (!m.kernels.count(r)) {
    // The genome's config with RADIUS from --window (the gi problem trains with window 11).
    KernelSettings ks = KernelSettings::from(m.variant.config, r);
    m.kernels.emplace(r, load_kernel(ks, m.info.cc(), m.variant.source));
    m.settings.emplace(r, ks);
  }
  const LoadedKernel& lk = m.kernels.at(r);
  const KernelSettings& ks = m.settings.at(r);
  m.origin = lk.origin;
  auto t1 = clk::now();
  m.frame.upload(L, R);
  auto t2 = clk::now();
  m.frame.poison(m.stream);
  EVK_CUDA(cudaEventRecord(m.ev[0], m.stream));
  m.frame.launch(lk.kernel, ks, p, m.stream);
  EVK_CUDA_LAST();
  EVK_CUDA(cudaEventRecord(m.ev[1], m.stream));
  EVK_CUDA(cudaEventSynchronize(m.ev[1]));
  float kms = 0;
  EVK_CUDA(cudaEventElapsedTime(&kms, m.ev[0], m.ev[1]));
  auto t3 = clk::now();
  RawOutput raw = m.frame.download(ks, m.stream);
  DisparityMap out = to_disparity(raw, p);
  auto t4 = clk::now();
  t.load_ms = ms(t0, t1);
  t.upload_ms = ms(t1, t2);
  t.kernel_ms = kms;
  t.download_ms = ms(t3, t4);
  if (times) *times = t;
  return out;
}

std::string GpuBackend::describe() const {
  return impl_->info.name + ", stereoKernel " + impl_->variant.id + " (" + impl_->origin + ")";
}

const KernelVariant& GpuBackend::variant() const { return impl_->variant; }
#else
struct GpuBackend::Impl {};
GpuBackend::GpuBackend(int, gi::Config) { input_error("--backend gpu", "this build has no CUDA support"); }
GpuBackend::GpuBackend(int, KernelVariant) { input_error("--backend gpu", "this build has no CUDA support"); }
const KernelVariant& GpuBackend::variant() const {
  static const KernelVariant none;
  return none;
}
GpuBackend::~GpuBackend() = default;
DisparityMap GpuBackend::run(const Image8&, const Image8&, const Params&, GpuTimes*) { return {}; }
std::string GpuBackend::describe() const { return "no GPU"; }
#endif

}  // namespace evk::stereo
