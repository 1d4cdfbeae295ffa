// GPU energy from NVML's total-energy counter (millijoules since the driver loaded; Volta and
// newer). NVML is opened at run time (dlopen of libnvidia-ml.so.1; no NVML header or link needed),
// so every binary still starts on a host without a driver. A host without the library, the driver,
// the device or the counter gets no meter and a one-line reason, never a crash; nothing here prints.
//
// NVML is reached through the Nvml interface, so CPU tests drive the meter and the burst logic with
// a fake counter (and a fake clock). The counter moves in steps (the driver refreshes it every few
// tens of milliseconds), so energy per launch comes from a burst of launches spanning several of
// them: measure_burst.
#pragma once
#include <functional>
#include <memory>
#include <string>

namespace evk {

// The NVML calls the meter makes, with NVML's signatures: return codes are nvmlReturn_t values
// (0 = success), a device is NVML's opaque nvmlDevice_t.
class Nvml {
 public:
  virtual ~Nvml() = default;
  virtual int init() = 0;                                                   // nvmlInit_v2
  virtual int shutdown() = 0;                                               // nvmlShutdown
  virtual int device_by_pci_bus_id(const char* bus_id, void** device) = 0;  // nvmlDeviceGetHandleByPciBusId_v2
  virtual int total_energy_mj(void* device, unsigned long long* mj) = 0;    // nvmlDeviceGetTotalEnergyConsumption
  virtual std::string error_string(int code) = 0;                           // nvmlErrorString
};
// The nvmlReturn_t values the meter tells apart.
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlNotSupported = 3;

// The system's NVML (libnvidia-ml.so.1, opened once per process); null with `why` (one line) when
// it cannot be opened or lacks one of the entry points above.
std::shared_ptr<Nvml> system_nvml(std::string& why);

// One GPU's energy counter. Holds one NVML initialisation (NVML counts them) until destroyed.
class EnergyMeter {
 public:
  // The counter of the GPU at PCI bus id `bus_id` ("0000:3b:00.0") through `nvml` (null: none):
  // null and `why` (one line) when NVML does not initialise, knows no such GPU, or the GPU has no
  // counter (or it cannot be read).
  static std::unique_ptr<EnergyMeter> open(std::shared_ptr<Nvml> nvml, const std::string& bus_id, std::string& why);
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  // The counter now (millijoules since the driver loaded); false and `why` when it cannot be read.
  bool read_mj(unsigned long long& mj, std::string& why);
  const std::string& bus_id() const { return bus_id_; }

 private:
  EnergyMeter(std::shared_ptr<Nvml> nvml, void* device, std::string bus_id)
      : nvml_(std::move(nvml)), device_(device), bus_id_(std::move(bus_id)) {}
  std::shared_ptr<Nvml> nvml_;
  void* device_ = nullptr;
  std::string bus_id_;
};

// The meter of CUDA device `device`, matched to NVML by its PCI bus id (so CUDA_VISIBLE_DEVICES
// and NVML's own numbering cannot mix GPUs up), through system_nvml(). Null and `why` (one line)
// without a usable GPU, NVML or counter.
std::unique_ptr<EnergyMeter> open_energy_meter(int device, std::string& why);

// One reading during a burst: when (seconds on the burst's clock), the counter, launches completed.
struct EnergySample {
  double t_s = 0;
  unsigned long long mj = 0;
  long long launches = 0;
};

// Energy of the launches between two counter changes.
struct BurstEnergy {
  bool ok = false;
  double joules_per_launch = 0;
  double watts = 0;    // average power between the two changes
  double seconds = 0;  // between the two changes
  long long launches = 0;
  int changes = 0;     // counter changes after the first one
  std::string why;     // !ok: one line
};

// The arithmetic of a burst: (b.mj - a.mj) / 1000 joules over b.launches - a.launches launches and
// b.t_s - a.t_s seconds. Not ok when the counter went backwards or did not move, or no launch or no
// time lies between the samples.
BurstEnergy energy_between(const EnergySample& a, const EnergySample& b, int changes);

struct BurstOptions {
  double window_s = 0.2;  // at least this long between the first and the last counter change used
  int min_changes = 2;    // and at least this many counter changes after the first
  double timeout_s = 0;   // give up after this long (0: 2 s + 10 x window_s)
};

// Runs `step` (enqueues launches, waits for them, returns how many it ran) again and again, reading
// the counter after each: from the first counter change (the GPU is busy by then and the start is on
// a counter edge) until window_s has passed and min_changes more changes were seen, ending on a
// change. `clock` (seconds; default: a steady clock) is for tests. A step should take a few ms at
// most: that is how late a counter change may be seen.
BurstEnergy measure_burst(EnergyMeter& meter, const std::function<long long()>& step, const BurstOptions& o = {},
                          const std::function<double()>& clock = {});

}  // namespace evk
