// An SgmDevice that runs the SGM kernel sources in the CUDA emulator (tests only).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>

#include "core/sgm_gpu.hpp"

namespace stereo_test {

// Kernel name -> host-compiled kernel: takes CUDA-style argument arrays, copies the arguments and
// returns the launch body (run later where the device defers work).
using EmuKernel = std::function<std::function<void()>(void**)>;
const std::map<std::string, EmuKernel>& emulated_sgm_kernels();

// When queued work runs. issue: at once, in issue order (one queue). side_first / main_first: the
// main and side queues (SgmDevice::select) hold their work until the host waits (host_wait,
// synchronize, release) and then run it as the events allow, preferring the side queue (its work as
// early as its waits permit: a read of rows not yet written shows) or the main one (the main queue
// as far ahead as it can get: an overwrite of rows the side queue still reads shows).
enum class EmuOrder { issue, side_first, main_first };

class EmuSgmDevice final : public evk::stereo::SgmDevice {
 public:
  // pinned: every host pointer counts as page-locked (SgmPipeline::process's direct copies);
  // wave: what resident_blocks() reports (0: unknown)
  explicit EmuSgmDevice(std::uint64_t seed = 1, EmuOrder order = EmuOrder::issue, bool pinned = false, int wave = 0)
      : seed_(seed), order_(order), pinned_(pinned), wave_(wave) {}
  void* alloc(std::size_t bytes) override;
  void release(void* p) override;
  void to_device(void* dst, const void* src, std::size_t n) override;
  void to_host(void* dst, const void* src, std::size_t n) override;
  void fill(void* dst, int byte, std::size_t n) override;
  void launch(const std::string& kernel, evk::stereo::Dim3 grid, evk::stereo::Dim3 block, std::size_t smem,
              void** args) override;
  void synchronize() override { run_until(-1); }
  void select(int q) override { cur_ = q == 0 ? 0 : 1; }
  void record(int e) override;
  void wait(int e) override;
  void host_wait(int e) override { run_until(e); }
  bool pinned(const void*) const override { return pinned_; }
  int resident_blocks(const std::string&, evk::stereo::Dim3, std::size_t) override { return wave_; }
  int launches() const { return launches_; }

 private:
  struct Op {
    int kind = 0;  // 0 run, 1 record event, 2 wait for event
    int event = 0;
    long long gen = 0;
    std::function<void()> fn;
  };
  void issue(std::function<void()> f);
  bool step(int q);
  void run_until(int event);  // -1: until both queues are empty
  std::uint64_t seed_;
  EmuOrder order_;
  bool pinned_;
  int wave_;
  int launches_ = 0;
  int cur_ = 0;
  std::deque<Op> q_[2];
  long long issued_[kEvents] = {}, passed_[kEvents] = {};
};

}  // namespace stereo_test
