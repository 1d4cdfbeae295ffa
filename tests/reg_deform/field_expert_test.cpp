// The expert dense-field kernel's host side and its logic without a GPU: the per-axis tables against
// the CPU reference's weights, the tile bound the kernel's shared arrays rely on (<= TILE + 3 control
// columns for every spacing >= 1), and the kernel source itself run on the CPU (compiled as C++ with
// a thread-per-CUDA-thread shim: __syncthreads = a barrier, __shared__ = one static copy per block)
// against compute_field_cpu on every voxel: odd sizes, partial tiles, per-axis and fractional
// spacings, masks, displacement, TILE_Y 8/16/32. The GPU tests (expert_gpu_test.cpp) run it for real.
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/field/field_cpu.hpp"
#include "core/field/field_expert_host.hpp"
#include "core/field/grid_make.hpp"
#include "core/field/random_case.hpp"
#include "core/register/reg_grid.hpp"
#include "core/types.hpp"

namespace rd = evk::reg_deform;

// ---- the CUDA shim (just enough for field_expert.cu) ---------------------------------------------
namespace emu {
using std::size_t;
struct float4 {
  float x, y, z, w;
};
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct uint3 {
  unsigned x, y, z;
};
thread_local uint3 threadIdx, blockIdx;
std::barrier<>* block_barrier = nullptr;
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
template <class T>
T __ldg(const T* p) {
  return *p;
}
inline int min(int a, int b) { return a < b ? a : b; }
}  // namespace emu

#define __global__
#define __shared__ static
#define reg_field_expert reg_field_expert_8
#define TILE_Y 8
namespace emu::t8 {
#include "reg_deform/field_expert.cu"
}
#undef TILE_Y
#undef reg_field_expert
#define reg_field_expert reg_field_expert_16
#define TILE_Y 16
namespace emu::t16 {
#include "reg_deform/field_expert.cu"
}
#undef TILE_Y
#undef reg_field_expert
#define reg_field_expert reg_field_expert_32
#define TILE_Y 32
namespace emu::t32 {
#include "reg_deform/field_expert.cu"
}
#undef TILE_Y
#undef reg_field_expert
#undef __shared__
#undef __global__

namespace {

// Runs the kernel source on the CPU: blocks one after another, 256 threads each.
template <class Affine, class Kernel>
rd::Field emulate(Kernel kernel, int tile_y, const rd::Geometry& ref, const rd::Grid& grid, const rd::Mask& mask,
                  bool displacement) {
  const std::size_t np = grid.points(), n = ref.voxels();
  std::vector<emu::float4> cp(np);
  for (std::size_t i = 0; i < np; ++i) cp[i] = {grid.data[i], grid.data[np + i], grid.data[2 * np + i], 0.0f};
  const rd::ExpertAxis ax = rd::expert_axis(ref.nx, grid.sx), ay = rd::expert_axis(ref.ny, grid.sy),
                       az = rd::expert_axis(ref.nz, grid.sz);
  auto w4 = [](const rd::ExpertAxis& a) { return reinterpret_cast<const emu::float4*>(a.weights.data()); };
  Affine m;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) m.m[i * 4 + j] = static_cast<float>(ref.vox2world.m[i][j]);
  rd::Field f;
  f.geo = ref;
  f.displacement = displacement;
  f.data.assign(3 * n, std::nanf(""));  // poisoned
  const unsigned bx = (ref.nx + 31) / 32, by = (ref.ny + tile_y - 1) / tile_y;
  // 256 threads walk the blocks in the same order; a barrier after each block keeps the next block's
  // shared-memory writes behind every thread's reads of this one
  std::barrier<> bar(rd::kExpertThreads);
  emu::block_barrier = &bar;
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < static_cast<unsigned>(rd::kExpertThreads); ++t)
    threads.emplace_back([&, t] {
      emu::threadIdx = {t, 0, 0};
      for (unsigned z = 0; z < static_cast<unsigned>(ref.nz); ++z)
        for (unsigned y = 0; y < by; ++y)
          for (unsigned x = 0; x < bx; ++x) {
            emu::blockIdx = {x, y, z};
            kernel(cp.data(), grid.geo.nx, grid.geo.ny, ax.first.data(), w4(ax), ay.first.data(), w4(ay),
                   az.first.data(), w4(az), ref.nx, ref.ny, ref.nz, mask.empty() ? nullptr : mask.data(), m,
                   displacement ? 1 : 0, f.data.data());
            bar.arrive_and_wait();
          }
    });
  for (auto& th : threads) th.join();
  return f;
}

rd::Field emulate(int tile_y, const rd::Geometry& ref, const rd::Grid& grid, const rd::Mask& mask, bool disp) {
  if (tile_y == 8) return emulate<emu::t8::ExpertAffine>(emu::t8::reg_field_expert_8, 8, ref, grid, mask, disp);
  if (tile_y == 16) return emulate<emu::t16::ExpertAffine>(emu::t16::reg_field_expert_16, 16, ref, grid, mask, disp);
  return emulate<emu::t32::ExpertAffine>(emu::t32::reg_field_expert_32, 32, ref, grid, mask, disp);
}

}  // namespace

TEST(RegExpert, AxisTablesAreTheCpuWeights) {
  for (double s : {1.0, 1.5, 2.5, 3.0, 5.0, 7.25}) {
    const rd::ExpertAxis a = rd::expert_axis(53, s);
    ASSERT_EQ(a.first.size(), 53u);
    ASSERT_EQ(a.weights.size(), 4 * 53u);
    for (int i = 0; i < 53; ++i) {
      const double t = i / s;
      EXPECT_EQ(a.first[i], static_cast<int>(std::floor(t)));
      double w[4];
      rd::bspline_weights(t - std::floor(t), w);
      double sum = 0;
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(a.weights[4 * i + k], static_cast<float>(w[k])) << "s " << s << " i " << i << " k " << k;
        sum += a.weights[4 * i + k];
      }
      EXPECT_NEAR(sum, 1.0, 1e-6);  // partition of unity
    }
  }
  // at a control point (integer t) the weights are 1/6, 4/6, 1/6, 0
  const rd::ExpertAxis a = rd::expert_axis(11, 5);
  EXPECT_EQ(a.first[10], 2);
  EXPECT_FLOAT_EQ(a.weights[40], 1.0f / 6);
  EXPECT_FLOAT_EQ(a.weights[41], 4.0f / 6);
  EXPECT_FLOAT_EQ(a.weights[43], 0.0f);
}

// The kernel's shared arrays hold TILE + 4 columns; every spacing >= 1 needs at most TILE + 3.
TEST(RegExpert, TilesNeedAtMostTilePlusThreeColumns) {
  for (int tile : {8, 16, 32})
    for (double s = 1.0; s <= 12.0; s += 0.125) {
      const int m = rd::expert_max_columns(rd::expert_axis(301, s), tile);
      EXPECT_LE(m, tile + 3) << "tile " << tile << " spacing " << s;
      EXPECT_GE(m, 4);
    }
  EXPECT_EQ(rd::expert_max_columns(rd::expert_axis(64, 1), 32), 35);  // the bound is reached at spacing 1
  EXPECT_TRUE(rd::expert_supports(1, 2.5, 5));
  EXPECT_FALSE(rd::expert_supports(0.9, 5, 5));
}

TEST(RegExpert, KernelSourceEmulatedOnTheCpuMatchesTheReference) {
  rd::Geometry a = rd::Geometry::make(37, 19, 4, 1.1, 0.9, 1.3, {-20, 15, 4});
  a.sform.m[0][1] = 0.2;
  a.update_world();
  const rd::Geometry b = rd::Geometry::make(70, 11, 3, 1, 1, 2, {-35, -20, 0});
  struct Case {
    rd::Geometry geo;
    std::array<double, 3> s;
    int tile_y;
    bool mask, disp;
  };
  const std::vector<Case> cases = {{a, {5, 5, 5}, 32, false, false}, {a, {2.5, 3, 7}, 8, true, true},
                                   {b, {1, 1.5, 4}, 16, true, false}, {b, {1, 1, 1}, 8, false, true},
                                   {a, {5.5, 4.25, 6}, 16, false, false}};
  for (const Case& c : cases) {
    rd::Grid grid = rd::make_grid3(c.geo, c.s);
    rd::SplitMix64 rng(17);
    for (auto& v : grid.data) v = static_cast<float>(v + rng.uniform(-5, 5));
    rd::Mask mask;
    if (c.mask) {
      mask.assign(c.geo.voxels(), 0);
      for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 5 != 0) && ((i / 37) % 7 != 3);
    }
    rd::FieldOptions co;
    co.displacement = c.disp;
    const rd::Field want = rd::compute_field_cpu(c.geo, grid, mask, co);
    const rd::Field got = emulate(c.tile_y, c.geo, grid, mask, c.disp);
    double worst = 0;
    std::size_t unset = 0;
    for (std::size_t i = 0; i < want.data.size(); ++i) {
      if (!std::isfinite(got.data[i])) ++unset;
      else worst = std::max(worst, double(std::fabs(got.data[i] - want.data[i])));
    }
    EXPECT_EQ(unset, 0u) << c.geo.nx << "x" << c.geo.ny << "x" << c.geo.nz << " tile_y " << c.tile_y;
    EXPECT_LE(worst, 1e-3) << c.geo.nx << "x" << c.geo.ny << "x" << c.geo.nz << " tile_y " << c.tile_y;
  }
}
