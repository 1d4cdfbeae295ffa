// GPU: for every shipped barracuda_exact variant that `--kernel auto` may pick on this GPU (compute
// capability up to the GPU's), `auto` picks an evolved variant for a map job of each of its size
// classes, loads it from the embedded fatbin (no NVRTC), and (k, l) equals the CPU on every read
// (the GI sample: lengths 36-250, N, substitutions, no-hits, repeats; outputs poisoned).
#include <gtest/gtest.h>

#include "core/gi_problem.hpp"
#include "core/gpu_exact.hpp"
#include "core/kernel_variant.hpp"
#include "core/match.hpp"
#include "evk_testing.hpp"
#include "shipped.hpp"

namespace bc = evk::barracuda_exact;

TEST(ShippedBarracudaGpu, AutoPicksItLoadsTheFatbinAndMatchesTheCpu) {
  EVK_REQUIRE_GPU();
  const auto& dev = evk::gpu_environment().devices[0];
  const evk::Registry reg = bc::make_registry();
  int checked = 0;
  for (const auto& v : evk::testing::builtin_variants(reg)) {
    if (v.cc > dev.cc()) continue;  // auto may pick it here (the chain prefers this device's own)
    std::vector<std::string> classes = v.classes;
    if (classes.empty()) classes = {"ecoli"};
    for (const auto& cls : classes) {
      if (cls == "large") {
        // A 500 Mbp-class request picks it; its hits on such an index are checked read by read by
        // `gi validate --class large` (max_error 0 in its validated_h100 line), not here: building
        // a 1 G-row BWT takes minutes.
        const evk::Selection s =
            reg.select("barracuda_exact", evk::DeviceKey{dev.cc(), dev.name}, "auto", bc::make_request(600000000));
        EXPECT_EQ(s.variant.id, v.id) << s.rule;
        ++checked;
        continue;
      }
      if (cls != "ecoli") {
        ADD_FAILURE() << v.id << ": no GPU check for size class " << cls << " in this test yet";
        continue;
      }
      const bc::BwtIndex& idx = bc::gi_reference_index();
      const bc::ReadCodes rc = bc::gi_sample_reads(23, true, static_cast<std::size_t>(dev.sm_count) * 1024);
      const auto ref = bc::match_cpu(idx, rc);
      bc::PackedReads p;
      bc::pack_reads(rc, p);
      const evk::Selection s =
          reg.select("barracuda_exact", evk::DeviceKey{dev.cc(), dev.name}, "auto", bc::make_request(idx.l_pac));
      ASSERT_FALSE(s.variant.is_original()) << v.id << ": " << s.rule;
      const bc::KernelVariant kv = bc::resolve_kernel_variant(s.variant);
      bc::GpuMatcher m(idx, kv.config, dev.index, kv.source);
      EXPECT_EQ(m.origin(), "embedded fatbin (" + s.variant.id + ")");
      const auto got = m.match(p);
      int differ = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) differ += !(ref[i] == got[i]);
      EXPECT_EQ(differ, 0) << s.variant.id;
      std::printf("[measured] %s (%s): %zu reads, %d differ from the CPU\n", s.variant.id.c_str(), cls.c_str(),
                  ref.size(), differ);
      ++checked;
    }
  }
  if (!checked) GTEST_SKIP() << "no shipped barracuda_exact variant for " << dev.name;
}
