// GPU: index's suffix sort on GPUs (core/sa_gpu.hpp) against the CPU path (libdivsufsort, itself
// byte-identical to `bwa index` in index_test.cpp): every word of the .bwt body and of the sampled
// SA compared, on genomes made to stress the sort: exact duplicates of 2-6 kb (up to ~200 rounds of
// 29 bases), tandem repeats of periods 1-171, texts shorter than one round, memory caps that force
// many batches and batches that must be split, two workers sharing the batches, and a cap with no
// room at all (the CPU then builds the index and the report says why).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "core/index.hpp"
#include "core/sa_gpu.hpp"
#include "evk/device.hpp"

namespace bc = evk::barracuda_exact;

namespace {

bool no_gpu() { return !evk::gpu_environment().usable(); }

std::string random_dna(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, 'A');
  for (char& c : s) c = "ACGT"[rng() & 3];
  return s;
}

std::string mutate(std::string s, std::mt19937_64& rng, double rate) {
  for (char& c : s)
    if (std::uniform_real_distribution<double>(0, 1)(rng) < rate) c = "ACGT"[rng() & 3];
  return s;
}

// Random contigs with N runs and IUPAC codes, exact and near copies of 2-6 kb units, tandem
// repeats of periods 1, 2, 3, 7 and 171, and one contig shorter than a round.
std::vector<bc::RefSeq> repeat_genome(std::uint64_t seed, std::size_t random_len) {
  std::mt19937_64 rng(seed);
  std::vector<bc::RefSeq> ref;
  std::string a = random_dna(rng, random_len);
  a.replace(1000, 500, std::string(500, 'N'));
  a.replace(5000, 3, "RYk");
  ref.push_back({"chrA", "random", a});
  const std::string unit = random_dna(rng, 6000);
  std::string dup;
  for (int i = 0; i < 4; ++i) dup += unit + random_dna(rng, 50) + mutate(unit.substr(0, 2000 + 1000 * i), rng, 0.01);
  ref.push_back({"chrDup", "", dup});
  std::string tandem;
  for (std::size_t period : {1u, 2u, 3u, 7u, 171u}) {
    const std::string motif = random_dna(rng, period);
    for (std::size_t i = 0; i < 5000 / period; ++i) tandem += motif;
    tandem += random_dna(rng, 100);
  }
  ref.push_back({"chrTandem", "", tandem});
  ref.push_back({"chrTiny", "", "ACGTTG"});
  return ref;
}

bc::BwtIndex cpu_index(const std::vector<bc::RefSeq>& ref) { return bc::build_index(ref, bc::IndexOptions{}); }

bc::BwtIndex gpu_index(const std::vector<bc::RefSeq>& ref, bc::IndexReport& rep, std::vector<int> devices = {0},
                       std::uint64_t cap = 0) {
  bc::IndexOptions o;
  o.check_order = true;  // and the order check must find nothing
  o.devices = std::move(devices);
  o.gpu_memory = cap;
  return bc::build_index(ref, o, &rep);
}

void expect_same_index(const bc::BwtIndex& gpu, const bc::BwtIndex& cpu) {
  EXPECT_EQ(gpu.primary, cpu.primary);
  EXPECT_EQ(gpu.seq_len, cpu.seq_len);
  for (int c = 0; c < 5; ++c) EXPECT_EQ(gpu.L2[c], cpu.L2[c]) << "L2[" << c << "]";
  ASSERT_EQ(gpu.occ.size(), cpu.occ.size());
  const auto occ = std::mismatch(gpu.occ.begin(), gpu.occ.end(), cpu.occ.begin());
  EXPECT_TRUE(occ.first == gpu.occ.end()) << ".bwt word " << (occ.first - gpu.occ.begin()) << " differs";
  ASSERT_EQ(gpu.sa.size(), cpu.sa.size());
  const auto sa = std::mismatch(gpu.sa.begin(), gpu.sa.end(), cpu.sa.begin());
  EXPECT_TRUE(sa.first == gpu.sa.end()) << "SA sample " << (sa.first - gpu.sa.begin()) << " differs";
  EXPECT_TRUE(gpu.pac == cpu.pac);
}

}  // namespace

TEST(BarracudaIndexGpu, RepeatsAndAmbiguousBasesEqualTheCpuIndex) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  const auto ref = repeat_genome(1, 300000);
  bc::IndexReport rep;
  const bc::BwtIndex g = gpu_index(ref, rep);
  ASSERT_TRUE(rep.gpu) << rep.fallback;
  expect_same_index(g, cpu_index(ref));
  EXPECT_TRUE(rep.checked);
  EXPECT_EQ(rep.disorders, 0u);
  // the 6 kb unit is there four times exactly and the tandem repeats run 5 kb: their suffixes
  // outlast the 12 rounds of 29 bases and are finished by doubling (377 -> 6032 bases: 5 steps)
  EXPECT_EQ(rep.max_rounds, 12u);
  EXPECT_GT(rep.resorted, 0u);
  EXPECT_GT(rep.doubled, 4000u);
  EXPECT_GE(rep.doubling_steps, 4u);
  ASSERT_EQ(rep.gpus.size(), 1u);
  EXPECT_EQ(rep.gpus[0].suffixes, g.seq_len);
  EXPECT_GT(rep.gpus[0].peak_bytes, g.seq_len / 4);
}

TEST(BarracudaIndexGpu, TextsShorterThanOneRoundEqualTheCpuIndex) {
  // every suffix ends inside the first 29-base window: the order of ends ('$') decides alone
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  std::mt19937_64 rng(5);
  for (std::size_t len : {1u, 2u, 3u, 7u, 14u, 15u, 16u, 28u, 29u, 30u, 31u, 32u, 33u, 57u, 58u, 59u, 64u, 100u}) {
    for (int rep_i = 0; rep_i < 3; ++rep_i) {
      std::string s = rep_i == 0 ? std::string(len, 'A') : rep_i == 1 ? random_dna(rng, len) : std::string(len, 'C');
      if (rep_i == 2 && len > 2) s[len / 2] = 'T';
      const std::vector<bc::RefSeq> ref = {{"t", "", s}};
      bc::IndexReport rep;
      const bc::BwtIndex g = gpu_index(ref, rep);
      ASSERT_TRUE(rep.gpu) << rep.fallback;
      SCOPED_TRACE("text " + s);
      expect_same_index(g, cpu_index(ref));
    }
  }
}

TEST(BarracudaIndexGpu, MemoryCapsMakeManyBatchesAndSplitRepeatRichOnes) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  // 2 Mbp of which 1.6 Mbp are 400 near copies (0.3%) of one 4 kb unit: most suffixes share 29
  // bases, so batches sized for random text outgrow the re-sort list and are halved
  std::mt19937_64 rng(9);
  const std::string unit = random_dna(rng, 4000);
  std::string rich;
  for (int i = 0; i < 400; ++i) rich += mutate(unit, rng, 0.003);
  const std::vector<bc::RefSeq> ref = {{"rich", "", rich}, {"plain", "", random_dna(rng, 400000)}};
  const bc::BwtIndex cpu = cpu_index(ref);
  bc::IndexReport rep;
  const bc::BwtIndex g = gpu_index(ref, rep, {0}, 190ull << 20);
  ASSERT_TRUE(rep.gpu) << rep.fallback;
  expect_same_index(g, cpu);
  EXPECT_GE(rep.batches, 6u);
  EXPECT_GT(rep.resorted, g.seq_len / 2);
  EXPECT_EQ(rep.disorders, 0u);  // including the pairs across batch boundaries
}

TEST(BarracudaIndexGpu, TwoWorkersShareTheBatches) {
  // two workers on the GPUs there are (the same GPU twice on a one-GPU host): the rows of each
  // batch land where they belong whichever worker sorted it
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  const int count = static_cast<int>(evk::gpu_environment().devices.size());
  const std::vector<int> devices = count > 1 ? std::vector<int>{0, 1} : std::vector<int>{0, 0};
  const auto ref = repeat_genome(3, 2000000);
  bc::IndexReport rep;
  const bc::BwtIndex g = gpu_index(ref, rep, devices, 170ull << 20);
  ASSERT_TRUE(rep.gpu) << rep.fallback;
  expect_same_index(g, cpu_index(ref));
  ASSERT_EQ(rep.gpus.size(), 2u);
  EXPECT_EQ(rep.gpus[0].batches + rep.gpus[1].batches, rep.batches);
  EXPECT_EQ(rep.gpus[0].suffixes + rep.gpus[1].suffixes, g.seq_len);
  EXPECT_GE(rep.batches, 4u);
}

TEST(BarracudaIndexGpu, NoRoomFallsBackToTheCpu) {
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  const auto ref = repeat_genome(4, 100000);
  bc::IndexReport rep;
  const bc::BwtIndex g = gpu_index(ref, rep, {0}, 1ull << 20);
  EXPECT_FALSE(rep.gpu);
  EXPECT_NE(rep.fallback.find("no room"), std::string::npos) << rep.fallback;
  expect_same_index(g, cpu_index(ref));
}

TEST(BarracudaIndexGpu, OrderCheckFindsEveryKindOfFault) {
  // the checker that `index --check` runs, on suffix arrays made on the host: the true one (sorted
  // by comparing the suffixes themselves, a shorter suffix first) passes, and a swap of two rows,
  // a swap inside a repeat (same first bases, order decided far away) and a row held twice fail
  if (no_gpu()) GTEST_SKIP() << "no GPU";
  std::mt19937_64 rng(9);
  std::vector<std::uint8_t> text(20000);
  for (auto& c : text) c = static_cast<std::uint8_t>(rng() & 3);
  std::copy(text.begin() + 1000, text.begin() + 1400, text.begin() + 9000);  // a 400-base repeat
  const std::uint64_t n = text.size();
  std::vector<std::uint64_t> sa(n);
  std::iota(sa.begin(), sa.end(), 0);
  std::sort(sa.begin(), sa.end(), [&](std::uint64_t a, std::uint64_t b) {
    return std::lexicographical_compare(text.begin() + static_cast<std::ptrdiff_t>(a), text.end(),
                                        text.begin() + static_cast<std::ptrdiff_t>(b), text.end());
  });
  EXPECT_EQ(bc::check_suffix_order_gpu(text.data(), n, sa.data()), 0u);
  auto swapped = sa;
  std::swap(swapped[100], swapped[101]);
  EXPECT_GT(bc::check_suffix_order_gpu(text.data(), n, swapped.data()), 0u);
  const auto r1 = std::find(sa.begin(), sa.end(), 1000ull) - sa.begin(), r2 = std::find(sa.begin(), sa.end(), 9000ull) - sa.begin();
  ASSERT_EQ(std::abs(r1 - r2), 1) << "the two copies of the repeat sit in adjacent rows";
  auto repeat = sa;
  std::swap(repeat[static_cast<std::size_t>(r1)], repeat[static_cast<std::size_t>(r2)]);
  EXPECT_GT(bc::check_suffix_order_gpu(text.data(), n, repeat.data()), 0u);
  auto twice = sa;
  twice[500] = twice[501];
  EXPECT_GT(bc::check_suffix_order_gpu(text.data(), n, twice.data()), 0u);
}
