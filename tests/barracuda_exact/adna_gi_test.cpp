// The inexact GI problem's `adna` class on the CPU: its reads follow the aDNA model (lengths,
// deamination at the 5' end, determinism, hold-out apart from training), its options are bwa aln's
// -l 1024 -n 0.01 -o 2, and those options find the reads on a two-strand index of the human-like
// genome (a random one-strand BWT did not: bwa's lower bound on the differences assumes both strands).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/aln_search.hpp"
#include "gi/adna_gi.hpp"
#include "gi/aln_gi_problem.hpp"

namespace bc = evk::barracuda_exact;

namespace {
const std::vector<bc::RefSeq>& small_genome() {
  static const std::vector<bc::RefSeq> g = bc::adna_gi_genome(3000000, 7);
  return g;
}
}  // namespace

TEST(BarracudaAdnaGi, ReadsFollowTheModel) {
  const bc::ReadCodes a = bc::adna_gi_reads(small_genome(), 1, false, 70000);  // crosses a 65,536-read chunk
  ASSERT_EQ(a.size(), 70000u);
  std::vector<std::uint32_t> len(a.len.begin(), a.len.end());
  EXPECT_GE(*std::min_element(len.begin(), len.end()), 25u);
  EXPECT_LE(*std::max_element(len.begin(), len.end()), 120u);
  std::nth_element(len.begin(), len.begin() + len.size() / 2, len.end());
  EXPECT_NEAR(static_cast<double>(len[len.size() / 2]), 45.0, 3.0);
  // C->T at the 5' end: T at the first base well above T in the middle of the read
  double t_first = 0, t_mid = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    t_first += a.codes[a.offset[i]] == 3;
    t_mid += a.codes[a.offset[i] + a.len[i] / 2] == 3;
  }
  EXPECT_GT(t_first / a.size(), t_mid / a.size() + 0.04) << t_first << " " << t_mid;
  const bc::ReadCodes again = bc::adna_gi_reads(small_genome(), 1, false, 70000);
  EXPECT_EQ(again.codes, a.codes);
  const bc::ReadCodes held = bc::adna_gi_reads(small_genome(), 1, true, 1000), other = bc::adna_gi_reads(small_genome(), 2, false, 1000);
  EXPECT_NE(std::vector<std::uint8_t>(held.codes.begin(), held.codes.begin() + 200), std::vector<std::uint8_t>(a.codes.begin(), a.codes.begin() + 200));
  EXPECT_NE(std::vector<std::uint8_t>(other.codes.begin(), other.codes.begin() + 200), std::vector<std::uint8_t>(a.codes.begin(), a.codes.begin() + 200));
}

TEST(BarracudaAdnaGi, OptionsAreTheADnaSettingsAndFindTheReads) {
  const bc::AlnOptions o = bc::adna_gi_options();
  EXPECT_EQ(o.seed_len, 1024);
  EXPECT_FLOAT_EQ(o.fnr, 0.01f);
  EXPECT_EQ(o.max_diff, -1);
  EXPECT_EQ(o.max_gapo, 2);
  const bc::BwtIndex idx = bc::build_index(small_genome());
  const bc::ReadCodes r = bc::adna_gi_reads(small_genome(), 3, false, 3000);
  const bc::AlnBatch hits = bc::aln_search_batch(idx, r, o, 0);
  std::size_t found = 0, long_found = 0, long_reads = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    found += hits.count(i) > 0;
    if (r.len[i] >= 80) ++long_reads, long_found += hits.count(i) > 0;
  }
  // ~10% are contaminants (random sequence) and a few reads carry more damage than -n 0.01 allows
  EXPECT_GT(found, r.size() * 75 / 100) << found;
  ASSERT_GT(long_reads, 20u);
  EXPECT_GT(long_found, long_reads * 60 / 100) << long_found << " of " << long_reads;
}

TEST(BarracudaAdnaGi, TheInexactProblemHasTheClass) {
  const auto p = bc::make_inexact_gi_problem();
  EXPECT_EQ(p->class_names(), (std::vector<std::string>{"ecoli", "adna"}));
  p->check_class("adna");
}
