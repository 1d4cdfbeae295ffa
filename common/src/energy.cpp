// The GPU energy meter: NVML opened at run time, the CUDA device matched by PCI bus id, and the
// burst that turns a counter updated every few tens of milliseconds into joules per launch.
#include "evk/energy.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <mutex>

#include "evk/device.hpp"

#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

namespace evk {

namespace {
constexpr const char* kNvmlSoname = "libnvidia-ml.so.1";

// libnvidia-ml.so.1 through the five entry points the meter needs (declared here: no nvml.h).
class SystemNvml : public Nvml {
 public:
  using Void = int (*)();
  using ByBus = int (*)(const char*, void**);
  using Energy = int (*)(void*, unsigned long long*);
  using ErrorString = const char* (*)(int);

  Void init_ = nullptr, shutdown_ = nullptr;
  ByBus by_bus_ = nullptr;
  Energy energy_ = nullptr;
  ErrorString error_ = nullptr;

  int init() override { return init_(); }
  int shutdown() override { return shutdown_(); }
  int device_by_pci_bus_id(const char* bus_id, void** device) override { return by_bus_(bus_id, device); }
  int total_energy_mj(void* device, unsigned long long* mj) override { return energy_(device, mj); }
  std::string error_string(int code) override {
    const char* s = error_(code);
    return s ? s : "NVML error " + std::to_string(code);
  }
};

template <class F>
bool bind(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  return f != nullptr;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// "Not Supported (3)": NVML's text and the code.
std::string nvml_error(Nvml& n, int code) { return one_line(n.error_string(code)) + " (" + std::to_string(code) + ")"; }

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

std::shared_ptr<Nvml> system_nvml(std::string& why) {
  static std::shared_ptr<Nvml> nvml;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen(kNvmlSoname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      error = std::string("NVML is not available (") + (e ? one_line(e) : std::string(kNvmlSoname) + ": cannot be opened") +
              "): the NVIDIA driver's " + kNvmlSoname + " is needed to read the GPU's energy counter";
      return;
    }
    auto n = std::make_shared<SystemNvml>();
    const bool ok = bind(h, "nvmlInit_v2", n->init_) && bind(h, "nvmlShutdown", n->shutdown_) &&
                    bind(h, "nvmlDeviceGetHandleByPciBusId_v2", n->by_bus_) &&
                    bind(h, "nvmlDeviceGetTotalEnergyConsumption", n->energy_) &&
                    bind(h, "nvmlErrorString", n->error_);
    if (!ok) {
      error = std::string("NVML library ") + kNvmlSoname + " lacks an entry point the energy meter needs (driver too old?)";
      dlclose(h);
      return;
    }
    nvml = std::move(n);  // the library stays loaded for the life of the process
  });
  if (!nvml) why = error;
  return nvml;
}

std::unique_ptr<EnergyMeter> EnergyMeter::open(std::shared_ptr<Nvml> nvml, const std::string& bus_id, std::string& why) {
  if (!nvml) {
    why = "NVML is not available";
    return nullptr;
  }
  const int ri = nvml->init();
  if (ri != kNvmlSuccess) {
    why = "NVML did not initialise: " + nvml_error(*nvml, ri);
    return nullptr;
  }
  void* device = nullptr;
  const int rd = nvml->device_by_pci_bus_id(bus_id.c_str(), &device);
  if (rd != kNvmlSuccess || !device) {
    why = "NVML has no GPU at PCI bus id " + bus_id + ": " + nvml_error(*nvml, rd);
    nvml->shutdown();
    return nullptr;
  }
  unsigned long long mj = 0;
  const int re = nvml->total_energy_mj(device, &mj);
  if (re != kNvmlSuccess) {
    why = "the GPU at PCI bus id " + bus_id + " has no readable energy counter (nvmlDeviceGetTotalEnergyConsumption: " +
          nvml_error(*nvml, re) + (re == kNvmlNotSupported ? "; the counter needs a Volta or newer GPU" : "") + ")";
    nvml->shutdown();
    return nullptr;
  }
  return std::unique_ptr<EnergyMeter>(new EnergyMeter(std::move(nvml), device, bus_id));
}

EnergyMeter::~EnergyMeter() {
  if (nvml_) nvml_->shutdown();
}

bool EnergyMeter::read_mj(unsigned long long& mj, std::string& why) {
  const int r = nvml_->total_energy_mj(device_, &mj);
  if (r == kNvmlSuccess) return true;
  why = "reading the energy counter failed: " + nvml_error(*nvml_, r);
  return false;
}

std::unique_ptr<EnergyMeter> open_energy_meter(int device, std::string& why) {
#if defined(EVK_HAVE_CUDA)
  const GpuEnvironment& env = gpu_environment();
  if (!env.usable()) {
    why = "no usable GPU (" + env.status + ")";
    return nullptr;
  }
  char bus[64] = {0};
  const cudaError_t e = cudaDeviceGetPCIBusId(bus, sizeof bus, device);
  if (e != cudaSuccess) {
    cudaGetLastError();
    why = "no CUDA device " + std::to_string(device) + " (" + cudaGetErrorString(e) + ")";
    return nullptr;
  }
  std::string no_lib;
  std::shared_ptr<Nvml> nvml = system_nvml(no_lib);
  if (!nvml) {
    why = no_lib;
    return nullptr;
  }
  return EnergyMeter::open(std::move(nvml), bus, why);
#else
  (void)device;
  why = "built without CUDA (CPU-only build)";
  return nullptr;
#endif
}

BurstEnergy energy_between(const EnergySample& a, const EnergySample& b, int changes) {
  BurstEnergy r;
  r.changes = changes;
  r.launches = b.launches - a.launches;
  r.seconds = b.t_s - a.t_s;
  if (b.mj < a.mj) {
    r.why = "the energy counter went backwards (" + std::to_string(a.mj) + " to " + std::to_string(b.mj) +
            " mJ; the driver was reloaded?)";
  } else if (b.mj == a.mj) {
    r.why = "the energy counter did not move";
  } else if (r.launches <= 0) {
    r.why = "no launch completed between two counter changes";
  } else if (!(r.seconds > 0)) {
    r.why = "no time passed between two counter changes";
  } else {
    const double joules = static_cast<double>(b.mj - a.mj) / 1000.0;
    r.joules_per_launch = joules / static_cast<double>(r.launches);
    r.watts = joules / r.seconds;
    r.ok = true;
  }
  return r;
}

namespace {
// One step of a burst and the counter after it: false (and r.why) when the counter cannot be read,
// went backwards, or the burst ran out of time.
struct BurstState {
  EnergyMeter& meter;
  const std::function<long long()>& step;
  const std::function<double()>& clock;
  double t0 = 0, timeout = 0;
  long long launches = 0;
  unsigned long long last_mj = 0;
  int seen = 0;  // counter changes so far

  bool next(EnergySample& s, bool& changed, BurstEnergy& r) {
    launches += step();
    unsigned long long mj = 0;
    if (!meter.read_mj(mj, r.why)) return false;
    s = {clock(), mj, launches};
    if (mj < last_mj) {
      r.why = "the energy counter went backwards (" + std::to_string(last_mj) + " to " + std::to_string(mj) +
              " mJ; the driver was reloaded?)";
      return false;
    }
    changed = mj != last_mj;
    seen += changed ? 1 : 0;
    last_mj = mj;
    if (!changed && s.t_s - t0 > timeout) {
      char b[160];
      std::snprintf(b, sizeof b, "the energy counter changed %d time(s) in %.1f s of launches", seen, s.t_s - t0);
      r.why = b;
      return false;
    }
    return true;
  }
};
}  // namespace

BurstEnergy measure_burst(EnergyMeter& meter, const std::function<long long()>& step, const BurstOptions& o,
                          const std::function<double()>& clock_in) {
  const std::function<double()> clock = clock_in ? clock_in : std::function<double()>(steady_seconds);
  BurstEnergy r;
  BurstState st{meter, step, clock};
  st.timeout = o.timeout_s > 0 ? o.timeout_s : 2.0 + 10.0 * o.window_s;
  st.t0 = clock();
  if (!meter.read_mj(st.last_mj, r.why)) return r;
  EnergySample a, s;
  bool changed = false;
  do {  // to the first counter change: the GPU is busy by then, and the window starts on an edge
    if (!st.next(a, changed, r)) return r;
  } while (!changed);
  EnergySample b = a;
  for (;;) {
    if (!st.next(s, changed, r)) return r;
    if (!changed) continue;
    ++r.changes;
    b = s;
    if (b.t_s - a.t_s >= o.window_s && r.changes >= o.min_changes) break;
  }
  return energy_between(a, b, r.changes);
}

}  // namespace evk
