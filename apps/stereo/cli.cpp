// stereo command line: argument parsing and printing only; the work lives in core/ and io/.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "evk/atomic_file.hpp"
#include "evk/cli.hpp"
#include "evk/gi/cli.hpp"
#include "evk/stereo/gi_problem.hpp"
#include "evk/error.hpp"
#include "evk/stereo/eval.hpp"
#include "evk/stereo/gpu.hpp"
#include "evk/stereo/io.hpp"
#include "evk/stereo/reference.hpp"

namespace fs = std::filesystem;
using namespace evk::stereo;

namespace {

using clk = std::chrono::steady_clock;
double ms_since(clk::time_point t) { return std::chrono::duration<double, std::milli>(clk::now() - t).count(); }

struct MatchOptions {
  Params params;
  WriteOptions write;
  evk::CommonOptions common;
};

void add_match_options(CLI::App* c, MatchOptions& o) {
  c->add_option("--min-disparity", o.params.min_disparity, "Smallest disparity tried")->capture_default_str();
  c->add_option("--max-disparity", o.params.max_disparity, "Largest disparity tried")->capture_default_str();
  c->add_option("--window", o.params.window, "SSD window size (odd, >= 3)")->capture_default_str();
  c->add_option("--min-ssd", o.params.min_ssd, "A disparity is kept only when its SSD is below this")
      ->capture_default_str();
  c->add_option("--png-scale", o.write.png_scale, "16-bit PNG/PGM output: stored value = disparity x scale")
      ->capture_default_str();
  evk::add_common_options(c, o.common);
}

// Computes disparities with the chosen backend, GPU backend kept for batches.
class Matcher {
 public:
  explicit Matcher(const MatchOptions& o) : o_(o) {
    // A genome file is checked before anything else, so a bad one is reported as such with or
    // without a GPU (reading and applying a genome needs no device).
    if (is_genome_file_choice(o.common.kernel))
      make_kernel_variant(select_variant(o.common.kernel, evk::DeviceInfo{}).variant);
    evk::BackendChoice b = evk::choose_backend(o.common);
    evk::verbose_line(o.common, "backend: " + b.reason);
    if (b.backend == evk::Backend::gpu) {
      evk::Selection s = select_variant(o.common.kernel, b.device);
      KernelVariant kv = make_kernel_variant(s.variant);
      evk::verbose_line(o.common, "kernel stereo: " + s.variant.id + " (" + s.rule + ")" +
                                      (kv.is_original() ? "" : ", genome: " + kv.genome));
      gpu_ = std::make_unique<GpuBackend>(o.common.device, std::move(kv));
      backend_ = "gpu";
      variant_ = s.variant.id;
      device_ = b.device.name;
    } else if (o.common.kernel != "auto" && o.common.kernel != "original") {
      throw evk::InputError("--kernel " + o.common.kernel + ": kernel variants need the GPU backend");
    }
  }
  DisparityMap run(const Image8& l, const Image8& r, double& compute_ms) {
    auto t = clk::now();
    DisparityMap d;
    if (gpu_) {
      GpuTimes gt;
      d = gpu_->run(l, r, o_.params, &gt);
      evk::verbose_line(o_.common, "gpu: " + gpu_->describe());
      char buf[200];
      std::snprintf(buf, sizeof buf, "gpu stages: load %.2f ms, upload %.2f ms, kernel %.3f ms, download %.2f ms",
                    gt.load_ms, gt.upload_ms, gt.kernel_ms, gt.download_ms);
      evk::verbose_line(o_.common, buf);
      kernel_ms_ = gt.kernel_ms;
    } else {
      d = disparity_cpu(l, r, o_.params);
    }
    compute_ms = ms_since(t);
    return d;
  }
  const std::string& backend() const { return backend_; }
  const std::string& variant() const { return variant_; }
  const std::string& device() const { return device_; }
  double kernel_ms() const { return kernel_ms_; }

 private:
  const MatchOptions& o_;
  std::unique_ptr<GpuBackend> gpu_;
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
  std::string left, right, out, color;
};

void run_disparity(const DisparityCmd& c) {
  validate(c.o.params);
  check_disparity_output(c.out, c.o.params.max_disparity, c.o.write);
  probe_writable(c.out);
  if (!c.color.empty()) {
    if (fs::path(c.color).extension() != ".png") evk::input_error(c.color, "--color output must be a .png file");
    probe_writable(c.color);
  }
  auto t0 = clk::now();
  Image8 l = read_gray(c.left), r = read_gray(c.right);
  validate_pair(l, r, c.left + ", " + c.right);
  const double read_ms = ms_since(t0);
  evk::verbose_line(c.o.common, "read " + std::to_string(l.width) + "x" + std::to_string(l.height) + " pair in " +
                                    pct(read_ms) + " ms");
  Matcher m(c.o);
  double compute_ms = 0;
  DisparityMap d = m.run(l, r, compute_ms);
  evk::verbose_line(c.o.common, "compute (" + m.backend() + "): " + pct(compute_ms) + " ms");
  auto t1 = clk::now();
  write_disparity(c.out, d, c.o.write);
  if (!c.color.empty()) write_color_png(c.color, d, c.o.params.min_disparity, c.o.params.max_disparity);
  const double write_ms = ms_since(t1);
  evk::verbose_line(c.o.common, "write: " + pct(write_ms) + " ms");
  long long invalid = std::count(d.d.begin(), d.d.end(), kInvalid);
  if (c.o.common.json) {
    nlohmann::json j = {{"left", c.left}, {"right", c.right}, {"output", c.out}, {"width", d.width},
                        {"height", d.height}, {"min_disparity", c.o.params.min_disparity},
                        {"max_disparity", c.o.params.max_disparity}, {"window", c.o.params.window},
                        {"min_ssd", c.o.params.min_ssd}, {"backend", m.backend()}, {"kernel", m.variant()},
                        {"device", m.device()}, {"invalid_pixels", invalid},
                        {"times_ms", {{"read", read_ms}, {"compute", compute_ms}, {"kernel", m.kernel_ms()},
                                      {"write", write_ms}}}};
    if (!c.color.empty()) j["color"] = c.color;
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("%s: %dx%d, disparities %d..%d, window %d, %s (%s), %lld invalid pixels (%.2f%%)\n", c.out.c_str(),
                d.width, d.height, c.o.params.min_disparity, c.o.params.max_disparity, c.o.params.window,
                m.backend().c_str(), m.variant().c_str(), invalid, 100.0 * invalid / d.d.size());
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
  Image8 mask;
  if (!c.mask.empty()) mask = read_mask(c.mask);
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
struct BatchCmd {
  MatchOptions o;
  std::string input, outdir, format = "pfm";
  bool color = false;
};

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

void run_batch(const BatchCmd& c) {
  validate(c.o.params);
  const fs::path outdir(c.outdir);
  std::error_code ec;
  if (!fs::is_directory(outdir, ec)) evk::input_error(c.outdir, "output directory does not exist");
  check_disparity_output(outdir / ("x." + c.format), c.o.params.max_disparity, c.o.write);
  std::vector<Pair> pairs = list_pairs(c.input);
  Matcher m(c.o);
  auto t0 = clk::now();
  double compute_total = 0;
  nlohmann::json items = nlohmann::json::array();
  for (const auto& p : pairs) {
    Image8 l = read_gray(p.left), r = read_gray(p.right);
    validate_pair(l, r, p.left.string() + ", " + p.right.string());
    double cms = 0;
    DisparityMap d = m.run(l, r, cms);
    compute_total += cms;
    fs::path out = outdir / (p.name + "." + c.format);
    write_disparity(out, d, c.o.write);
    if (c.color) write_color_png(outdir / (p.name + "_color.png"), d, c.o.params.min_disparity, c.o.params.max_disparity);
    evk::verbose_line(c.o.common, out.string() + ": " + std::to_string(d.width) + "x" + std::to_string(d.height) +
                                      ", compute " + pct(cms) + " ms");
    items.push_back({{"left", p.left.string()}, {"right", p.right.string()}, {"output", out.string()},
                     {"compute_ms", cms}});
  }
  const double total_s = ms_since(t0) / 1000.0;
  const double pps = pairs.size() / total_s;
  if (c.o.common.json) {
    std::cout << nlohmann::json{{"pairs", items}, {"count", pairs.size()}, {"seconds", total_s},
                                {"pairs_per_second", pps}, {"compute_ms", compute_total},
                                {"backend", m.backend()}, {"kernel", m.variant()}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("%zu pairs in %.3f s: %.2f pairs/s (%s, %s; compute %.1f ms total)\n", pairs.size(), total_s, pps,
                m.backend().c_str(), m.variant().c_str(), compute_total);
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto app = evk::make_app("stereo", "Disparity maps from rectified stereo pairs (Stam's stereoKernel, genetically improved per GPU)");

  DisparityCmd dc;
  auto* dcmd = app->add_subcommand("disparity", "Disparity map of a rectified stereo pair");
  dcmd->add_option("LEFT", dc.left, "Left image (PGM/PPM, or any format OpenCV reads)")->required();
  dcmd->add_option("RIGHT", dc.right, "Right image")->required();
  dcmd->add_option("-o,--output", dc.out, "Output: .pfm (float, invalid +inf), .png or .pgm (16-bit, invalid 0)")
      ->required();
  dcmd->add_option("--color", dc.color, "Also write a colour visualisation (.png; invalid black)");
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
  auto* bcmd = app->add_subcommand("batch", "Many pairs in one GPU context: a PAIRS.txt ('LEFT RIGHT [NAME]' per line) "
                                            "or a DIR with <name>L.<ext>/<name>R.<ext> pairs");
  bcmd->add_option("INPUT", bc.input, "PAIRS.txt or DIR")->required();
  bcmd->add_option("-o,--output-dir", bc.outdir, "Output directory (must exist)")->required();
  bcmd->add_option("--format", bc.format, "Output format")->check(CLI::IsMember({"pfm", "png", "pgm"}))->capture_default_str();
  bcmd->add_flag("--color", bc.color, "Also write <name>_color.png");
  add_match_options(bcmd, bc.o);
  bcmd->callback([&] { run_batch(bc); });

  evk::add_devices_command(*app, "stereo", [] { return make_registry(); });
  evk::gi::add_gi_command(*app, [] { return evk::stereo::make_gi_problem(); }, [] { return make_registry(); });
  return evk::run_cli(*app, argc, argv);
}
