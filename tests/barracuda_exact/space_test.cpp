// The kernel's whole configuration space: every combination of the 15 parameters is accepted or
// refused by kernel_compile_options exactly as the documented rules say, legal combinations are
// grouped into the programs they compile to (exactly the two dead-macro identities of the kernel
// source), the grouping does not depend on the thread count, and the GPU test's coverage plan covers
// what it claims. The full grouping (151,776 programs) runs in the GPU suite, on the GPU host's cores.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/kernel_config.hpp"
#include "core/kernel_coverage.hpp"
#include "core/kernel_space.hpp"
#include "evk/error.hpp"
#include "evk_kernels/barracuda_exact_kernel.hpp"

namespace bc = evk::barracuda_exact;

namespace {

// The legality rules as docs/BARRACUDA_EXACT.md states them, written again independently.
bool legal_by_rules(const evk::gi::Config& c) {
  auto on = [&](const char* n) { return c.at(n) == "true"; };
  const std::string& ct = c.at("cache_threads");
  if (!on("sequence_shift81") || !on("sequence_stride")) return false;
  if (on("occ_par") && ct == "off") return false;
  if ((ct != "off" || on("scache_global_bwt")) && !on("cache_global_bwt")) return false;
  const int tps = (ct == "off" ? 1 : std::stoi(ct)) * (on("kl_par") ? 2 : 1);
  return tps <= 32 && std::stoi(c.at("BLOCK_W")) % tps == 0;
}

// Two legal combinations compile to the same program exactly when they agree after these two
// identities of the kernel source: mycache2 is only read under `#elif` of mycache4, and
// cache_threads=1 gives CT = 1 as cache_threads off does (cache_threads itself is read elsewhere
// only in the #error tests, and occ_par=true needs cache_threads).
evk::gi::Config canonical(evk::gi::Config c) {
  if (c["mycache4"] == "true") c["mycache2"] = "false";
  if (c["cache_threads"] == "1" && c["occ_par"] == "false") c["cache_threads"] = "off";
  return c;
}

// Legal combinations per block width, derived by hand: 128 choices of the 7 free booleans
// (many_blocks, direct_sequence, direct_index, sequence_global, mycache4, mycache2,
// direct_global_bwt) times the thread structures (cache_threads, kl_par, occ_par, cache_global_bwt,
// scache_global_bwt) whose threads per read (1 or cache_threads, x2 with kl_par) divide BLOCK_W and
// are <= 32: cache_threads off gives 3 cache variants (no cache; cache; cache in scalars) x kl_par;
// cache_threads c gives 4 (occ_par x scache) per kl_par. For BLOCK_W a multiple of 32:
// 6 + 5 x 8 + 4 (c = 32 without kl_par) = 50 structures; BLOCK_W 1, 2, 4, 8, 16: 7, 18, 26, 34, 42.
constexpr std::uint64_t kLegal = 128 * (32 * 50 + 7 + 18 + 26 + 34 + 42);  // 221,056
// Distinct programs: the free booleans give 96 (mycache2 is dead under mycache4: 3 load units x
// 2^5), and of the structures the 4 (x kl_par, scache) with cache_threads=1, occ_par off duplicate
// cache_threads off with the cache: 46 per width >= 32; 5, 14, 22, 30, 38 for 1..16.
constexpr std::size_t kSmallWidthsPrograms = 96 * (5 + 14 + 22 + 30 + 38 + 46);  // BLOCK_W 1..32

std::uint64_t per_block_w() { return bc::kernel_combinations() / bc::kernel_params()[0].values.size(); }

const bc::KernelSpace& small_widths(int threads) {  // BLOCK_W 1, 2, 4, 8, 16, 32 (the first 6 values)
  static std::map<int, bc::KernelSpace> cache;
  auto it = cache.find(threads);
  if (it == cache.end()) {
    bc::KernelSpaceOptions o;
    o.threads = threads;
    o.last = 6 * per_block_w();
    it = cache.emplace(threads, bc::enumerate_kernel_space(std::string(barracuda_exact_kernel().text()), o)).first;
  }
  return it->second;
}

}  // namespace

TEST(BarracudaSpace, EveryCombinationIsAcceptedOrRefusedAsTheRulesSay) {
  ASSERT_EQ(bc::kernel_combinations(), 37ull * 7 * 8192);  // 37 BLOCK_W x 7 cache_threads x 2^13
  std::uint64_t legal = 0, disagree = 0;
  for (std::uint64_t i = 0; i < bc::kernel_combinations(); ++i) {
    const auto c = bc::kernel_combination(i);
    bool accepted = true;
    try {
      bc::kernel_compile_options(c);  // what every NVRTC compile of the kernel goes through
    } catch (const evk::InputError&) {
      accepted = false;
    }
    legal += accepted;
    if (accepted != legal_by_rules(c) && ++disagree <= 5) ADD_FAILURE() << "combination " << i << " accepted=" << accepted;
  }
  EXPECT_EQ(disagree, 0u);
  EXPECT_EQ(legal, kLegal);
}

TEST(BarracudaSpace, ProgramsAreExactlyTheDeadMacroIdentities) {
  const bc::KernelSpace& s = small_widths(0);
  EXPECT_EQ(s.combinations, 6 * per_block_w());
  EXPECT_EQ(s.legal, 128u * (7 + 18 + 26 + 34 + 42 + 50));
  EXPECT_EQ(s.legal + s.rejected, s.combinations);
  EXPECT_EQ(s.legal_with_error, 0u);  // no legal combination trips the kernel's own #error
  ASSERT_EQ(s.legal_program.size(), s.legal);
  EXPECT_EQ(s.programs.size(), kSmallWidthsPrograms);
  // same program <=> same canonical form, and the members add up
  std::map<evk::gi::Config, std::uint32_t> prog_of_canon;
  std::map<std::uint32_t, evk::gi::Config> canon_of_prog;
  std::vector<std::uint64_t> members(s.programs.size(), 0);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < s.legal_program.size(); ++i) {
    const auto c = bc::kernel_combination(s.legal_combination[i]);
    ASSERT_TRUE(legal_by_rules(c));
    const auto k = canonical(c);
    const std::uint32_t p = s.legal_program[i];
    ++members[p];
    auto [a, fresh_a] = prog_of_canon.emplace(k, p);
    auto [b, fresh_b] = canon_of_prog.emplace(p, k);
    bad += a->second != p || b->second != k;
  }
  EXPECT_EQ(bad, 0u);
  for (std::size_t p = 0; p < s.programs.size(); ++p) {
    EXPECT_EQ(members[p], s.programs[p].members);
    EXPECT_NO_THROW(bc::kernel_compile_options(s.programs[p].config));
  }
}

TEST(BarracudaSpace, GroupingDoesNotDependOnThreads) {
  const bc::KernelSpace &a = small_widths(0), &b = small_widths(1);
  ASSERT_EQ(a.programs.size(), b.programs.size());
  for (std::size_t p = 0; p < a.programs.size(); ++p) {
    EXPECT_EQ(a.programs[p].config, b.programs[p].config);
    EXPECT_EQ(a.programs[p].members, b.programs[p].members);
    EXPECT_EQ(a.programs[p].hash, b.programs[p].hash);
  }
  EXPECT_EQ(a.legal_program, b.legal_program);
  EXPECT_EQ(a.legal_combination, b.legal_combination);
  // a program's representative is the first of its members in enumeration order
  std::vector<char> seen(a.programs.size(), 0);
  for (std::size_t i = 0; i < a.legal_program.size(); ++i)
    if (!seen[a.legal_program[i]]) {
      seen[a.legal_program[i]] = 1;
      EXPECT_EQ(bc::kernel_combination(a.legal_combination[i]), a.programs[a.legal_program[i]].config);
    }
}

TEST(BarracudaSpace, KeysSeparateLiveParametersAndJoinDeadOnes) {
  const std::string src(barracuda_exact_kernel().text());
  const auto d = bc::default_kernel_config();
  auto with = [&](const char* k, const char* v) {
    auto c = d;
    c[k] = v;
    return c;
  };
  EXPECT_EQ(bc::program_key(src, d), bc::program_key(src, with("mycache2", "true")));  // dead under mycache4
  EXPECT_NE(bc::program_key(src, d), bc::program_key(src, with("BLOCK_W", "128")));
  EXPECT_NE(bc::program_key(src, d), bc::program_key(src, with("direct_global_bwt", "true")));
  EXPECT_NE(bc::program_key(src, d), bc::program_key(src, with("many_blocks", "true")));
  auto on = with("mycache4", "false");
  EXPECT_NE(bc::program_key(src, on), bc::program_key(src, with("mycache2", "true")));
  const std::string k = bc::program_key(src, d);
  EXPECT_EQ(k.find("#if"), std::string::npos);        // conditionals resolved
  EXPECT_EQ(k.find("BLOCK_W"), std::string::npos);    // macros expanded
  EXPECT_NE(k.find("block * 64 + threadIdx.x"), std::string::npos) << k;
  EXPECT_NE(k.find("--launch: block 64, 1 threads per read"), std::string::npos);
}

TEST(BarracudaSpace, CoveragePlanCoversEveryPairPerBlockWidth) {
  const bc::KernelSpace& s = small_widths(0);
  const bc::CoveragePlan plan = bc::plan_coverage(s, "32");
  // the three parts partition the programs; `full` is every BLOCK_W=32 program
  std::vector<int> uses(s.programs.size(), 0);
  for (const auto* part : {&plan.full, &plan.pairwise, &plan.rest})
    for (std::size_t p : *part) ++uses[p];
  for (int u : uses) EXPECT_EQ(u, 1);
  EXPECT_EQ(plan.full.size(), 96u * 46);
  for (std::size_t p : plan.full) EXPECT_EQ(s.programs[p].config.at("BLOCK_W"), "32");
  EXPECT_LT(plan.pairwise.size(), 5u * 40);
  // independently: per other BLOCK_W, every pair of (name=value) seen in a legal combination is
  // also seen in a member of a chosen program
  std::set<std::size_t> chosen(plan.pairwise.begin(), plan.pairwise.end());
  std::map<std::string, std::set<std::string>> need, have;
  for (std::size_t i = 0; i < s.legal_program.size(); ++i) {
    const auto c = bc::kernel_combination(s.legal_combination[i]);
    const std::string& w = c.at("BLOCK_W");
    if (w == "32") continue;
    for (auto a = c.begin(); a != c.end(); ++a)
      for (auto b = std::next(a); b != c.end(); ++b) {
        if (a->first == "BLOCK_W" || b->first == "BLOCK_W") continue;
        const std::string pair = a->first + "=" + a->second + " " + b->first + "=" + b->second;
        need[w].insert(pair);
        if (chosen.count(s.legal_program[i])) have[w].insert(pair);
      }
  }
  EXPECT_EQ(need.size(), 5u);
  for (const auto& [w, pairs] : need) {
    EXPECT_EQ(have[w], pairs) << "BLOCK_W=" << w;
    EXPECT_GT(pairs.size(), 100u);
  }
  std::printf("BLOCK_W 1..16: %zu programs cover all %zu pair sets\n", plan.pairwise.size(), need.size());
}
