// stereo command line: argument parsing and printing only; the work lives in core/ and io/.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <regex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "evk/atomic_file.hpp"
#include "evk/cli.hpp"
#include "evk/gi/cli.hpp"
#include "evk/stereo/gi_problem.hpp"
#include "evk/stereo/sgm_gi_problem.hpp"
#include "evk/error.hpp"
#include "evk/stereo/eval.hpp"
#include "evk/stereo/gpu.hpp"
#include "evk/stereo/io.hpp"
#include "evk/stereo/reference.hpp"
#include "evk/stereo/sgm.hpp"
#include "evk/stereo/sgm_gpu.hpp"
#include "evk/stereo/ssd.hpp"
#include "evk/stereo/ssd_expert.hpp"
#include "evk/stereo/stream.hpp"

namespace fs = std::filesystem;
using namespace evk::stereo;

namespace {

using clk = std::chrono::steady_clock;
double ms_since(clk::time_point t) { return std::chrono::duration<double, std::milli>(clk::now() - t).count(); }

struct MatchOptions {
  std::string method = "ssd";
  Params params;           // ssd: window, min_ssd; both: the disparity range
  SgmParams sgm;           // sgm: paths, penalties, cost (range and post copied in)
  std::string cost = "census", subpixel = "none";
  PostParams post;
  WriteOptions write;
  evk::CommonOptions common;
  bool is_sgm() const { return method == "sgm"; }
  // Parses the string options and checks everything before any file is read.
  void finalize() {
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
};

void add_match_options(CLI::App* c, MatchOptions& o) {
  c->add_option("--method", o.method, "Matching: ssd (Stam's block matcher, the paper's kernel) or sgm (semi-global)")
      ->check(CLI::IsMember({"ssd", "sgm"}))
      ->capture_default_str();
  c->add_option("--min-disparity", o.params.min_disparity, "Smallest disparity tried (sgm: negative allowed)")
      ->capture_default_str();
  c->add_option("--max-disparity", o.params.max_disparity, "Largest disparity tried")->capture_default_str();
  c->add_option("--window", o.params.window, "ssd: SSD window size (odd, >= 3)")->capture_default_str();
  c->add_option("--min-ssd", o.params.min_ssd, "ssd: a disparity is kept only when its SSD is below this")
      ->capture_default_str();
  c->add_option("--paths", o.sgm.paths, "sgm: aggregation directions, 4 or 8")->capture_default_str();
  c->add_option("--p1", o.sgm.p1, "sgm: penalty for a disparity change of 1")->capture_default_str();
  c->add_option("--p2", o.sgm.p2, "sgm: penalty for a larger change")->capture_default_str();
  c->add_option("--cost", o.cost, "sgm: matching cost, census (9x7 centre-symmetric), sad or ssd")
      ->check(CLI::IsMember({"census", "sad", "ssd"}))
      ->capture_default_str();
  c->add_option("--cost-window", o.sgm.window, "sgm: window of the sad/ssd cost (odd)")->capture_default_str();
  c->add_option("--uniqueness", o.post.uniqueness,
                "Invalid when another disparity (|d - best| > 1) costs less than best x (1 + U/100); 0 = off")
      ->capture_default_str();
  c->add_option("--subpixel", o.subpixel, "Sub-pixel fit: none, parabola or equiangular (1/16 pixel)")
      ->check(CLI::IsMember({"none", "parabola", "equiangular"}))
      ->capture_default_str();
  c->add_option("--lr-check", o.post.lr_check, "Left-right check: keep |dL - dR| <= N pixels; -1 = off")
      ->capture_default_str();
  c->add_option("--median", o.post.median, "Median filter: 0 (off) or 3 (3x3 of the valid neighbours)")
      ->capture_default_str();
  c->add_option("--speckle-size", o.post.speckle_size, "Invalidate regions of at most this many pixels; 0 = off")
      ->capture_default_str();
  c->add_option("--speckle-range", o.post.speckle_range, "Neighbours within this many pixels are one region")
      ->capture_default_str();
  c->add_option("--png-scale", o.write.png_scale, "16-bit PNG/PGM output: stored value = disparity x scale")
      ->capture_default_str();
  evk::add_common_options(c, o.common);
}

// One loaded pair: 8-bit for ssd, the file's depth for sgm.
struct Pair16 {
  Image16 left, right;
  Image8 left8() const { return to8(left); }
  Image8 right8() const { return to8(right); }
  static Image8 to8(const Image16& im) {
    Image8 o{im.width, im.height, std::vector<std::uint8_t>(im.pixels.size())};
    const unsigned m = static_cast<unsigned>(im.maxval);
    for (std::size_t i = 0; i < im.pixels.size(); ++i)
      o.pixels[i] = static_cast<std::uint8_t>((im.pixels[i] * 255u + m / 2) / m);
    return o;
  }
};

Pair16 read_pair(const std::string& l, const std::string& r) {
  Pair16 p{read_gray16(l), read_gray16(r)};
  if (p.left.width != p.right.width || p.left.height != p.right.height)
    evk::input_error(l + ", " + r, "left and right images differ in size (" + std::to_string(p.left.width) + "x" +
                                       std::to_string(p.left.height) + " vs " + std::to_string(p.right.width) + "x" +
                                       std::to_string(p.right.height) + ")");
  return p;
}

// Computes disparities with the chosen method and backend; GPU state kept for batches.
class Matcher {
 public:
  // width x height: the (first) pair's size, for the kernel variant's applicability and size class.
  Matcher(const MatchOptions& o, int width, int height) : o_(o) {
    const evk::Request request = make_request(o.params, width, height);
    // A genome file is checked before anything else, so a bad one is reported as such with or
    // without a GPU (reading and applying a genome needs no device).
    const bool expert = !o.is_sgm() && o.common.kernel == "expert";
    if (!o.is_sgm() && !expert && is_genome_file_choice(o.common.kernel))
      make_kernel_variant(select_variant(o.common.kernel, evk::DeviceInfo{}, request).variant);
    if (o.is_sgm() && o.common.kernel != "auto" && o.common.kernel != "original")
      throw evk::InputError("--kernel " + o.common.kernel + ": kernel variants apply to --method ssd");
    evk::BackendChoice b = evk::choose_backend(o.common);
    evk::verbose_line(o.common, "backend: " + b.reason);
    if (b.backend == evk::Backend::gpu) {
      backend_ = "gpu";
      device_ = b.device.name;
      if (o.is_sgm()) {
        sgm_dev_ = cuda_sgm_device(o.common.device);
        variant_ = "sgm-original";
      } else {
        if (o.post.uniqueness > 0 || o.post.subpixel != Subpixel::none)
          throw evk::InputError("--method ssd --backend gpu: --uniqueness and --subpixel need the SSD costs, which "
                                "the SSD kernels do not keep; use --backend cpu or --method sgm");
        if (expert) {
          sgm_dev_ = cuda_sgm_device(o.common.device);
          variant_ = "ssd-expert";
          evk::verbose_line(o.common, "kernel: the expert SSD kernel (kernels/original/stereo/ssd_expert.cu)");
          return;
        }
        evk::Selection s = select_variant(o.common.kernel, b.device, request);
        KernelVariant kv = make_kernel_variant(s.variant);
        evk::verbose_line(o.common, "kernel stereo: " + s.variant.id + " (" + s.rule + ")" +
                                        (kv.is_original() ? "" : ", genome: " + kv.genome));
        gpu_ = std::make_unique<GpuBackend>(o.common.device, std::move(kv));
        variant_ = s.variant.id;
      }
    } else {
      if (!o.is_sgm() && o.common.kernel != "auto" && o.common.kernel != "original")
        throw evk::InputError("--kernel " + o.common.kernel + ": kernel variants need the GPU backend");
      variant_ = o.is_sgm() ? "sgm-cpu-reference" : "cpu-reference";
    }
  }
  StereoResult run(const Pair16& pr, double& compute_ms) {
    auto t = clk::now();
    StereoResult r = o_.is_sgm() ? run_sgm(pr) : run_ssd(pr);
    compute_ms = ms_since(t);
    return r;
  }
  const std::string& backend() const { return backend_; }
  const std::string& variant() const { return variant_; }
  const std::string& device() const { return device_; }
  double kernel_ms() const { return kernel_ms_; }

 private:
  StereoResult run_ssd(const Pair16& pr) {
    const Image8 l = pr.left8(), r = pr.right8();
    validate_pair(l, r);
    if (!gpu_ && !sgm_dev_) return ssd_cpu(l, r, o_.params, o_.post);
    StereoResult res;
    res.left = to_q(run_ssd_gpu(l, r));
    if (o_.post.needs_right()) res.right = ssd_right_map(run_ssd_gpu(mirror(r), mirror(l)));
    postprocess_cpu(res, o_.post);
    if (!o_.post.right) res.right = {};
    return res;
  }
  DisparityMap run_ssd_gpu(const Image8& l, const Image8& r) {
    if (sgm_dev_) {  // the expert kernel
      if (!expert_ || expert_->width() != l.width || expert_->height() != l.height) {
        expert_.reset();
        expert_ = std::make_unique<SsdExpert>(*sgm_dev_, l.width, l.height);
      }
      return expert_->run(l, r, o_.params);
    }
    GpuTimes gt;
    DisparityMap d = gpu_->run(l, r, o_.params, &gt);
    evk::verbose_line(o_.common, "gpu: " + gpu_->describe());
    char buf[200];
    std::snprintf(buf, sizeof buf, "gpu stages: load %.2f ms, upload %.2f ms, kernel %.3f ms, download %.2f ms",
                  gt.load_ms, gt.upload_ms, gt.kernel_ms, gt.download_ms);
    evk::verbose_line(o_.common, buf);
    kernel_ms_ = gt.kernel_ms;
    return d;
  }
  StereoResult run_sgm(const Pair16& pr) {
    if (!sgm_dev_) return sgm_cpu(pr.left, pr.right, o_.sgm);
    const int bits = (o_.sgm.cost == CostKind::census && std::max(pr.left.maxval, pr.right.maxval) > 255) ? 16 : 8;
    if (!pipeline_ || pipeline_->layout().width != pr.left.width || pipeline_->layout().height != pr.left.height ||
        pipeline_->bits() != bits) {
      pipeline_.reset();
      pipeline_ = std::make_unique<SgmPipeline>(*sgm_dev_, o_.sgm, pr.left.width, pr.left.height, bits);
      const SgmLayout& l = pipeline_->layout();
      evk::verbose_line(o_.common, "gpu: " + device_ + ", SGM pipeline " + std::to_string(bits) + "-bit, " +
                                       std::to_string(l.count) + " disparities as " + std::to_string(l.G) + " lanes x " +
                                       std::to_string(l.K) + ", " + std::to_string(pipeline_->device_bytes() >> 20) +
                                       " MiB on the device");
    }
    return pipeline_->run(pr.left, pr.right);
  }
  const MatchOptions& o_;
  std::unique_ptr<GpuBackend> gpu_;
  std::unique_ptr<SgmDevice> sgm_dev_;
  std::unique_ptr<SgmPipeline> pipeline_;
  std::unique_ptr<SsdExpert> expert_;
  std::string backend_ = "cpu", variant_ = "cpu-reference", device_;
  double kernel_ms_ = 0;
};

void probe_writable(const fs::path& p) { evk::AtomicOutput probe(p); }

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

// ---- disparity ---------------------------------------------------------------------------------
struct DisparityCmd {
  MatchOptions o;
  std::string left, right, out, color, right_out;
  std::string subpixel_name() const { return o.subpixel; }
};

long long count_invalid(const DisparityQ& d) { return std::count(d.q.begin(), d.q.end(), kInvalidQ); }

void run_disparity(DisparityCmd& c) {
  if (!c.right_out.empty()) c.o.post.right = true;
  c.o.finalize();
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
  auto t0 = clk::now();
  Pair16 pr = read_pair(c.left, c.right);
  const double read_ms = ms_since(t0);
  evk::verbose_line(c.o.common, "read " + std::to_string(pr.left.width) + "x" + std::to_string(pr.left.height) +
                                    " pair (maxval " + std::to_string(pr.left.maxval) + ") in " + pct(read_ms) + " ms");
  Matcher m(c.o, pr.left.width, pr.left.height);
  double compute_ms = 0;
  StereoResult d = m.run(pr, compute_ms);
  evk::verbose_line(c.o.common, "compute (" + c.o.method + ", " + m.backend() + "): " + pct(compute_ms) + " ms");
  auto t1 = clk::now();
  write_disparity(c.out, d.left, c.o.write);
  if (!c.right_out.empty()) write_disparity(c.right_out, d.right, c.o.write);
  if (!c.color.empty()) write_color_png(c.color, d.left, c.o.params.min_disparity, c.o.params.max_disparity);
  const double write_ms = ms_since(t1);
  evk::verbose_line(c.o.common, "write: " + pct(write_ms) + " ms");
  const long long invalid = count_invalid(d.left);
  const int W = d.left.width, H = d.left.height;
  if (c.o.common.json) {
    nlohmann::json j = {{"left", c.left}, {"right", c.right}, {"output", c.out}, {"width", W}, {"height", H},
                        {"method", c.o.method}, {"min_disparity", c.o.params.min_disparity},
                        {"max_disparity", c.o.params.max_disparity}, {"backend", m.backend()}, {"kernel", m.variant()},
                        {"device", m.device()}, {"invalid_pixels", invalid},
                        {"uniqueness", c.o.post.uniqueness}, {"subpixel", c.subpixel_name()},
                        {"lr_check", c.o.post.lr_check}, {"median", c.o.post.median},
                        {"speckle_size", c.o.post.speckle_size},
                        {"times_ms", {{"read", read_ms}, {"compute", compute_ms}, {"kernel", m.kernel_ms()},
                                      {"write", write_ms}}}};
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
    std::cout << j.dump(2) << "\n";
  } else {
    const std::string what = c.o.is_sgm() ? "sgm " + c.o.cost + " " + std::to_string(c.o.sgm.paths) + " paths"
                                          : "window " + std::to_string(c.o.params.window);
    std::printf("%s: %dx%d, disparities %d..%d, %s, %s (%s), %lld invalid pixels (%.2f%%)\n", c.out.c_str(), W, H,
                c.o.params.min_disparity, c.o.params.max_disparity, what.c_str(), m.backend().c_str(),
                m.variant().c_str(), invalid, 100.0 * invalid / d.left.q.size());
  }
}

// ---- eval --------------------------------------------------------------------------------------
struct EvalCmd {
  std::string disp, gt, mask;
  double gt_scale = 0, disp_scale = 256;
  std::vector<double> thresholds{1.0, 2.0};
  bool json = false;
};

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

// ---- batch -------------------------------------------------------------------------------------
struct Pair {
  fs::path left, right;
  std::string name;
};

std::vector<Pair> list_pairs(const fs::path& in) {
  std::vector<Pair> pairs;
  std::error_code ec;
  if (!fs::exists(in, ec)) evk::input_error(in.string(), "no such file or directory");
  if (fs::is_directory(in, ec)) {
    // <prefix>L.<ext> with a sibling <prefix>R.<ext>, anywhere below the directory.
    for (auto it = fs::recursive_directory_iterator(in, ec); it != fs::recursive_directory_iterator(); ++it) {
      if (!it->is_regular_file()) continue;
      const fs::path p = it->path();
      std::string stem = p.stem().string();
      if (stem.empty() || stem.back() != 'L') continue;
      fs::path r = p.parent_path() / (stem.substr(0, stem.size() - 1) + "R" + p.extension().string());
      if (!fs::exists(r)) continue;
      std::string name = fs::relative(p.parent_path(), in).string();
      if (name == ".") name.clear();
      std::replace(name.begin(), name.end(), '/', '_');
      std::string pre = stem.substr(0, stem.size() - 1);
      name = name.empty() ? pre : (pre.empty() ? name : name + "_" + pre);
      if (name.empty()) name = "pair";
      pairs.push_back({p, r, name});
    }
    std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.left < b.left; });
    if (pairs.empty()) evk::input_error(in.string(), "no <name>L.<ext> / <name>R.<ext> pairs found");
  } else {
    std::ifstream f(in);
    if (!f) evk::input_error(in.string(), "cannot open");
    std::string line;
    int n = 0;
    while (std::getline(f, line)) {
      ++n;
      std::istringstream ss(line);
      std::string l, r, name;
      if (!(ss >> l) || l[0] == '#') continue;
      if (!(ss >> r)) evk::input_error(in.string() + ":" + std::to_string(n), "expected 'LEFT RIGHT [NAME]'");
      fs::path base = in.parent_path();
      fs::path lp = fs::path(l).is_absolute() ? fs::path(l) : base / l;
      fs::path rp = fs::path(r).is_absolute() ? fs::path(r) : base / r;
      if (!(ss >> name)) name = "pair" + std::to_string(pairs.size() + 1);
      pairs.push_back({lp, rp, name});
    }
    if (pairs.empty()) evk::input_error(in.string(), "no pairs listed");
  }
  return pairs;
}

// ---- many frames: batch and video, through the overlapped stream engine -----------------------
struct FramesCmd {
  MatchOptions o;
  std::string outdir, format = "pfm";
  bool color = false;
  int streams = 3, readers = 2, writers = 2;
};

void add_frames_options(CLI::App* c, FramesCmd& f) {
  c->add_option("-o,--output-dir", f.outdir, "Output directory (must exist)")->required();
  c->add_option("--format", f.format, "Output format")->check(CLI::IsMember({"pfm", "png", "pgm"}))->capture_default_str();
  c->add_flag("--color", f.color, "Also write <name>_color.png");
  c->add_option("--streams", f.streams, "GPU sgm: frames in flight, each on its own CUDA stream")->capture_default_str();
  c->add_option("--readers", f.readers, "Decoding threads")->capture_default_str();
  c->add_option("--writers", f.writers, "Encoding threads")->capture_default_str();
  add_match_options(c, f.o);
}

struct FrameSource {
  std::vector<fs::path> left, right;
  std::vector<std::string> names;
};

void run_frames(FramesCmd& c, const FrameSource& src, const char* unit) {
  const fs::path outdir(c.outdir);
  std::error_code ec;
  if (c.streams < 1 || c.readers < 1 || c.writers < 1) evk::input_error("--streams/--readers/--writers", "must be >= 1");
  // Matching: SGM on the GPU through the slots of the stream engine; anything else one frame at a time.
  std::unique_ptr<Matcher> sync;
  std::unique_ptr<FrameMatcher> fm;
  std::string backend = "cpu", variant;
  const evk::BackendChoice b = c.o.is_sgm() ? evk::choose_backend(c.o.common) : evk::BackendChoice{};
  if (c.o.is_sgm() && b.backend == evk::Backend::gpu) {
    if (c.o.common.kernel != "auto" && c.o.common.kernel != "original")
      throw evk::InputError("--kernel " + c.o.common.kernel + ": kernel variants apply to --method ssd");
    fm = sgm_gpu_matcher(c.o.sgm, c.o.common.device, c.streams, SgmTuning::from_env());
    backend = "gpu";
    variant = "sgm-original, " + std::to_string(c.streams) + " streams";
    evk::verbose_line(c.o.common, "backend: " + b.reason);
  } else {
    // The variant is chosen for the first pair's size (applicability, size class).
    const Pair16 first = read_pair(src.left.front().string(), src.right.front().string());
    sync = std::make_unique<Matcher>(c.o, first.left.width, first.left.height);
    backend = sync->backend();
    variant = sync->variant();
    fm = sync_matcher([&](const Frame& f) {
      double ms = 0;
      return sync->run(Pair16{f.left, f.right}, ms);
    });
  }
  StreamOptions so;
  so.readers = c.readers;
  so.writers = c.writers;
  const int n = static_cast<int>(src.left.size());
  for (std::size_t i = 0; i < src.left.size(); ++i) {
    const std::vector<fs::path> inputs{src.left[i], src.right[i]};
    evk::check_not_an_input(outdir / (src.names[i] + "." + c.format), inputs);
    if (c.color) evk::check_not_an_input(outdir / (src.names[i] + "_color.png"), inputs);
  }
  auto load = [&](int i) {
    Pair16 p = read_pair(src.left[static_cast<std::size_t>(i)].string(), src.right[static_cast<std::size_t>(i)].string());
    Frame f;
    f.left = std::move(p.left);
    f.right = std::move(p.right);
    return f;
  };
  // All or nothing: outputs written before a failing frame are removed again.
  std::mutex written_mu;
  std::vector<fs::path> written;
  struct RemoveOnFailure {
    std::vector<fs::path>& files;
    bool done = false;
    ~RemoveOnFailure() {
      std::error_code e;
      if (!done)
        for (const auto& f : files) fs::remove(f, e);
    }
  } cleanup{written};
  auto store = [&](int i, StereoResult& r) {
    const std::string& name = src.names[static_cast<std::size_t>(i)];
    const fs::path out = outdir / (name + "." + c.format);
    {
      std::lock_guard<std::mutex> lk(written_mu);
      written.push_back(out);
      if (c.color) written.push_back(outdir / (name + "_color.png"));
    }
    write_disparity(out, r.left, c.o.write);
    if (c.color) write_color_png(outdir / (name + "_color.png"), r.left, c.o.params.min_disparity, c.o.params.max_disparity);
  };
  const StreamStats st = run_stream(n, load, *fm, store, so);
  cleanup.done = true;
  const double f = static_cast<double>(std::max<long long>(1, st.frames));
  if (c.o.common.json) {
    std::cout << nlohmann::json{{"count", st.frames}, {"seconds", st.seconds}, {std::string(unit) + "_per_second", st.fps},
                                {"backend", backend}, {"kernel", variant}, {"method", c.o.method},
                                {"bound", st.bound}, {"readers", st.readers}, {"writers", st.writers},
                                {"per_frame_ms", {{"read", st.read_ms / f}, {"submit", st.submit_ms / f},
                                                  {"wait", st.wait_ms / f}, {"upload", st.upload_ms / f},
                                                  {"kernels", st.kernel_ms / f}, {"download", st.download_ms / f},
                                                  {"write", st.write_ms / f}}}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("%lld %s in %.3f s: %.2f %s/s end to end (%s, %s, %s)\n", st.frames, unit, st.seconds, st.fps, unit,
                c.o.method.c_str(), backend.c_str(), variant.c_str());
    std::printf("  per frame: read %.2f ms x %d threads, match %.2f ms (device upload %.3f, kernels %.3f, download "
                "%.3f ms), write %.2f ms x %d threads; bound by %s\n",
                st.read_ms / f, st.readers, (st.submit_ms + st.wait_ms) / f, st.upload_ms / f, st.kernel_ms / f,
                st.download_ms / f, st.write_ms / f, st.writers, st.bound.c_str());
  }
  (void)ec;
}

void check_outdir(FramesCmd& c) {
  c.o.finalize();
  std::error_code ec;
  if (!fs::is_directory(fs::path(c.outdir), ec)) evk::input_error(c.outdir, "output directory does not exist");
  check_disparity_output(fs::path(c.outdir) / ("x." + c.format), c.o.params.min_disparity, c.o.params.max_disparity,
                         c.o.write);
}

struct BatchCmd {
  FramesCmd f;
  std::string input;
};

void run_batch(BatchCmd& c) {
  check_outdir(c.f);
  FrameSource src;
  for (const Pair& p : list_pairs(c.input)) {
    src.left.push_back(p.left);
    src.right.push_back(p.right);
    src.names.push_back(p.name);
  }
  run_frames(c.f, src, "pairs");
}

// ---- video: numbered frames or two directories -------------------------------------------------
struct VideoCmd {
  FramesCmd f;
  std::string left, right;
  int first = -1, count = 0;
};

// printf-style pattern with one integer conversion (%d, %05d, ...)
bool is_pattern(const std::string& s) { return s.find('%') != std::string::npos; }
std::string expand(const std::string& pattern, int i) {
  char buf[4096];
  std::snprintf(buf, sizeof buf, pattern.c_str(), i);
  return buf;
}

FrameSource video_frames(const VideoCmd& c) {
  FrameSource src;
  std::error_code ec;
  if (is_pattern(c.left) != is_pattern(c.right))
    evk::input_error(c.left + ", " + c.right, "give two directories or two numbered patterns");
  if (is_pattern(c.left)) {
    static const std::regex one_number("^[^%]*%(0[0-9]{1,2})?d[^%]*$");
    for (const std::string& p : {c.left, c.right})
      if (!std::regex_match(p, one_number)) evk::input_error(p, "a numbered pattern needs exactly one %d (or %0Nd)");
    int i = c.first;
    if (i < 0) i = fs::exists(expand(c.left, 0)) ? 0 : 1;  // frames from 0, else from 1
    for (; c.count <= 0 || static_cast<int>(src.left.size()) < c.count; ++i) {
      const fs::path l = expand(c.left, i), r = expand(c.right, i);
      if (!fs::exists(l, ec)) break;
      if (!fs::exists(r, ec)) evk::input_error(r.string(), "right frame missing (its left frame exists)");
      src.left.push_back(l);
      src.right.push_back(r);
      src.names.push_back(fs::path(expand(c.left, i)).stem().string());
    }
    if (src.left.empty()) evk::input_error(expand(c.left, i), "no such frame");
    return src;
  }
  for (const std::string& d : {c.left, c.right})
    if (!fs::is_directory(d, ec)) evk::input_error(d, "not a directory (or give numbered patterns with %d)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(c.left, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& l : files) {
    if (c.count > 0 && static_cast<int>(src.left.size()) >= c.count) break;
    const fs::path r = fs::path(c.right) / l.filename();
    if (!fs::exists(r, ec)) evk::input_error(r.string(), "no right frame of this name");
    src.left.push_back(l);
    src.right.push_back(r);
    src.names.push_back(l.stem().string());
  }
  if (src.left.empty()) evk::input_error(c.left, "no frames");
  return src;
}

void run_video(VideoCmd& c) {
  check_outdir(c.f);
  run_frames(c.f, video_frames(c), "frames");
}

}  // namespace

int main(int argc, char** argv) {
  auto app = evk::make_app("stereo", "Disparity maps from rectified stereo pairs: Stam's block matcher (genetically "
                                     "improved per GPU) or semi-global matching, with LR check and sub-pixel refinement");

  DisparityCmd dc;
  auto* dcmd = app->add_subcommand("disparity", "Disparity map of a rectified stereo pair");
  dcmd->add_option("LEFT", dc.left, "Left image (PGM/PPM, or any format OpenCV reads)")->required();
  dcmd->add_option("RIGHT", dc.right, "Right image")->required();
  dcmd->add_option("-o,--output", dc.out, "Output: .pfm (float, invalid +inf), .png or .pgm (16-bit, invalid 0)")
      ->required();
  dcmd->add_option("--color", dc.color, "Also write a colour visualisation (.png; invalid black)");
  dcmd->add_option("--right-output", dc.right_out, "Also write the right image's disparity map (whole pixels)");
  add_match_options(dcmd, dc.o);
  dcmd->callback([&] { run_disparity(dc); });

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
  auto* vcmd = app->add_subcommand("video", "A stereo video: numbered frames (left/%06d.png right/%06d.png) or two "
                                            "directories of frames paired by name; prints frames/s end to end");
  vcmd->add_option("LEFT", vc.left, "Left frames: a directory or a pattern with one %d")->required();
  vcmd->add_option("RIGHT", vc.right, "Right frames: a directory or a pattern with one %d")->required();
  vcmd->add_option("--first", vc.first, "First frame number of a pattern (default 0, else 1)");
  vcmd->add_option("--count", vc.count, "At most this many frames (0 = all)")->capture_default_str();
  add_frames_options(vcmd, vc.f);
  vcmd->callback([&] { run_video(vc); });

  evk::add_devices_command(*app, "stereo", [] { return make_registry(); });
  evk::gi::add_gi_command(*app, {{"ssd", "expert", "sgm"}, "ssd", evk::stereo::make_gi_problem_for_seed},
                          [] { return make_registry(); });
  return evk::run_cli(*app, argc, argv);
}
