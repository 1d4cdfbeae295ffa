// Rectification on a real GPU (rectify_checks.hpp): the kernel equals remap_cpu on every pixel, at odd
// sizes and at 1920x1080 and 3840x2160; the rectifying pipeline equals sgm_cpu of the remapped pair,
// at an odd size and at 1920x1080. Prints the kernel's time per image at the two large sizes.
#include <cstdio>

#include "core/matcher.hpp"
#include "evk_testing.hpp"
#include "rectify_checks.hpp"

using namespace evk::stereo;

TEST(StereoRectifyGpu, KernelEqualsRemapCpu) {
  EVK_REQUIRE_GPU();
  auto dev = cuda_sgm_device(0);
  rectify_checks::kernel(*dev);
  for (auto [w, h] : {std::pair{1920, 1080}, std::pair{3840, 2160}}) {
    std::vector<float> mx, my;
    rectify_checks::warp_map(w, h, 0.8, 1.02, 3.3, -2.1, -0.05, mx, my);
    rectify_checks::kernel_case<std::uint8_t>(*dev, w, h, 255, mx, my, 7, "large 8-bit");
    rectify_checks::kernel_case<std::uint16_t>(*dev, w, h, 65535, mx, my, 8, "large 16-bit");
    // time: 20 launches after a warm-up, CUDA events on the device's queue
    sgm_checks::Buf<std::uint8_t> raw(*dev, static_cast<std::size_t>(w) * h), out(*dev, static_cast<std::size_t>(w) * h);
    sgm_checks::Buf<float> x(*dev, mx), y(*dev, my);
    int W = w, H = h;
    void* a[] = {&raw.p, &x.p, &y.p, &W, &H, &out.p};
    const Dim3 grid{static_cast<unsigned>((w + 31) / 32), static_cast<unsigned>((h + 7) / 8), 1};
    dev->launch("sgm_rectify_u8", grid, Dim3{32, 8, 1}, 0, a);
    dev->mark(0);
    for (int k = 0; k < 20; ++k) dev->launch("sgm_rectify_u8", grid, Dim3{32, 8, 1}, 0, a);
    dev->mark(1);
    dev->synchronize();
    std::printf("[measured] rectify kernel %dx%d 8-bit: %.1f us per image (mean of 20, maps and image resident)\n", w, h,
                1000.0 * dev->elapsed_ms(0, 1) / 20);
  }
}

TEST(StereoRectifyGpu, RectifyingPipelineEqualsSgmCpuOfTheRemappedPair) {
  EVK_REQUIRE_GPU();
  auto dev = cuda_sgm_device(0);
  rectify_checks::pipeline(*dev);
  rectify_checks::pipeline(*dev, 1920, 1080, 64);
}

TEST(StereoRectifyGpu, RectifyingStreamEngineEqualsSgmCpuOfTheRemappedFrames) {
  EVK_REQUIRE_GPU();
  rectify_checks::stream_engine([] { return cuda_sgm_device(0); });
}

// The facade `stereo disparity --rig` calls: raw pairs with the rig's maps on the GPU backend give the
// CPU backend's maps (which rectifies with remap_cpu): sgm with 8-bit and 10-bit census (rectified on
// the device), sgm sad on 10-bit pixels (a conversion that rounds: rectified on the host first), and
// ssd (the host too), at an odd size and at 1920x1080.
TEST(StereoRectifyGpu, MatcherWithARigEqualsTheCpuBackend) {
  EVK_REQUIRE_GPU();
  for (auto [w, h] : {std::pair{203, 117}, std::pair{1920, 1080}}) {
    auto maps = std::make_shared<RectifyMaps>(synthetic_rectify_maps(w, h, 0.006, -0.05));
    struct Case {
      const char* method;
      const char* cost;
      int maxval;
    };
    for (const Case& c : {Case{"sgm", "census", 255}, Case{"sgm", "census", 1023}, Case{"sgm", "sad", 1023}, Case{"ssd", "census", 255}}) {
      MatchOptions g;
      g.method = c.method;
      g.cost = c.cost;
      const bool sgm = c.method == std::string("sgm");
      if (sgm) g.params.max_disparity = 63, g.post.median = 3;  // ssd: its defaults (the embedded kernel)
      g.post.lr_check = 1;
      MatchOptions cpu = g;
      g.backend = "gpu";
      cpu.backend = "cpu";
      g.finalize();
      cpu.finalize();
      const auto [l, r] = rectify_checks::raw_pair(w, h, 40, c.maxval, 7);
      Matcher mg(g, w, h, {}, maps), mc(cpu, w, h, {}, maps);
      ASSERT_EQ(mg.info().backend, "gpu");
      const StereoResult a = mg.run(l, r), b = mc.run(l, r);
      EXPECT_EQ(rectify_checks::first_diff(a.left, b.left), "")
          << c.method << " " << c.cost << " maxval " << c.maxval << " " << w << "x" << h;
      EXPECT_EQ(rectify_checks::first_diff(mg.run(l, r).left, a.left), "") << "a second pair through the same pipeline";
    }
  }
}
