// Checks of the expert SSD kernels (v2 = kernels/original/stereo/ssd_expert.cu, v1 =
// apps/stereo/core/src/ssd_expert_v1.cu) against disparity_cpu, Stam's definition, every pixel, on any
// SgmDevice: the CUDA emulator (stereo_sgm_tests, CPU) and a real GPU (stereo_gpu_tests). Outputs
// are poisoned (0xA5A5A5A5, not a disparity) before each launch, so an unwritten pixel fails.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "core/reference.hpp"
#include "core/ssd_expert.hpp"
#include "core/synthetic.hpp"

namespace ssd_expert_checks {
using namespace evk::stereo;

struct Case {
  int w, h, mind, maxd, window, min_ssd;
  int kind;  // 0 synthetic pair, 1 noise, 2 binary 0/255 noise (the largest squared differences)
};

inline Image8 noise(int w, int h, std::uint64_t seed, bool binary) {
  std::mt19937_64 g(seed);
  Image8 im{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h)};
  for (auto& p : im.pixels) p = binary ? static_cast<std::uint8_t>((g() & 1) ? 255 : 0) : static_cast<std::uint8_t>(g() & 255);
  return im;
}

// Runs one case; returns the number of differing pixels (0 = bit-identical) and checks that the
// reference is not degenerate (some valid pixels unless min_ssd forbids them).
inline long long run_case(SgmDevice& dev, SsdExpertVersion v, const Case& c, std::uint64_t seed,
                          long long* valid_out = nullptr) {
  Image8 l, r;
  if (c.kind == 0) {
    SyntheticPair sp = make_synthetic_pair(c.w, c.h, std::max(1, c.maxd), seed);
    l = sp.left;
    r = sp.right;
  } else {
    l = noise(c.w, c.h, 2 * seed, c.kind == 2);
    r = noise(c.w, c.h, 2 * seed + 1, c.kind == 2);
  }
  const Params p{c.mind, c.maxd, c.window, c.min_ssd};
  const DisparityMap ref = disparity_cpu(l, r, p);
  SsdExpert k(dev, c.w, c.h, v);
  k.poison();
  const DisparityMap got = k.run(l, r, p);
  long long bad = 0;
  std::string first;
  for (std::size_t i = 0; i < ref.d.size(); ++i)
    if (got.d[i] != ref.d[i] && bad++ == 0)
      first = "(" + std::to_string(i % c.w) + "," + std::to_string(i / c.w) + "): " + std::to_string(got.d[i]) +
              " vs " + std::to_string(ref.d[i]);
  EXPECT_EQ(bad, 0) << k.kernel_name(p.radius()) << " " << c.w << "x" << c.h << " d " << c.mind << ".." << c.maxd
                    << " window " << c.window << " min_ssd " << c.min_ssd << " kind " << c.kind << " first " << first;
  const long long valid = std::count_if(ref.d.begin(), ref.d.end(), [](int x) { return x >= 0; });
  if (valid_out) {
    *valid_out = valid;
  } else if (c.min_ssd > 0) {
    EXPECT_GT(valid, 0) << "degenerate case";
  }
  return bad;
}

constexpr int kNo = 2000000000;  // min_ssd that never binds

// Odd sizes (partial tiles in both directions, images smaller than a tile, one pixel), every v2
// radius 1..8, windows past v2's limit (v1 fallback), 64/128/256 disparities and odd counts
// (super-chunk boundaries of EX_DS = 128: 129, 200; chunk remainders of EX_DC = 3: 1, 2, 37, 51),
// a minimum disparity, min_ssd binding (500000, 300000, 0: nothing valid) or not, the largest
// squared differences.
inline void all_cases(SgmDevice& dev, SsdExpertVersion v) {
  const Case cases[] = {
      {37, 23, 0, 20, 11, 500000, 0},   {101, 67, 0, 50, 11, 500000, 0}, {65, 33, 3, 3, 5, kNo, 1},
      {130, 70, 2, 38, 7, kNo, 0},      {17, 5, 0, 50, 11, kNo, 1},      {64, 32, 0, 63, 17, 2000000, 0},
      {1, 1, 0, 9, 3, kNo, 1},          {200, 9, 10, 17, 9, 300000, 0},  {70, 40, 0, 30, 19, kNo, 0},
      {45, 20, 1, 12, 23, kNo, 1},      {131, 45, 0, 127, 11, 500000, 0}, {97, 41, 0, 255, 11, 500000, 0},
      {83, 37, 5, 133, 13, kNo, 0},     {66, 34, 0, 199, 15, kNo, 1},    {77, 29, 0, 64, 11, kNo, 2},
      {50, 50, 7, 8, 3, kNo, 2},        {129, 65, 0, 63, 11, 0, 1},      {203, 157, 0, 63, 11, 500000, 0},
  };
  std::uint64_t seed = 170;
  for (const Case& c : cases) run_case(dev, v, c, seed++);
}

// Random configurations (size, range, window 3..17, min_ssd), a fixed seed.
inline void random_cases(SgmDevice& dev, SsdExpertVersion v, int n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  int nondegenerate = 0;
  for (int i = 0; i < n; ++i) {
    Case c;
    c.w = 1 + static_cast<int>(g() % 150);
    c.h = 1 + static_cast<int>(g() % 80);
    c.mind = static_cast<int>(g() % 20);
    c.maxd = c.mind + static_cast<int>(g() % 140);
    c.window = 3 + 2 * static_cast<int>(g() % 8);
    c.min_ssd = (g() & 1) ? kNo : static_cast<int>(g() % 1000000);
    c.kind = static_cast<int>(g() % 3);
    long long valid = 0;
    run_case(dev, v, c, 1000 + i, &valid);
    if (valid > 0) ++nondegenerate;
  }
  EXPECT_GE(nondegenerate, n / 2) << "too few random cases with valid disparities";
}

}  // namespace ssd_expert_checks
