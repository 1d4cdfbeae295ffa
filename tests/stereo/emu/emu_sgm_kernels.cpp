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
#include "../../../apps/stereo/core/src/sgm/census.cu"
#include "../../../apps/stereo/core/src/sgm/cost.cu"
#include "../../../apps/stereo/core/src/sgm/lr_check.cu"
#include "../../../apps/stereo/core/src/sgm/median.cu"
#include "../../../apps/stereo/core/src/sgm/wta.cu"
#include "../../../apps/stereo/core/src/sgm/aggregate_variants.cu"
#include "../../../apps/stereo/core/src/ssd_expert_variants.cu"
#include "../../../apps/stereo/core/src/sgm/aggregate_fast.cu"
#include "../../../apps/stereo/core/src/sgm/aggregate_vec.cu"

namespace stereo_test {

namespace {
template <class... A, std::size_t... I>
void call_with(void (*f)(A...), void** args, std::index_sequence<I...>) {
  f(*static_cast<std::remove_cv_t<A>*>(args[I])...);
}
template <class... A>
std::function<void(void**)> adapt(void (*f)(A...)) {
  return [f](void** args) { call_with(f, args, std::index_sequence_for<A...>{}); };
}
}  // namespace

const std::map<std::string, std::function<void(void**)>>& emulated_sgm_kernels() {
  static const std::map<std::string, std::function<void(void**)>> k = {
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
      K(sgm_census4_u8), K(sgm_census4_u16),
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
void EmuSgmDevice::release(void* p) { std::free(p); }
void EmuSgmDevice::to_device(void* dst, const void* src, std::size_t n) { std::memcpy(dst, src, n); }
void EmuSgmDevice::to_host(void* dst, const void* src, std::size_t n) { std::memcpy(dst, src, n); }
void EmuSgmDevice::fill(void* dst, int byte, std::size_t n) { std::memset(dst, byte, n); }

void EmuSgmDevice::launch(const std::string& kernel, evk::stereo::Dim3 grid, evk::stereo::Dim3 block,
                          std::size_t smem, void** args) {
  const auto& all = emulated_sgm_kernels();
  auto it = all.find(kernel);
  if (it == all.end()) throw std::logic_error("emulator: no kernel " + kernel);
  ++launches_;
  emu::launch(dim3(grid.x, grid.y, grid.z), dim3(block.x, block.y, block.z), smem, [&] { it->second(args); },
              seed_ + static_cast<std::uint64_t>(launches_));
}

}  // namespace stereo_test
