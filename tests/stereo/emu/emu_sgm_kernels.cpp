// The SGM kernel sources compiled for the CUDA emulator, and EmuSgmDevice.
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "cuda_emu.hpp"

#include <cstdlib>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include "emu_sgm_device.hpp"

// Kernel sources, exactly as nvcc compiles them into the fatbins.
#include "core/src/sgm/census.cu"
#include "core/src/sgm/cost.cu"
#include "core/src/sgm/lr_check.cu"
#include "core/src/sgm/rectify.cu"
#include "core/src/sgm/median.cu"
#include "core/src/sgm/wta.cu"
#include "core/src/sgm/aggregate_variants.cu"
#include "core/src/ssd_expert_variants.cu"
#include "core/src/sgm/aggregate_fast.cu"
#include "core/src/sgm/aggregate_vec.cu"

namespace stereo_test {

namespace {
template <class... A, std::size_t... I>
std::function<void()> bind_args(void (*f)(A...), void** args, std::index_sequence<I...>) {
  std::tuple<std::remove_cv_t<A>...> v(*static_cast<std::remove_cv_t<A>*>(args[I])...);  // copied now
  return [f, v] { std::apply(f, v); };
}
template <class... A>
EmuKernel adapt(void (*f)(A...)) {
  return [f](void** args) { return bind_args(f, args, std::index_sequence_for<A...>{}); };
}
}  // namespace

const std::map<std::string, EmuKernel>& emulated_sgm_kernels() {
  static const std::map<std::string, EmuKernel> k = {
#define K(name) {#name, adapt(&name)}
      K(ssd_expert_v1), K(ssd_expert_v1_r1), K(ssd_expert_v1_r2), K(ssd_expert_v1_r3), K(ssd_expert_v1_r4),
      K(ssd_expert_v1_r5), K(ssd_expert_v1_r6), K(ssd_expert_v1_r7), K(ssd_expert_v1_r8), K(ssd_expert_r1),
      K(ssd_expert_r2), K(ssd_expert_r3), K(ssd_expert_r4), K(ssd_expert_r5), K(ssd_expert_r6), K(ssd_expert_r7),
      K(ssd_expert_r8), K(sgm_census_u8), K(sgm_census_u16), K(sgm_cost_window), K(sgm_median3), K(sgm_median3_lr), K(sgm_lr_check),
      K(sgm_wta_k8_u8), K(sgm_wta_k16_u8), K(sgm_wta_k32_u8), K(sgm_wta_k8_u16), K(sgm_wta_k16_u16),
      K(sgm_wta_k32_u16), K(sgm_wta2_k8_u8), K(sgm_wta2_k16_u8), K(sgm_wta2_k32_u8), K(sgm_wta2_k8_u16),
      K(sgm_wta2_k16_u16), K(sgm_wta2_k32_u16),
      K(sgm_wta3_k8_u8), K(sgm_wta3_k16_u8), K(sgm_wta3_k32_u8), K(sgm_wta3_k8_u16), K(sgm_wta3_k16_u16),
      K(sgm_wta3_k32_u16),
      K(sgm_aggregate_k8_u8_census), K(sgm_aggregate_k16_u8_census), K(sgm_aggregate_k32_u8_census),
      K(sgm_aggregate_k8_u16_census), K(sgm_aggregate_k16_u16_census), K(sgm_aggregate_k32_u16_census),
      K(sgm_aggregate_k8_u8_volume), K(sgm_aggregate_k16_u8_volume), K(sgm_aggregate_k32_u8_volume),
      K(sgm_aggregate_k8_u16_volume), K(sgm_aggregate_k16_u16_volume), K(sgm_aggregate_k32_u16_volume),
      K(sgm_aggregate_k8_u8_staged), K(sgm_aggregate_k16_u8_staged), K(sgm_aggregate_k32_u8_staged),
      K(sgm_aggregate_k8_u16_staged), K(sgm_aggregate_k16_u16_staged), K(sgm_aggregate_k32_u16_staged),
      K(sgm_aggregate_k8_u8_prefetch), K(sgm_aggregate_k16_u8_prefetch), K(sgm_aggregate_k32_u8_prefetch),
      K(sgm_aggregate_k8_u16_prefetch), K(sgm_aggregate_k16_u16_prefetch), K(sgm_aggregate_k32_u16_prefetch),
      K(sgm_aggregate2_k8_u8), K(sgm_aggregate2_k16_u8), K(sgm_aggregate2_k32_u8), K(sgm_aggregate2_k8_u16),
      K(sgm_aggregate2_k16_u16), K(sgm_aggregate2_k32_u16), K(sgm_aggregate3_k4_g8_u8), K(sgm_aggregate3_k8_g8_u8), K(sgm_aggregate3_k16_g8_u8), K(sgm_aggregate3_k4_g8_u16),
      K(sgm_aggregate3_k8_g8_u16), K(sgm_aggregate3_k16_g8_u16), K(sgm_aggregate3_k4_g16_u8), K(sgm_aggregate3_k4_g32_u8),
      K(sgm_aggregate3_k8_g16_u8), K(sgm_aggregate3_k8_g32_u8), K(sgm_aggregate3_k16_g16_u8), K(sgm_aggregate3_k16_g32_u8),
      K(sgm_aggregate3_k4_g16_u16), K(sgm_aggregate3_k4_g32_u16), K(sgm_aggregate3_k8_g16_u16), K(sgm_aggregate3_k8_g32_u16),
      K(sgm_aggregate3_k16_g16_u16), K(sgm_aggregate3_k16_g32_u16),
      K(sgm_census4_u8), K(sgm_census4_u16), K(sgm_rectify_u8), K(sgm_rectify_u16),
      K(sgm_aggregate3s_k8_g8_u8), K(sgm_aggregate3s_k8_g16_u8), K(sgm_aggregate3s_k16_g8_u8), K(sgm_aggregate3s_k16_g16_u8), K(sgm_aggregate3s_k8_g8_u16), K(sgm_aggregate3s_k8_g16_u16), K(sgm_aggregate3s_k16_g8_u16), K(sgm_aggregate3s_k16_g16_u16),
#undef K
  };
  return k;
}

void* EmuSgmDevice::alloc(std::size_t bytes) {
  const std::size_t n = (bytes + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, n ? n : 256);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0xA5, n);  // garbage: what a kernel forgets to write shows
  return p;
}
void EmuSgmDevice::release(void* p) {
  run_until(-1);  // work issued earlier may still use it
  std::free(p);
}
void EmuSgmDevice::to_device(void* dst, const void* src, std::size_t n) {
  issue([=] { std::memcpy(dst, src, n); });
}
void EmuSgmDevice::to_host(void* dst, const void* src, std::size_t n) {
  issue([=] { std::memcpy(dst, src, n); });
}
void EmuSgmDevice::fill(void* dst, int byte, std::size_t n) {
  issue([=] { std::memset(dst, byte, n); });
}

void EmuSgmDevice::launch(const std::string& kernel, evk::stereo::Dim3 grid, evk::stereo::Dim3 block,
                          std::size_t smem, void** args) {
  const auto& all = emulated_sgm_kernels();
  auto it = all.find(kernel);
  if (it == all.end()) throw std::logic_error("emulator: no kernel " + kernel);
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) throw std::logic_error("emulator: empty grid for " + kernel);
  ++launches_;
  std::function<void()> body = it->second(args);
  const std::uint64_t seed = seed_ + static_cast<std::uint64_t>(launches_);
  issue([=] { emu::launch(dim3(grid.x, grid.y, grid.z), dim3(block.x, block.y, block.z), smem, body, seed); });
}

void EmuSgmDevice::issue(std::function<void()> f) {
  if (order_ == EmuOrder::issue) return f();
  Op op;
  op.fn = std::move(f);
  q_[cur_].push_back(std::move(op));
}

void EmuSgmDevice::record(int e) {
  if (e < 0 || e >= kEvents) throw std::logic_error("emulator: no event " + std::to_string(e));
  ++issued_[e];
  if (order_ == EmuOrder::issue) {
    passed_[e] = issued_[e];
    return;
  }
  Op op;
  op.kind = 1;
  op.event = e;
  op.gen = issued_[e];
  q_[cur_].push_back(std::move(op));
}

void EmuSgmDevice::wait(int e) {
  if (e < 0 || e >= kEvents) throw std::logic_error("emulator: no event " + std::to_string(e));
  if (order_ == EmuOrder::issue) return;
  Op op;
  op.kind = 2;
  op.event = e;
  op.gen = issued_[e];  // the latest record issued before this wait, as cudaStreamWaitEvent
  q_[cur_].push_back(std::move(op));
}

bool EmuSgmDevice::step(int q) {
  if (q_[q].empty()) return false;
  Op& op = q_[q].front();
  if (op.kind == 2 && passed_[op.event] < op.gen) return false;  // blocked
  if (op.kind == 0) op.fn();
  if (op.kind == 1) passed_[op.event] = op.gen;
  q_[q].pop_front();
  return true;
}

void EmuSgmDevice::run_until(int e) {
  const int first = order_ == EmuOrder::main_first ? 0 : 1;
  for (;;) {
    if (e >= 0 && passed_[e] >= issued_[e]) return;
    if (step(first) || step(1 - first)) continue;
    if (q_[0].empty() && q_[1].empty()) return;
    throw std::logic_error("emulator: the queues wait for each other (deadlock)");
  }
}

}  // namespace stereo_test
