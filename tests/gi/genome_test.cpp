// Genome text, apply, and the operators' invariants.
#include <gtest/gtest.h>
#include "evk/gi/search.hpp"
#include "evk/dispatch.hpp"

#include <set>

#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

using testing::line_of;
Grammar toy() { return testing::toy_grammar(); }
std::string K(const Grammar& g, const std::string& prefix, const std::string& needle) {
  return prefix + std::to_string(line_of(g, needle));
}

TEST(GiGenome, TextRoundTripsExactly) {
  Grammar g = toy();
  std::string s = K(g, "_K_", "scratch[i] = acc;"), w = K(g, "_K_", "w[t] = weights[t];"),
              b = K(g, "_K_", "acc = acc + bias;"), i1 = K(g, "IF_K_", "if (acc > limit)"), i2 = K(g, "IF_K_", "if (i < n)"),
              f = K(g, "pragma_K_", "for (int k");
  std::string text = "BLOCK_W=256 USE_SHARED=true <" + s + "> <" + s + "><" + b + "> <" + w + ">+<" + s + "> <" + i1 +
                     "><" + i2 + "> <" + f + "><pragma_K4> <" + K(g, "restrict_K_", "toy_filter(") +
                     "><restrict_on> <" + K(g, "launchbounds_K_", "toy_filter(") + "><launchbounds_K2> <volatile_K><volatile_on>";
  Genome x = parse_genome(g, text);
  EXPECT_EQ(x.config["BLOCK_W"], "256");
  EXPECT_EQ(x.edits.size(), 8u);
  EXPECT_EQ(format_genome(g, x), text);
  EXPECT_EQ(parse_genome(g, format_genome(g, x)), x);
  // header lines and newlines (docs/FORMATS.md) are accepted
  EXPECT_EQ(parse_genome(g, "# evokernels genome v1\n# kernel: toy\nBLOCK_W=256 USE_SHARED=true\n" + text.substr(text.find('<'))), x);
  // empty genome
  EXPECT_EQ(format_genome(g, parse_genome(g, "")), "");
  EXPECT_TRUE(is_empty(g, parse_genome(g, "BLOCK_W=128")));  // the default value is no change
}

TEST(GiGenome, BadGenesAreInputErrors) {
  Grammar g = toy();
  EXPECT_THROW(parse_genome(g, "<_K_9999>"), InputError);
  EXPECT_THROW(parse_genome(g, "BLOCK_W=100"), InputError);
  EXPECT_THROW(parse_genome(g, "NOPE=1"), InputError);
  EXPECT_THROW(parse_genome(g, "<" + K(g, "_K_", "scratch[i]") + "><" + K(g, "IF_K_", "if (i < n)") + ">"), InputError);  // types
  // out of scope: the USE_SHARED loop's tile store copied after the loop
  EXPECT_THROW(parse_genome(g, "<" + K(g, "_K_", "scratch[i]") + "><" + K(g, "_K_", "tile[j] = in[g];") + ">"), InputError);
  EXPECT_THROW(parse_genome(g, "<" + K(g, "pragma_K_", "for (int k") + "><pragma_K12>"), InputError);
  EXPECT_THROW(parse_genome(g, "<_K_1"), InputError);
}

TEST(GiApply, EditsChangeTheRightLines) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  Variant orig = apply_genome(*p, "");
  EXPECT_EQ(orig.source, p->kernel_source());  // empty genome: the original, untouched
  EXPECT_EQ(orig.config, p->default_config());
  // The search's reference: engine prelude, but no loop carries a guard (no edit touches one), so
  // the kernel's code is the human code.
  Variant searched = apply(g, empty_genome(g));
  EXPECT_NE(searched.source.find("#define EVK_GI_LOOP_LIMIT 65536u"), std::string::npos);
  EXPECT_EQ(searched.source.find("EVK_GI_OK(evk_gi_guard_"), std::string::npos) << searched.source;
  EXPECT_EQ(searched.source.find("unsigned evk_gi_guard_"), std::string::npos);
  EXPECT_NE(searched.source.find("  for (int k = -RADIUS; k <= RADIUS; k++) {\n"), std::string::npos);
  std::string s = K(g, "_K_", "scratch[i] = acc;"), b = K(g, "_K_", "acc = acc + bias;");
  Variant v = apply(g, parse_genome(g, "<" + s + "> <" + b + ">+<" + s + "> <" + K(g, "pragma_K_", "for (int k") +
                                           "><pragma_K3> <" + K(g, "IF_K_", "if (acc > limit)") + "> <volatile_K><volatile_on> <" +
                                           K(g, "restrict_K_", "toy_filter(") + "><restrict_on> <" +
                                           K(g, "const_K_", "toy_filter(") + "_n><const_on> <" +
                                           K(g, "launchbounds_K_", "toy_filter(") + "><launchbounds_K0>"));
  EXPECT_NE(v.source.find("deleted"), std::string::npos);
  EXPECT_EQ(v.source.find("  scratch[i] = acc;\n    if"), std::string::npos);
  EXPECT_NE(v.source.find("  scratch[i] = acc;\n  acc = acc + bias;"), std::string::npos) << v.source;  // inserted copy
  EXPECT_NE(v.source.find("#pragma unroll 3\n  for (int k"), std::string::npos) << v.source;
  EXPECT_NE(v.source.find("if (false)"), std::string::npos);
  EXPECT_NE(v.source.find("__shared__ volatile float tile"), std::string::npos);
  EXPECT_NE(v.source.find("const float* __restrict__ in"), std::string::npos) << v.source;
  EXPECT_NE(v.source.find("const int n"), std::string::npos);
  EXPECT_NE(v.source.find("__global__ __launch_bounds__(BLOCK_W) void"), std::string::npos);
  // fixed lines untouched
  EXPECT_NE(v.source.find("    out[i] = acc;  //@gi fixed"), std::string::npos);
}

// Loop guards go exactly on the loops an edit can have made endless: those whose header or body
// (nested lines included) carries an edit; other loops keep their human text.
TEST(GiApply, GuardsOnlyLoopsAnEditTouches) {
  Grammar g = toy();
  const std::string k_loop = std::to_string(line_of(g, "for (int k")), j_loop = std::to_string(line_of(g, "for (int j"));
  auto guards = [&](const std::string& genome) {
    std::string src = apply(g, parse_genome(g, genome)).source;
    std::set<std::string> on;
    for (const auto& l : {k_loop, j_loop}) {
      bool use = src.find("EVK_GI_OK(evk_gi_guard_" + l + ")") != std::string::npos;
      bool decl = src.find("unsigned evk_gi_guard_" + l + " = 0;") != std::string::npos;
      EXPECT_EQ(use, decl) << genome;
      if (use) on.insert(l);
    }
    return on;
  };
  // the barrier inside the tap loop deleted: the tap loop is guarded, the tile loop is not
  const int sync_in_k = line_of(g, "    __syncthreads();");
  ASSERT_GT(sync_in_k, line_of(g, "for (int k"));
  EXPECT_EQ(guards("<_K_" + std::to_string(sync_in_k) + ">"), std::set<std::string>{k_loop});
  // a line inside the tile loop (under #if USE_SHARED) deleted: only the tile loop
  EXPECT_EQ(guards("USE_SHARED=true <" + K(g, "_K_", "g = min(max(g, 0), n - 1);") + ">"), std::set<std::string>{j_loop});
  // an edit outside every loop, and config or specials only: no guard
  EXPECT_EQ(guards("<" + K(g, "_K_", "scratch[i] = acc;") + ">"), std::set<std::string>{});
  EXPECT_EQ(guards("BLOCK_W=256 <" + K(g, "pragma_K_", "for (int k") + "><pragma_K4> <volatile_K><volatile_on>"),
            std::set<std::string>{});
  // the loop's own header edited (pragma aside): guarded
  const std::string f3 = K(g, "for3_K_", "for (int k");
  EXPECT_EQ(guards("<" + f3 + "><" + f3 + ">"), std::set<std::string>{k_loop});
}

TEST(GiOperators, MutationAppendsOneEditOrChangesOneValue) {
  Grammar g = toy();
  Rng rng(42);
  Genome base = parse_genome(g, "<" + K(g, "_K_", "scratch[i] = acc;") + ">");
  int code = 0, cfg = 0;
  for (int i = 0; i < 500; ++i) {
    Genome c = mutate(g, base, rng);
    if (c.edits.size() == base.edits.size() + 1) {
      ++code;
      EXPECT_TRUE(std::equal(base.edits.begin(), base.edits.end(), c.edits.begin()));
      std::string why;
      EXPECT_TRUE(edit_valid(g, c.edits.back(), &why)) << why;
      EXPECT_EQ(c.config, base.config);
    } else {
      ++cfg;
      EXPECT_EQ(c.edits, base.edits);
      int changed = 0;
      for (auto& [k, v] : c.config) changed += base.config.at(k) != v;
      EXPECT_LE(changed, 1);
    }
    EXPECT_EQ(parse_genome(g, format_genome(g, c)), c);
  }
  EXPECT_GT(code, 150);  // half and half
  EXPECT_GT(cfg, 150);
}

TEST(GiOperators, ConfigMutationFollowsThePapersRules) {
  Grammar g = toy();
  Rng rng(7);
  int resets = 0, neighbours = 0, jumps = 0, n = 4000;
  std::vector<std::string> bw = g.params[0].values;
  for (int i = 0; i < n; ++i) {
    Config c = empty_genome(g).config;
    c["BLOCK_W"] = "512";
    c["USE_SHARED"] = "true";
    Config before = c;
    mutate_config(g, c, rng);
    if (c["USE_SHARED"] != before["USE_SHARED"]) {
      EXPECT_EQ(c["USE_SHARED"], "false");  // flip (or reset: the default is false)
      continue;
    }
    ASSERT_NE(c["BLOCK_W"], "512");
    if (c["BLOCK_W"] == "128") ++resets;  // reset to default (a jump may also land here)
    else if (c["BLOCK_W"] == "256" || c["BLOCK_W"] == "1024") ++neighbours;
    else ++jumps;
  }
  // P(BLOCK_W chosen)=1/2; reset 1/5 + jumps landing on 128: 4/5*1/2*1/5 -> ~0.28 of those
  EXPECT_NEAR(resets / (n / 2.0), 0.28, 0.06);
  EXPECT_GT(neighbours, jumps);  // neighbours: 4/5*(1/2 + 1/2*2/5); others: 4/5*1/2*2/5
}

TEST(GiOperators, CrossoverTakesGenesOnlyFromParentsWithoutDuplicates) {
  Grammar g = toy();
  Rng rng(3);
  Genome a = empty_genome(g), b = empty_genome(g);
  for (int i = 0; i < 6; ++i) a = mutate(g, a, rng);
  for (int i = 0; i < 6; ++i) b = mutate(g, b, rng);
  for (int i = 0; i < 300; ++i) {
    Genome c = crossover(a, b, rng);
    std::set<std::string> seen;
    for (const auto& e : c.edits) {
      EXPECT_TRUE(seen.insert(e.text()).second) << "duplicate " << e.text();
      bool from = std::find(a.edits.begin(), a.edits.end(), e) != a.edits.end() ||
                  std::find(b.edits.begin(), b.edits.end(), e) != b.edits.end();
      EXPECT_TRUE(from) << e.text();
    }
    for (const auto& [k, v] : c.config) EXPECT_TRUE(v == a.config.at(k) || v == b.config.at(k));
  }
}

}  // namespace
}  // namespace evk::gi

// gi validate --record (issue 38): the device's compute capability into `# validated-cc:`, added
// after `# cc:` or merged, never twice nor for the file's own architecture; the dispatch then
// reads it and runs the variant on that architecture.
TEST(GenomeFile, ValidatedCcIsRecordedOnceAndReadByTheDispatch) {
  const std::string file = evk::gi::genome_file({{"kernel", "k"}, {"id", "v1"}, {"cc", "9.0"}, {"device", "NVIDIA H200"}}, "A=1");
  const std::string once = evk::gi::with_validated_cc(file, 89, "f");
  EXPECT_NE(once.find("# cc: 9.0\n# validated-cc: 8.9\n"), std::string::npos) << once;
  EXPECT_EQ(evk::gi::with_validated_cc(once, 89, "f"), once);      // already there
  EXPECT_EQ(evk::gi::with_validated_cc(file, 90, "f"), file);      // its own architecture
  const std::string twice = evk::gi::with_validated_cc(once, 120, "f");
  EXPECT_NE(twice.find("# validated-cc: 8.9, 12.0\n"), std::string::npos) << twice;
  EXPECT_NE(twice.find("# genes: 1\nA=1\n"), std::string::npos) << twice;  // the genome itself untouched
  const evk::Variant v = evk::parse_genome_text(twice, "f");
  EXPECT_EQ(v.validated_cc, (std::vector<int>{89, 120}));
  evk::Registry r;
  r.add_kernel("k");
  r.add(v);
  EXPECT_EQ(r.select("k", evk::DeviceKey{120, "RTX 5090"}).variant.id, "v1");
  EXPECT_TRUE(r.select("k", evk::DeviceKey{100, "NVIDIA B200"}).variant.is_original());
  EXPECT_THROW(evk::gi::with_validated_cc("A=1\n", 89, "plain.genome"), evk::InputError);
}
