// The shipped evolved stereo variants (kernels/evolved/stereo/*.genome) without a GPU: every file is
// compiled into the tool (built-in, with an embedded fatbin in CUDA builds), applies and compiles
// with NVRTC, the GPU backend's request for a default job finds its fatbin (no NVRTC at run time),
// and `--kernel auto` picks each only on devices and jobs it fits (fake devices).
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "core/ssd_gpu.hpp"
#include "evk/dispatch.hpp"
#include "evk/embedded.hpp"
#include "shipped.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/gpu_frame.hpp"
#include "evk/cuda_library.hpp"
#endif

using namespace evk::stereo;
namespace fs = std::filesystem;

namespace {
using evk::testing::builtin_variants;
// A job in one of v's classes that meets its constraints (the default job otherwise).
std::pair<Params, std::pair<int, int>> fitting_job(const evk::Variant& v) {
  static const std::map<std::string, std::pair<int, int>> sizes = {
      {"paper", {320, 240}}, {"middlebury", {450, 375}}, {"kitti", {1242, 375}}, {"1080p", {1920, 1080}}};
  std::pair<int, int> wh{320, 240};
  if (!v.classes.empty() && sizes.count(v.classes[0])) wh = sizes.at(v.classes[0]);
  return {Params{}, wh};
}
}  // namespace

TEST(ShippedStereo, EveryGenomeFileIsBuiltIn) {
  evk::testing::expect_every_genome_file_built_in(make_registry(), EVK_STEREO_EVOLVED_DIR, "stereo");
}

TEST(ShippedStereo, AutoPicksEachVariantOnlyWhereItFits) {
  const evk::Registry reg = make_registry();
  for (const auto& v : builtin_variants(reg)) {
    const evk::DeviceKey own{v.cc, v.device_name.empty() ? "Some GPU" : v.device_name};
    auto [p, wh] = fitting_job(v);
    evk::Request r = make_request(p, wh.first, wh.second);
    ASSERT_EQ(reg.misfit(v, r), "") << v.id;
    evk::Selection s = reg.select("stereo", own, "auto", r);
    EXPECT_FALSE(s.variant.is_original()) << v.id << ": " << s.rule;
    EXPECT_EQ(reg.misfit(s.variant, r), "") << s.variant.id;
    // an older architecture never gets it
    EXPECT_NE(reg.select("stereo", evk::DeviceKey{v.cc - 10, "Older GPU"}, "auto", r).variant.id, v.id);
    // a job that breaks one of its constraints never gets it
    for (const auto& c : reg.constraints_of(v)) {
      evk::Request bad = r;
      bad.props[c.name] = c.op == "<=" ? c.value + 1 : c.op == ">=" ? c.value - 1 : c.op == "==" ? c.value + 1 : c.value;
      EXPECT_NE(reg.select("stereo", own, "auto", bad).variant.id, v.id) << c.text();
    }
    // a job of a class it was not validated in never gets it
    for (const char* cls : {"paper", "middlebury", "kitti", "1080p"}) {
      if (v.classes.empty() || std::find(v.classes.begin(), v.classes.end(), cls) != v.classes.end()) continue;
      evk::Request other = r;
      other.size_class = cls;
      EXPECT_NE(reg.select("stereo", own, "auto", other).variant.id, v.id) << cls;
    }
  }
}

// What ships where (kernels/evolved/README.md): each size class gets the H100 search's genome tuned
// for it, except middlebury, where the H200 search's genome won side by side on both GPUs (it has no
// device key); other cc 9.0 GPUs get the H100's; older GPUs the original.
TEST(ShippedStereo, EachClassGetsTheVariantValidatedForIt) {
  const evk::Registry reg = make_registry();
  // {class, H100's pick (and any other cc 9.0 GPU's), H200's pick}
  const std::tuple<const char*, const char*, const char*> picks[] = {
      {"paper", "sm90-h100-paper", "sm90-h100-paper"},
      {"middlebury", "sm90-h200-middlebury", "sm90-h200-middlebury"},
      {"kitti", "sm90-h100-kitti", "sm90-h100-kitti"},
      {"1080p", "sm90-h100-1080p", "sm90-h100-1080p"}};
  for (auto [cls, h100, h200] : picks) {
    evk::Request r = make_request(Params{}, 320, 240);
    r.size_class = cls;
    EXPECT_EQ(reg.select("stereo", {90, "NVIDIA H100 80GB HBM3"}, "auto", r).variant.id, h100) << cls;
    EXPECT_EQ(reg.select("stereo", {90, "NVIDIA GH200 480GB"}, "auto", r).variant.id, h100) << cls;
    EXPECT_EQ(reg.select("stereo", {90, "NVIDIA H200"}, "auto", r).variant.id, h200) << cls;
    EXPECT_TRUE(reg.select("stereo", {86, "NVIDIA RTX A6000"}, "auto", r).variant.is_original());
  }
}

TEST(ShippedStereo, SizeClassesOfCommonSizes) {
  EXPECT_EQ(size_class_of(320, 240), "paper");
  EXPECT_EQ(size_class_of(384, 288), "paper");  // Tsukuba: nearer 320x240 than 450x375 by pixel count
  EXPECT_EQ(size_class_of(434, 383), "middlebury");  // Venus
  EXPECT_EQ(size_class_of(1242, 375), "kitti");
  EXPECT_EQ(size_class_of(1282, 1110), "1080p");     // aloe
  EXPECT_EQ(size_class_of(1920, 1080), "1080p");
  EXPECT_EQ(size_class_of(3840, 2160), "1080p");
  EXPECT_EQ(size_class_of(1, 1), "paper");
}

#if defined(EVK_HAVE_CUDA)
TEST(ShippedStereo, EveryVariantCompilesWithNvrtcAndItsDefaultJobFindsTheFatbin) {
  evk::testing::expect_every_variant_compiles_and_finds_its_fatbin(make_registry(), [](const evk::Variant& v) {
    const KernelVariant k = make_kernel_variant(v);
    return kernel_request(KernelSettings::from(k.config, Params{}.radius()), v.cc, k.source);
  });
  // another window is another configuration: NVRTC, not the fatbin
  for (const auto& v : builtin_variants(make_registry())) {
    const KernelVariant k = make_kernel_variant(v);
    const evk::NvrtcRequest w7 = kernel_request(KernelSettings::from(k.config, 3), v.cc, k.source);
    EXPECT_EQ(evk::find_embedded_variant(w7.source, w7.options), nullptr) << v.id;
  }
}
#endif
