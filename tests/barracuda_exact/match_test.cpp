// Matching: (k, l) against brute-force occurrence counts and positions in the forward +
// reverse-complement text, packing for the kernel, hit resolution (strand, contig, bridging, XA).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/hits.hpp"
#include "core/match.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;

namespace {
std::string index_text(const bc::BwtIndex& idx) {  // forward + reverse complement as letters
  std::string s;
  for (std::int64_t i = 0; i < idx.l_pac; ++i) s += "ACGT"[idx.pac_base(i)];
  return s + bct::revcomp(s);
}
std::string forward_text(const bc::BwtIndex& idx) {
  std::string s;
  for (std::int64_t i = 0; i < idx.l_pac; ++i) s += "ACGT"[idx.pac_base(i)];
  return s;
}
}  // namespace

TEST(BarracudaMatch, IntervalsMatchBruteForceOccurrences) {
  const auto ref = bct::tricky_reference(5);
  const bc::BwtIndex idx = bc::build_index(ref);
  const std::string text = index_text(idx), fwd = forward_text(idx);
  std::mt19937_64 rng(9);
  int hits = 0, repeats = 0;
  for (int i = 0; i < 600; ++i) {
    const std::size_t len = 20 + rng() % 200;
    std::string read;
    switch (i % 6) {
      case 0: read = bct::random_dna(rng, len); break;
      case 1: read = bct::revcomp(fwd.substr(rng() % (fwd.size() - len), len)); break;
      case 2: read = fwd.substr(12000 + rng() % 20, 90); break;  // the 7-copy repeat
      case 3: read = fwd.substr(1000 + rng() % 30, 100); break;  // 4 copies, both strands
      default: read = fwd.substr(rng() % (fwd.size() - len), len);
    }
    bc::ReadCodes rc;
    rc.add(read.data(), read.size());
    const bc::KL kl = bc::match_exact(idx, rc.codes.data(), rc.len[0]);
    // bwa searches the reverse complement: count its occurrences in forward + reverse-complement
    const std::string q = bct::revcomp(read);
    std::set<std::uint64_t> pos;
    for (std::size_t p = text.find(q); p != std::string::npos; p = text.find(q, p + 1)) pos.insert(p);
    ASSERT_EQ(kl.count(), pos.size()) << read;
    std::set<std::uint64_t> got;
    for (std::uint64_t r = kl.k; kl.hit() && r <= kl.l; ++r) got.insert(idx.sa_at(r));
    ASSERT_EQ(got, pos) << read;
    hits += kl.hit();
    repeats += kl.count() > 1;
  }
  EXPECT_GT(hits, 300);
  EXPECT_GT(repeats, 150);
}

TEST(BarracudaMatch, AmbiguousReadBaseStopsTheSearch) {
  const bc::BwtIndex idx = bc::build_index(bct::tricky_reference(5));
  std::string read = forward_text(idx).substr(300, 50);
  read[10] = 'N';
  bc::ReadCodes rc;
  rc.add(read.data(), read.size());
  const bc::KL kl = bc::match_exact(idx, rc.codes.data(), rc.len[0]);
  EXPECT_EQ(kl.k, 0u);
  EXPECT_FALSE(kl.hit());
}

TEST(BarracudaMatch, MultiThreadedEqualsSingleThreaded) {
  const bc::BwtIndex idx = bc::build_index(bct::tricky_reference(5));
  const std::string fwd = forward_text(idx);
  std::mt19937_64 rng(1);
  bc::ReadCodes rc;
  for (int i = 0; i < 3000; ++i) {
    std::string r = fwd.substr(rng() % (fwd.size() - 100), 100);
    if (i % 3 == 0) r[rng() % 100] = 'G';
    rc.add(r.data(), r.size());
  }
  const auto a = bc::match_cpu(idx, rc, 1), b = bc::match_cpu(idx, rc, 4);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << i;
}

TEST(BarracudaMatch, PackedLayoutDecodes) {
  std::mt19937_64 rng(2);
  bc::ReadCodes rc;
  for (int i = 0; i < 77; ++i) {
    std::string r = bct::random_dna(rng, 1 + rng() % 300);
    if (i % 5 == 0) r[0] = 'N';
    rc.add(r.data(), r.size());
  }
  bc::PackedReads p;
  bc::pack_reads(rc, p);
  std::uint32_t max_len = 0;
  for (auto l : rc.len) max_len = std::max(max_len, l);
  EXPECT_EQ(p.stride, (max_len + 7) / 8);
  for (std::size_t r = 0; r < rc.size(); ++r) {
    EXPECT_EQ(p.index[r], (r / 32) * p.stride * 32 + r % 32);
    for (std::uint32_t j = 0; j < rc.len[r]; ++j) {
      const std::uint32_t w = p.words[p.index[r] + (j / 8) * 32];
      ASSERT_EQ((w >> ((j % 8) * 4)) & 15u, rc.codes[rc.offset[r] + j]) << r << " " << j;
    }
  }
}

TEST(BarracudaMatch, HitsGiveStrandPositionAndBridging) {
  const auto ref = bct::tricky_reference(5);
  const bc::BwtIndex idx = bc::build_index(ref);
  const std::string fwd = forward_text(idx);
  auto hit_of = [&](const std::string& read) {
    bc::ReadCodes rc;
    rc.add(read.data(), read.size());
    return bc::resolve_hit(idx, bc::match_exact(idx, rc.codes.data(), rc.len[0]), static_cast<std::uint32_t>(read.size()));
  };
  // a unique forward read in chrB
  const std::string f = fwd.substr(20000 + 4000, 80);
  bc::Hit h = hit_of(f);
  ASSERT_EQ(h.count, 1u);
  EXPECT_EQ(h.primary.tid, 1);
  EXPECT_FALSE(h.primary.reverse);
  EXPECT_EQ(h.primary.pos, 24000);
  EXPECT_FALSE(h.bridging);
  // its reverse complement: same place, reverse strand
  h = hit_of(bct::revcomp(f));
  ASSERT_EQ(h.count, 1u);
  EXPECT_TRUE(h.primary.reverse);
  EXPECT_EQ(h.primary.pos, 24000);
  // across the chrA/chrB boundary: found, flagged as bridging
  h = hit_of(fwd.substr(20000 - 40, 80));
  ASSERT_EQ(h.count, 1u);
  EXPECT_TRUE(h.bridging);
  // the 4-copy repeat: 3 alternatives listed (XA), all distinct from the primary
  h = hit_of(fwd.substr(1010, 100));
  EXPECT_EQ(h.count, 4u);
  EXPECT_EQ(h.alts.size(), 3u);
  // the 7-copy one: no XA
  h = hit_of(fwd.substr(12000, 100));
  EXPECT_GE(h.count, 7u);
  EXPECT_TRUE(h.alts.empty());
}
