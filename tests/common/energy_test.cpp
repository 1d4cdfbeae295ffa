// The GPU energy meter (evk/energy.hpp) on the CPU: a fake NVML drives opening (every reason there
// can be no meter), reading, the burst arithmetic and the burst loop on a fake clock, whose counter
// moves in steps like the driver's.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "evk/device.hpp"
#include "evk/energy.hpp"

namespace {

// NVML with one GPU at `bus`; the counter is counter() (milliJoules) unless a return code is set.
class FakeNvml : public evk::Nvml {
 public:
  int init_rc = 0, bus_rc = 0, energy_rc = 0;
  int fail_energy_after = -1;  // reads that succeed before energy_rc is returned (-1: from the start)
  std::string bus = "0000:3b:00.0";
  std::function<unsigned long long()> counter = [] { return 1000ull; };
  int inits = 0, shutdowns = 0, reads = 0;

  int init() override {
    ++inits;
    return init_rc;
  }
  int shutdown() override {
    ++shutdowns;
    return 0;
  }
  int device_by_pci_bus_id(const char* b, void** d) override {
    if (bus_rc) return bus_rc;
    if (bus != b) return 6;  // NVML_ERROR_NOT_FOUND
    *d = &tag_;
    return 0;
  }
  int total_energy_mj(void* d, unsigned long long* mj) override {
    EXPECT_EQ(d, &tag_);
    ++reads;
    if (energy_rc && (fail_energy_after < 0 || reads > fail_energy_after)) return energy_rc;
    *mj = counter();
    return 0;
  }
  std::string error_string(int c) override {
    switch (c) {
      case 3: return "Not Supported";
      case 6: return "Not Found";
      case 9: return "Driver Not Loaded";
      case 15: return "GPU is lost";
    }
    return "Unknown Error";
  }

 private:
  int tag_ = 0;
};

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == std::string::npos; }

TEST(EnergyMeter, OpensReadsAndReleasesNvml) {
  auto n = std::make_shared<FakeNvml>();
  n->counter = [] { return 123456789ull; };
  std::string why;
  {
    auto m = evk::EnergyMeter::open(n, "0000:3b:00.0", why);
    ASSERT_TRUE(m) << why;
    EXPECT_EQ(m->bus_id(), "0000:3b:00.0");
    unsigned long long mj = 0;
    ASSERT_TRUE(m->read_mj(mj, why)) << why;
    EXPECT_EQ(mj, 123456789ull);
    EXPECT_EQ(n->inits, 1);
    EXPECT_EQ(n->shutdowns, 0);
  }
  EXPECT_EQ(n->shutdowns, 1);  // one NVML initialisation per meter, released with it
}

TEST(EnergyMeter, NoMeterGivesOneLineReasonsAndBalancesNvml) {
  std::string why;
  EXPECT_FALSE(evk::EnergyMeter::open(nullptr, "0000:3b:00.0", why));
  EXPECT_NE(why.find("NVML is not available"), std::string::npos) << why;

  {  // the driver is not loaded: NVML does not initialise (and is not shut down)
    auto n = std::make_shared<FakeNvml>();
    n->init_rc = 9;
    why.clear();
    EXPECT_FALSE(evk::EnergyMeter::open(n, "0000:3b:00.0", why));
    EXPECT_NE(why.find("did not initialise"), std::string::npos) << why;
    EXPECT_NE(why.find("Driver Not Loaded (9)"), std::string::npos) << why;
    EXPECT_EQ(n->shutdowns, 0);
    EXPECT_TRUE(one_line(why));
  }
  {  // no GPU at that bus id
    auto n = std::make_shared<FakeNvml>();
    why.clear();
    EXPECT_FALSE(evk::EnergyMeter::open(n, "0000:af:00.0", why));
    EXPECT_NE(why.find("0000:af:00.0"), std::string::npos) << why;
    EXPECT_NE(why.find("Not Found (6)"), std::string::npos) << why;
    EXPECT_EQ(n->inits, n->shutdowns);
    EXPECT_TRUE(one_line(why));
  }
  {  // a GPU without the counter (before Volta)
    auto n = std::make_shared<FakeNvml>();
    n->energy_rc = 3;
    why.clear();
    EXPECT_FALSE(evk::EnergyMeter::open(n, "0000:3b:00.0", why));
    EXPECT_NE(why.find("no readable energy counter"), std::string::npos) << why;
    EXPECT_NE(why.find("Not Supported (3)"), std::string::npos) << why;
    EXPECT_NE(why.find("Volta"), std::string::npos) << why;
    EXPECT_EQ(n->inits, n->shutdowns);
    EXPECT_TRUE(one_line(why));
  }
  {  // another error reading the counter: named, without the Volta hint
    auto n = std::make_shared<FakeNvml>();
    n->energy_rc = 15;
    why.clear();
    EXPECT_FALSE(evk::EnergyMeter::open(n, "0000:3b:00.0", why));
    EXPECT_NE(why.find("GPU is lost (15)"), std::string::npos) << why;
    EXPECT_EQ(why.find("Volta"), std::string::npos) << why;
  }
}

// On this host: either a meter, or none with a reason (no crash, one line); without a usable GPU
// there is never a meter.
TEST(EnergyMeter, ThisHostHasAMeterOrSaysWhyNot) {
  std::string why;
  auto m = evk::open_energy_meter(0, why);
  if (!evk::gpu_environment().usable()) {
    EXPECT_FALSE(m);
  }
  if (!m) {
    EXPECT_TRUE(one_line(why)) << "'" << why << "'";
  }
  std::string lib_why;
  if (!evk::system_nvml(lib_why)) {
    EXPECT_NE(lib_why.find("libnvidia-ml.so.1"), std::string::npos) << lib_why;
  }
  EXPECT_FALSE(evk::open_energy_meter(-1, why));
}

TEST(EnergyBurst, ArithmeticBetweenTwoCounterChanges) {
  // 60 J (60000 mJ) over 100 launches and 0.5 s
  auto r = evk::energy_between({1.0, 1000, 10}, {1.5, 61000, 110}, 3);
  ASSERT_TRUE(r.ok) << r.why;
  EXPECT_DOUBLE_EQ(r.joules_per_launch, 60.0 / 100);
  EXPECT_DOUBLE_EQ(r.watts, 60.0 / 0.5);
  EXPECT_DOUBLE_EQ(r.seconds, 0.5);
  EXPECT_EQ(r.launches, 100);
  EXPECT_EQ(r.changes, 3);
  // a counter that went backwards (a wrap or a driver reload) is not a negative energy
  r = evk::energy_between({1.0, 5000, 10}, {1.5, 4000, 110}, 2);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.why.find("went backwards"), std::string::npos) << r.why;
  EXPECT_EQ(r.joules_per_launch, 0);
  r = evk::energy_between({1.0, 5000, 10}, {1.5, 5000, 110}, 2);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.why.find("did not move"), std::string::npos) << r.why;
  r = evk::energy_between({1.0, 5000, 10}, {1.5, 6000, 10}, 2);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.why.find("no launch"), std::string::npos) << r.why;
  r = evk::energy_between({1.5, 5000, 10}, {1.5, 6000, 20}, 2);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.why.find("no time"), std::string::npos) << r.why;
}

// A simulated GPU: `watts` while launches run, one launch takes launch_us; the driver refreshes
// the counter every period_us (the counter holds the energy up to the last refresh). Integer
// microseconds, so that edges fall exactly where the arithmetic says.
struct SimGpu {
  double watts = 250;
  long long launch_us = 500, period_us = 20000;
  int launches_per_step = 4;
  long long now_us = 0;
  unsigned long long base_mj = 7000000;

  unsigned long long counter() const {
    const long long refreshed_us = now_us / period_us * period_us;
    return base_mj + static_cast<unsigned long long>(watts * static_cast<double>(refreshed_us) / 1000.0 + 0.5);
  }
  long long step() {
    now_us += launch_us * launches_per_step;
    return launches_per_step;
  }
  double clock() const { return static_cast<double>(now_us) * 1e-6; }
};

evk::BurstEnergy burst(SimGpu& gpu, FakeNvml& n, const evk::BurstOptions& o) {
  n.counter = [&gpu] { return gpu.counter(); };
  std::string why;
  auto m = evk::EnergyMeter::open(std::shared_ptr<FakeNvml>(&n, [](FakeNvml*) {}), "0000:3b:00.0", why);
  EXPECT_TRUE(m) << why;
  if (!m) return {};
  return evk::measure_burst(*m, [&gpu] { return gpu.step(); }, o, [&gpu] { return gpu.clock(); });
}

TEST(EnergyBurst, JoulesPerLaunchAndWattsOfAQuantisedCounter) {
  FakeNvml n;
  SimGpu gpu;  // 250 W, 0.5 ms launches, steps of 2 ms, counter every 20 ms: edges seen exactly
  auto r = burst(gpu, n, {});
  ASSERT_TRUE(r.ok) << r.why;
  EXPECT_NEAR(r.joules_per_launch, gpu.watts * gpu.launch_us * 1e-6, 1e-9);
  EXPECT_NEAR(r.watts, gpu.watts, 1e-6);
  EXPECT_GE(r.seconds, 0.2 - 1e-9);           // the window
  EXPECT_LT(r.seconds, 0.2 + 0.020 + 1e-9);   // ends on the first change after it
  EXPECT_GE(r.changes, 2);
  EXPECT_EQ(r.launches, static_cast<long long>(r.seconds * 1e6 / gpu.launch_us + 0.5));

  // steps of 3 ms: an edge is seen up to one step late at either end; the error stays within that
  SimGpu late;
  late.launches_per_step = 6;
  late.watts = 90;
  r = burst(late, n, {});
  ASSERT_TRUE(r.ok) << r.why;
  const double want = late.watts * late.launch_us * 1e-6;
  EXPECT_NEAR(r.joules_per_launch, want, want * 2 * 0.003 / 0.2);
  EXPECT_NEAR(r.watts, late.watts, late.watts * 2 * 0.003 / 0.2);

  // a slow counter (every 100 ms) with a short window: at least two changes still
  SimGpu slow;
  slow.period_us = 100000;
  r = burst(slow, n, {0.05, 2, 0});
  ASSERT_TRUE(r.ok) << r.why;
  EXPECT_GE(r.changes, 2);
  EXPECT_GE(r.seconds, 0.2 - 1e-9);  // two periods
  EXPECT_NEAR(r.watts, slow.watts, 1e-6);
}

TEST(EnergyBurst, StuckBackwardsOrUnreadableCountersEndTheBurstWithAReason) {
  {  // never moves: gives up at the timeout (on the burst's own clock)
    FakeNvml n;
    SimGpu gpu;
    gpu.watts = 0;
    auto r = burst(gpu, n, {0.2, 2, 0.5});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.why.find("changed 0 time(s)"), std::string::npos) << r.why;
    EXPECT_LT(gpu.clock(), 0.6);
  }
  {  // moves once, then stops: one change, not enough
    FakeNvml n;
    SimGpu gpu;
    gpu.now_us = 1000000;
    n.counter = [&gpu] { return gpu.now_us < 1300000 ? 5000ull : 9000ull; };
    std::string why;
    auto m = evk::EnergyMeter::open(std::shared_ptr<FakeNvml>(&n, [](FakeNvml*) {}), "0000:3b:00.0", why);
    ASSERT_TRUE(m) << why;
    auto r = evk::measure_burst(*m, [&gpu] { return gpu.step(); }, {0.2, 2, 1.0}, [&gpu] { return gpu.clock(); });
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.why.find("changed 1 time(s) in 1.0 s"), std::string::npos) << r.why;
  }
  {  // goes backwards mid-burst (the counter is not read as a huge unsigned difference)
    FakeNvml n;
    SimGpu gpu;
    auto r = burst(gpu, n, {});
    ASSERT_TRUE(r.ok);
    n.counter = [&gpu] { return gpu.now_us < 100000 ? gpu.counter() : 5ull; };
    gpu.now_us = 0;
    std::string why;
    auto m = evk::EnergyMeter::open(std::shared_ptr<FakeNvml>(&n, [](FakeNvml*) {}), "0000:3b:00.0", why);
    ASSERT_TRUE(m) << why;
    r = evk::measure_burst(*m, [&gpu] { return gpu.step(); }, {}, [&gpu] { return gpu.clock(); });
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.why.find("went backwards"), std::string::npos) << r.why;
    EXPECT_EQ(r.joules_per_launch, 0);
  }
  {  // the read fails mid-burst (the GPU fell off the bus)
    FakeNvml n;
    SimGpu gpu;
    n.energy_rc = 15;
    n.fail_energy_after = 30;  // open reads once, then 29 burst reads succeed
    auto r = burst(gpu, n, {});
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.why.find("reading the energy counter failed: GPU is lost (15)"), std::string::npos) << r.why;
  }
}

}  // namespace
