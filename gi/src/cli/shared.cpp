#include "shared.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "evk/atomic_file.hpp"
#include "evk/cli.hpp"
#include "evk/cuda_library.hpp"
#include "evk/energy.hpp"
#include "evk/error.hpp"
#include "evk/gi/evolve.hpp"
#include "evk/gi/search.hpp"

namespace fs = std::filesystem;

namespace evk::gi::cli {

std::string Context::seed_name() const {
  if (!seeds.make) return "";
  return seed.empty() ? seeds.default_name : seed;
}

std::unique_ptr<Problem> Context::problem() const {
  if (!seeds.make) return make_problem();
  const std::string name = seed_name();
  if (std::find(seeds.names.begin(), seeds.names.end(), name) == seeds.names.end())
    input_error("--seed-kernel", "must be " + choices_text(seeds.names) + " (got '" + name + "')");
  return seeds.make(name);
}

std::string choices_text(const std::vector<std::string>& names) {
  std::string t;
  for (std::size_t i = 0; i < names.size(); ++i) t += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return t;
}

std::string read_genome_arg(const std::string& path) {
  if (path == "-") {
    std::ostringstream s;
    s << std::cin.rdbuf();
    return s.str();
  }
  if (!fs::exists(path)) input_error(path, "no such genome file");
  return read_text(path);
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  AtomicOutput out(path);
  {
    std::ofstream f(out.temp_path(), std::ios::binary);
    f << text;
    if (!f) input_error(path, "write failed");
  }
  out.commit();
}

void write_result_genome(const Problem& p, const DeviceSummary& d, const std::string& source, const std::string& genome,
                         const std::string& out, bool json_out, const std::vector<std::string>& classes,
                         Objective objective) {
  std::vector<std::pair<std::string, std::string>> h = {{"kernel", p.name()}, {"cc", format_cc(d.cc)}, {"device", d.name},
                                                        {"driver", d.driver}, {"cuda", d.cuda}, {"nvrtc", nvrtc_version()},
                                                        {"source", source}, {"date", utc_now()}};
  if (!classes.empty()) h.emplace_back("measured_on", join(classes));  // the size classes minimize/tune measured on
  if (objective != Objective::time) h.emplace_back("objective", objective_name(objective));  // what it was measured for
  if (!out.empty() || !json_out) write_output(out, genome_file(h, genome));
}

namespace {
Worker::Options worker_options(const Context& ctx, int device, const std::string& log, int keep_cases) {
  Worker::Options o;
  o.argv = {"/proc/self/exe", ctx.command};
  if (ctx.seeds.make) o.argv.insert(o.argv.end(), {"--seed-kernel", ctx.seed_name()});
  o.argv.insert(o.argv.end(), {"worker", "--device", std::to_string(device)});
  o.stderr_path = log;
  o.keep_cases = std::max(1, keep_cases);
  return o;
}
}  // namespace

Evaluators make_evaluators(const Context& ctx, const Problem& p, const std::string& devices_spec, int device,
                           const std::string& log, const GpuEvaluatorOptions& eo, int keep_cases) {
  Evaluators r;
  if (devices_spec.empty()) {
    r.devices = {device};
    r.ev = make_gpu_evaluator(p, std::make_unique<Worker>(worker_options(ctx, device, log, keep_cases)), eo);
    return r;
  }
  std::vector<std::unique_ptr<Evaluator>> lanes;
  // all: the devices the first worker sees (at least its own)
  r.devices = parse_devices(devices_spec, [&] {
    auto w0 = std::make_unique<Worker>(worker_options(ctx, 0, log, keep_cases));
    const int n = w0->device().count;
    lanes.push_back(make_gpu_evaluator(p, std::move(w0), eo));
    return std::max(1, n);
  });
  for (std::size_t k = lanes.size(); k < r.devices.size(); ++k) {
    const int d = r.devices[k];
    const std::string l = log.empty() || k == 0 ? log : log + "." + std::to_string(d);
    lanes.push_back(make_gpu_evaluator(p, std::make_unique<Worker>(worker_options(ctx, d, l, keep_cases)), eo));
  }
  if (lanes.size() == 1) {
    r.ev = std::move(lanes[0]);
  } else {
    r.ev = make_lane_evaluator(std::move(lanes));
    r.ev->device();  // refuses mixed kinds of GPU before any work
  }
  return r;
}

void require_energy_counter(Objective o, const std::string& devices_spec, int device) {
  if (!needs_energy(o)) return;
  std::vector<int> ds = devices_spec.empty() ? std::vector<int>{device} : parse_devices(devices_spec);
  if (ds.empty()) ds = {0};
  for (int d : ds) {
    std::string why;
    if (!open_energy_meter(d, why))
      input_error("--objective", std::string(objective_name(o)) + " needs the GPU's energy counter, and device " +
                                     std::to_string(d) + " has none: " + why);
  }
}

void add_objective_options(CLI::App& c, GenomeArgs& o, const char* what) {
  c.add_option("--objective", o.objective,
               std::string(what) + ": time (median ms), energy (joules per launch, from the GPU's energy counter) "
               "or edp (joules x ms); energy and edp need the counter (NVML, Volta or newer)")
      ->capture_default_str();
  c.add_option("--energy-window", o.energy_window,
               "energy, edp: milliseconds of back-to-back launches per measurement for the energy counter (at least "
               "2 counter changes too)")
      ->capture_default_str()->check(CLI::Range(1.0, 60000.0));
}

Objective objective_of(const GenomeArgs& o) {
  const Objective obj = parse_objective(o.objective);
  require_energy_counter(obj, "", o.device);
  return obj;
}

std::vector<std::string> classes_of(const Problem& p, const std::string& cls) {
  if (cls.empty()) return p.class_names();
  p.check_class(cls);
  return {cls};
}

std::vector<CaseRef> probes_of(const Problem& p, const std::vector<std::string>& classes, std::uint64_t seed) {
  std::vector<int> n;
  for (const auto& c : classes) n.push_back(p.probe_cases(c));
  return probe_cases(classes, n, seed);
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string t;
  for (const auto& x : v) t += (t.empty() ? "" : sep) + x;
  return t;
}

std::string default_dir(const std::string& prefix, const Problem& p) {
  std::string t = utc_now();
  for (auto& ch : t)
    if (ch == ':') ch = '-';
  return prefix + "-" + p.name() + "-" + t;
}

fs::path overlay_of(const std::string& opt) {
  const fs::path d = opt.empty() ? evk::default_overlay_dir() : fs::path(opt);
  if (d.empty()) input_error("--overlay", "no overlay directory (set EVK_OVERLAY_DIR or HOME, or give --overlay)");
  return d;
}

void step_progress(bool tty, const char* what, int done, int total) {
  if (tty) std::fprintf(stderr, "\r\033[K%s %d/%d", what, done, total);
  if (tty && done == total) std::fprintf(stderr, "\n");
}

}  // namespace evk::gi::cli
