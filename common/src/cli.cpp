#include "evk/cli.hpp"
#include "evk/fatbin.hpp"

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "evk/atomic_file.hpp"
#include "evk/cuda_check.hpp"
#include "evk/embedded.hpp"
#include "evk/energy.hpp"
#include "evk/error.hpp"
#include "evk/install_dirs.hpp"
#include "evk/strings.hpp"

#ifndef EVK_VERSION
#define EVK_VERSION "0.0.0"
#endif
#ifndef EVK_CUDA_ARCHS
#define EVK_CUDA_ARCHS ""
#endif

namespace evk {

void add_common_options(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--backend", o.backend, "Where to compute: auto (GPU when usable), cpu or gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  cmd->add_option("--kernel", o.kernel,
                  "Kernel variant: auto (evolved for this GPU when available), original, evolved, or a genome FILE")
      ->capture_default_str();
  cmd->add_option("--device", o.device, "CUDA device index")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_flag("--verbose,-v", o.verbose, "Say what runs where, with per-stage times");
  cmd->add_flag("--json", o.json, "Machine-readable summary on stdout");
  // benchmarks only (bench/gi/first_run_latency.sh): every evolved variant through NVRTC, as before
  // variants were shipped; hidden from --help
  cmd->add_flag_callback("--no-embedded-variants", [] { set_embedded_variants_enabled(false); },
                         "Compile shipped variants with NVRTC instead of loading their embedded fatbins")
      ->group("");
}

BackendChoice choose_backend(const CommonOptions& o) {
  const GpuEnvironment& env = gpu_environment();
  BackendChoice c;
  if (o.backend == "cpu") {
    c.reason = "--backend cpu";
    return c;
  }
  if (!env.usable()) {
    if (o.backend == "gpu") input_error("--backend gpu", env.status);
    c.reason = env.status + "; using the CPU backend";
    return c;
  }
  if (o.device < 0 || o.device >= static_cast<int>(env.devices.size()))
    input_error("--device", "no CUDA device " + std::to_string(o.device) + " (" + std::to_string(env.devices.size()) +
                                " found)");
  c.backend = Backend::gpu;
  c.device = env.devices[static_cast<size_t>(o.device)];
  c.reason = "GPU " + std::to_string(c.device.index) + ": " + c.device.name;
  return c;
}

std::unique_ptr<CLI::App> make_app(const std::string& name, const std::string& description) {
  auto app = std::make_unique<CLI::App>(description, name);
  app->set_version_flag("--version", name + " (EvoKernels) " EVK_VERSION);
  app->require_subcommand(1);
  app->fallthrough(false);
  return app;
}

static nlohmann::json device_json(const DeviceInfo& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count},
          {"memory_bytes", d.total_mem},
          {"l2_bytes", d.l2_bytes},
          {"clock_khz", d.clock_khz}};
}

// Every evolved variant the registry holds (built-in and overlay), with its keys and provenance.
static nlohmann::json variants_json(const Registry& reg) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& v : reg.variants()) {
    if (v.is_original()) continue;
    nlohmann::json cs = nlohmann::json::array();
    for (const auto& c : reg.constraints_of(v)) cs.push_back(c.text());
    nlohmann::json prov = nlohmann::json::object();
    for (const auto& [k, val] : v.header) {
      if (k == "kernel" || k == "cc" || k == "device" || k == "classes" || k == "requires" || k == "id") continue;
      if (k == "validated") {
        prov[k].push_back(val);  // one line per size class
      } else {
        prov[k] = val;
      }
    }
    out.push_back({{"id", v.id},
                   {"kernel", v.kernel},
                   {"source", to_string(v.source)},
                   {"compute_capability", format_cc(v.cc)},
                   {"device", v.device_name},
                   {"classes", v.classes.empty() ? nlohmann::json("all") : nlohmann::json(v.classes)},
                   {"constraints", cs},
                   {"embedded_fatbin", v.embedded != nullptr && v.embedded->fatbin_size > 0},
                   {"path", v.path},
                   {"genome", v.genome},
                   {"provenance", prov}});
  }
  return out;
}

namespace {
// The code this build's fatbins carry (EVK_CUDA_ARCHS, "75,80,...,121"): machine code for each
// architecture and PTX of the newest (cmake/EvkKernel.cmake).
std::vector<FatbinEntry> build_code() {
  std::vector<FatbinEntry> e;
  const std::string archs = EVK_CUDA_ARCHS;
  for (std::size_t i = 0; i < archs.size();) {
    const std::size_t j = std::min(archs.find(',', i), archs.size());
    if (j > i) e.push_back({false, std::atoi(archs.substr(i, j - i).c_str())});
    i = j + 1;
  }
  if (!e.empty()) e.push_back({true, e.back().arch});
  return e;
}

// What a GPU runs of this build, in words.
std::string code_for_device(const DeviceInfo& d) {
  const std::string c = fatbin_code_for(build_code(), d.cc());
  return c.empty() ? "none of this build's code (" + fatbin_summary(build_code()) + ") runs on compute capability " +
                         std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)
                   : c;
}
}  // namespace

void add_devices_command(CLI::App& app, const std::string& tool, const std::function<Registry()>& make_registry) {
  auto* cmd = app.add_subcommand("devices", "List GPUs and, per kernel, the variant that would run on each");
  auto json = std::make_shared<bool>(false);
  auto kernel = std::make_shared<std::string>("auto");
  cmd->add_flag("--json", *json, "Machine-readable output");
  cmd->add_option("--kernel", *kernel, "Variant choice to resolve: auto, original, evolved or a genome FILE")
      ->capture_default_str();
  cmd->callback([tool, make_registry, json, kernel] {
    const GpuEnvironment& env = gpu_environment();
    Registry reg = make_registry();
    std::vector<std::string> overlay_problems;
    std::filesystem::path overlay = default_overlay_dir();
    if (!overlay.empty()) overlay_problems = reg.load_overlay(overlay);
    if (*kernel != "auto" && *kernel != "original" && *kernel != "evolved") read_genome_file(*kernel);  // validate

    nlohmann::json j;
    j["tool"] = tool;
    j["version"] = EVK_VERSION;
    j["built_with_cuda"] = env.built_with_cuda;
    j["cuda_architectures"] = EVK_CUDA_ARCHS;
    j["driver_version"] = format_cuda_version(env.driver_version);
    j["runtime_version"] = format_cuda_version(env.runtime_version);
    j["status"] = env.status;
    j["overlay_dir"] = overlay.string();
    j["data_dir"] = data_dir().string();
    j["overlay_problems"] = overlay_problems;
    j["backend"] = env.usable() ? "gpu" : "cpu";
    j["variants"] = variants_json(reg);
    j["devices"] = nlohmann::json::array();
    for (const auto& d : env.devices) {
      nlohmann::json dj = device_json(d);
      dj["code"] = code_for_device(d);
      std::string no_meter;
      dj["energy_counter"] = {{"available", open_energy_meter(d.index, no_meter) != nullptr}, {"reason", no_meter}};
      for (const auto& k : reg.kernels()) {
        Selection s = reg.select(k, DeviceKey{d.cc(), d.name}, *kernel);
        dj["kernels"][k] = {{"variant", s.variant.id}, {"source", to_string(s.variant.source)}, {"rule", s.rule}};
        // and per size class that some variant of this kernel names
        std::vector<std::string> classes;
        for (const auto& v : reg.variants())
          for (const auto& c : v.classes)
            if (v.kernel == k && std::find(classes.begin(), classes.end(), c) == classes.end()) classes.push_back(c);
        for (const auto& c : classes) {
          Selection sc = reg.select(k, DeviceKey{d.cc(), d.name}, *kernel, Request{c, {}});
          dj["kernels"][k]["by_class"][c] = {{"variant", sc.variant.id}, {"rule", sc.rule}};
        }
      }
      j["devices"].push_back(dj);
    }
    if (*json) {
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::printf("%s %s: %s (CUDA runtime %s, driver %s)\n", tool.c_str(), EVK_VERSION,
                env.built_with_cuda ? ("built with CUDA for " + fatbin_summary(build_code())).c_str() : "CPU-only build",
                format_cuda_version(env.runtime_version).c_str(), format_cuda_version(env.driver_version).c_str());
    std::printf("Shipped and overlay kernel variants:%s\n", reg.variants().size() > reg.kernels().size() ? "" : " none");
    for (const auto& v : reg.variants()) {
      if (v.is_original()) continue;
      std::string cls, cs;
      for (const auto& c : v.classes) cls += (cls.empty() ? "" : ", ") + c;
      for (const auto& c : reg.constraints_of(v)) cs += "; " + c.text();
      std::printf("  variant %s/%s [%s%s]: %s%s, size classes %s%s\n", v.kernel.c_str(), v.id.c_str(), to_string(v.source),
                  v.embedded && v.embedded->fatbin_size ? ", embedded fatbin" : "", format_cc(v.cc).c_str(),
                  v.device_name.empty() ? "" : (" " + v.device_name).c_str(), cls.empty() ? "all" : cls.c_str(), cs.c_str());
    }
    if (const auto d = data_dir(); !d.empty()) std::printf("Installed data: %s\n", d.string().c_str());
    if (!env.usable()) {
      std::printf("No usable GPU: %s.\nThe CPU backend will be used.\n", env.status.c_str());
      return;
    }
    for (const auto& d : env.devices) {
      std::printf("GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, L2 %.0f MiB\n", d.index, d.name.c_str(),
                  d.cc_major, d.cc_minor, d.sm_count, static_cast<double>(d.total_mem) / (1ull << 30),
                  static_cast<double>(d.l2_bytes) / (1 << 20));
      std::printf("  code: %s\n", code_for_device(d).c_str());
      std::string no_meter;
      const bool meter = open_energy_meter(d.index, no_meter) != nullptr;
      std::printf("  energy counter: %s\n", meter ? "available (NVML)" : ("none: " + no_meter).c_str());
      for (const auto& k : reg.kernels()) {
        Selection s = reg.select(k, DeviceKey{d.cc(), d.name}, *kernel);
        std::printf("  kernel %-16s %s [%s] (%s)\n", k.c_str(), s.variant.id.c_str(), to_string(s.variant.source),
                    s.rule.c_str());
      }
    }
    std::printf("Overlay directory: %s\n", overlay.string().c_str());
    for (const auto& p : overlay_problems) std::printf("  warning: %s\n", p.c_str());
  });
}

int run_cli(CLI::App& app, int argc, char** argv) {
  const std::string name = app.get_name();
  return run_guarded(name, [&] {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      std::string msg = e.what();
      if (msg.empty()) msg = e.get_name();
      return report_error(name, msg + " (see --help)", kExitInput);
    }
    // what was printed on stdout (summaries, --json, SAM to "-") must have reached it
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))
      return report_error(name, "standard output: write failed (disk full or closed?)", kExitInput);
    return static_cast<int>(kExitOk);
  });
}

std::vector<int> parse_devices(const std::string& spec, const std::function<int()>& device_count) {
  std::vector<int> d;
  if (spec == "all") {
    const int n = device_count ? device_count() : static_cast<int>(gpu_environment().devices.size());
    for (int i = 0; i < n; ++i) d.push_back(i);
    return d;
  }
  std::size_t p = 0;
  while (p <= spec.size()) {
    const std::size_t c = std::min(spec.find(',', p), spec.size());
    const std::string item = trim(spec.substr(p, c - p));
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      input_error("--devices", "expected 'all' or device indices like 0,1 (got '" + spec + "')");
    const int v = std::stoi(item);
    if (std::find(d.begin(), d.end(), v) != d.end()) input_error("--devices", "device " + item + " given twice");
    d.push_back(v);
    p = c + 1;
  }
  return d;
}

void verbose_line(const CommonOptions& o, const std::string& line) {
  if (o.verbose) std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace evk
