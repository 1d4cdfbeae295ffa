// The shipped evolved barracuda_exact variants (kernels/evolved/barracuda_exact/*.genome) without a
// GPU: built in with provenance and an embedded fatbin, compiled with NVRTC, found by
// load_exact_kernel's request; `--kernel auto` picks each only on devices and size classes it fits.
#include <gtest/gtest.h>

#include <fstream>

#include "gi/kernel_variant.hpp"
#include "io/index_files.hpp"
#include "shipped.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/gpu_exact.hpp"
#endif

namespace bc = evk::barracuda_exact;
using evk::testing::builtin_variants;

TEST(ShippedBarracuda, EveryGenomeFileIsBuiltIn) {
  evk::testing::expect_every_genome_file_built_in(bc::make_registry(), EVK_SOURCE_DIR "/kernels/evolved/barracuda_exact",
                                                  "barracuda_exact");
}

TEST(ShippedBarracuda, SizeClassesAndTheReferenceLengthFromTheAnn) {
  EXPECT_EQ(bc::size_class_of(4641652), "ecoli");
  EXPECT_EQ(bc::size_class_of(100286401), "large");  // C. elegans, ~100 Mbp: far beyond L2 too
  evk::testing::TempDir t;
  std::ofstream(t / "r.fa.ann") << "4641652 1 11\n0 NC_000913.3 E. coli\n0 4641652 0\n";
  EXPECT_EQ(bc::read_reference_length((t / "r.fa").string()), 4641652);
  std::ofstream(t / "bad.fa.ann") << "hello\n";
  EXPECT_THROW(bc::read_reference_length((t / "bad.fa").string()), evk::InputError);
  EXPECT_THROW(bc::read_reference_length((t / "missing.fa").string()), evk::InputError);
}

TEST(ShippedBarracuda, AutoPicksEachVariantOnlyWhereItFits) {
  const evk::Registry reg = bc::make_registry();
  for (const auto& v : builtin_variants(reg)) {
    const evk::DeviceKey own{v.cc, v.device_name.empty() ? "Some GPU" : v.device_name};
    for (long long len : {4600000LL, 500000000LL}) {
      const evk::Request r = bc::make_request(len);
      const bool validated =
          v.classes.empty() || std::find(v.classes.begin(), v.classes.end(), r.size_class) != v.classes.end();
      const evk::Selection s = reg.select("barracuda_exact", own, "auto", r);
      if (validated) EXPECT_FALSE(s.variant.is_original()) << v.id << " " << r.size_class << ": " << s.rule;
      else EXPECT_NE(s.variant.id, v.id) << r.size_class;
    }
    EXPECT_NE(reg.select("barracuda_exact", evk::DeviceKey{v.cc - 10, "Older GPU"}, "auto").variant.id, v.id);
  }
}

// What ships where (kernels/evolved/README.md): the H200 gets its own exact pruned genome; other
// compute capability 9.0 devices (the H100 it was validated on) the genome with no device key; older
// GPUs the original.
TEST(ShippedBarracuda, EachGpuGetsTheVariantValidatedForIt) {
  const evk::Registry reg = bc::make_registry();
  for (long long len : {4600000LL, 500000000LL}) {
    const evk::Request r = bc::make_request(len);
    EXPECT_EQ(reg.select("barracuda_exact", {90, "NVIDIA H200"}, "auto", r).variant.id, "sm90-h200-unroll");
    EXPECT_EQ(reg.select("barracuda_exact", {90, "NVIDIA H100 80GB HBM3"}, "auto", r).variant.id, "sm90-h200-ecoli");
    // a newer architecture runs the original: no shipped variant was validated there (issue 38)
    EXPECT_TRUE(reg.select("barracuda_exact", {100, "a future GPU"}, "auto", r).variant.is_original());
    EXPECT_TRUE(reg.select("barracuda_exact", {80, "NVIDIA A100-SXM4-80GB"}, "auto", r).variant.is_original());
  }
}

#if defined(EVK_HAVE_CUDA)
TEST(ShippedBarracuda, EveryVariantCompilesWithNvrtcAndFindsItsFatbin) {
  evk::testing::expect_every_variant_compiles_and_finds_its_fatbin(bc::make_registry(), [](const evk::Variant& v) {
    const bc::KernelVariant k = bc::resolve_kernel_variant(v);
    return bc::exact_kernel_request(k.config, v.cc, k.source);
  });
}
#endif
