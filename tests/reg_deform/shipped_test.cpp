// The shipped evolved reg_deform variants (kernels/evolved/reg_deform/*.genome) without a GPU: built
// in with provenance and an embedded fatbin, compiled with NVRTC, found by Kernels::load's request;
// `--kernel auto` picks each only on devices and size classes it fits (fake devices).
#include <gtest/gtest.h>

#include <filesystem>

#include "gi/kernel_variant.hpp"
#include "shipped.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/field/gpu_field.hpp"
#endif

namespace rd = evk::reg_deform;
using evk::testing::builtin_variants;

// The number of genomes the build embedded (tests/reg_deform/CMakeLists.txt): the checks below
// compare the registry and the source tree with it, so an empty or missing genome directory, or
// a registry without the variants, fails instead of checking nothing.
constexpr std::size_t kShipped = REG_SHIPPED_GENOMES;

TEST(ShippedRegDeform, EveryGenomeFileIsBuiltIn) {
  const std::filesystem::path dir = REG_SOURCE_DIR "/kernels/evolved/reg_deform";
  std::size_t files = 0;
  if (std::filesystem::is_directory(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.path().extension() == ".genome";
  EXPECT_EQ(files, kShipped) << dir.string() << " holds " << files << " genomes, the build shipped " << kShipped;
  EXPECT_EQ(builtin_variants(rd::make_registry()).size(), kShipped);
  evk::testing::expect_every_genome_file_built_in(rd::make_registry(), dir, "reg_deform");
}

TEST(ShippedRegDeform, TheProjectShipsAGenome) {
  // kernels/evolved/reg_deform ships sm90-h200-paper217.genome: a build without it is broken.
  EXPECT_GE(kShipped, 1u);
}

TEST(ShippedRegDeform, SizeClasses) {
  EXPECT_EQ(rd::make_request(91, 109, 91, 5, 5, 5).size_class, "head2mm");
  EXPECT_EQ(rd::make_request(197, 233, 189, 5, 5, 5).size_class, "head1mm");
  EXPECT_EQ(rd::make_request(197, 233, 189, 5, 5, 5).props.at("spacing"), 5);
  EXPECT_EQ(rd::make_request(197, 233, 189, 5, 4, 5).props.count("spacing"), 0u);
}

TEST(ShippedRegDeform, AutoPicksEachVariantOnlyWhereItFits) {
  const evk::Registry reg = rd::make_registry();
  ASSERT_EQ(builtin_variants(reg).size(), kShipped);
  for (const auto& v : builtin_variants(reg)) {
    const evk::DeviceKey own{v.cc, v.device_name.empty() ? "Some GPU" : v.device_name};
    for (const char* cls : {"paper", "head1mm", "head2mm"}) {
      const bool validated = v.classes.empty() || std::find(v.classes.begin(), v.classes.end(), cls) != v.classes.end();
      evk::Selection s = reg.select("reg_deform", own, "auto", evk::Request{cls, {}});
      if (validated) EXPECT_FALSE(s.variant.is_original()) << v.id << " " << cls << ": " << s.rule;
      else EXPECT_NE(s.variant.id, v.id) << cls;
    }
    EXPECT_NE(reg.select("reg_deform", evk::DeviceKey{v.cc - 10, "Older GPU"}, "auto").variant.id, v.id);
  }
}

#if defined(EVK_HAVE_CUDA)
TEST(ShippedRegDeform, EveryVariantCompilesWithNvrtcAndFindsItsFatbin) {
  evk::testing::expect_every_variant_compiles_and_finds_its_fatbin(rd::make_registry(), [](const evk::Variant& v) {
    const rd::KernelChoice k = rd::kernel_for_variant(v);
    return rd::gpu::kernel_request(k.config, k.source, v.cc);
  });
}
#endif
