// GPU: every shipped barracuda_exact variant that `--kernel auto` may pick on this GPU (compute
// capability up to the GPU's) loads from the embedded fatbin (no NVRTC) and its (k, l) equal the
// CPU's on every read (the GI sample: lengths 36-250, N, substitutions, no-hits, repeats; outputs
// poisoned); and `auto` picks, for each size class, the variant the dispatch chain prefers here.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gi/gi_problem.hpp"
#include "core/gpu_exact.hpp"
#include "gi/kernel_variant.hpp"
#include "core/match.hpp"
#include "evk_testing.hpp"
#include "shipped.hpp"

namespace bc = evk::barracuda_exact;

TEST(ShippedBarracudaGpu, AutoPicksItLoadsTheFatbinAndMatchesTheCpu) {
  EVK_REQUIRE_GPU();
  const auto& dev = evk::gpu_environment().devices[0];
  const evk::Registry reg = bc::make_registry();
  const evk::DeviceKey key{dev.cc(), dev.name};
  std::vector<evk::Variant> here;  // the shipped variants `auto` may pick on this GPU
  for (const auto& v : evk::testing::builtin_variants(reg))
    if (v.cc <= dev.cc()) here.push_back(v);
  if (here.empty()) GTEST_SKIP() << "no shipped barracuda_exact variant for " << dev.name;

  // Each one loads from its embedded fatbin and gives the CPU's (k, l) on every read.
  const bc::BwtIndex& idx = bc::gi_reference_index();
  const bc::ReadCodes rc = bc::gi_sample_reads(23, true, static_cast<std::size_t>(dev.sm_count) * 1024);
  const auto ref = bc::match_cpu(idx, rc);
  bc::PackedReads p;
  bc::pack_reads(rc, p);
  for (const auto& v : here) {
    const bc::KernelVariant kv = bc::resolve_kernel_variant(v);
    bc::GpuMatcher m(idx, kv.config, dev.index, kv.source);
    EXPECT_EQ(m.origin(), "embedded fatbin (" + v.id + ")");
    const auto got = m.match(p);
    int differ = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) differ += !(ref[i] == got[i]);
    EXPECT_EQ(differ, 0) << v.id;
    std::printf("[measured] %s: %zu reads, %d differ from the CPU\n", v.id.c_str(), ref.size(), differ);
  }

  // `auto` picks one of them for each size class, and the one keyed to this GPU's name where there is
  // one: the real device name must match the genome's `device` key (which variant each fake GPU gets
  // is ShippedBarracuda.EachGpuGetsTheVariantValidatedForIt). A 500 Mbp-class request is only
  // selected here: its hits on such an index are checked read by read by `gi validate --class large`
  // (max_error 0 in the validated lines); building a 1 G-row BWT takes minutes.
  for (const char* cls : {"ecoli", "large"}) {
    const bool keyed_here = std::any_of(here.begin(), here.end(), [&](const evk::Variant& v) {
      return v.device_name == dev.name &&
             (v.classes.empty() || std::find(v.classes.begin(), v.classes.end(), cls) != v.classes.end());
    });
    const evk::Selection s = reg.select("barracuda_exact", key, "auto",
                                        bc::make_request(std::string(cls) == "large" ? 600000000 : idx.l_pac));
    EXPECT_TRUE(std::any_of(here.begin(), here.end(), [&](const evk::Variant& v) { return v.id == s.variant.id; }))
        << cls << ": " << s.variant.id << " (" << s.rule << ")";
    if (keyed_here) {
      EXPECT_EQ(s.variant.device_name, dev.name) << cls << ": " << s.rule;
    }
    std::printf("[measured] %s on %s: auto picks %s (%s)\n", cls, dev.name.c_str(), s.variant.id.c_str(),
                s.rule.c_str());
  }
}
