// BAM's BGZF blocks compressed on the task pool (io/bgzf_blocks.hpp) against htslib's bgzf writing
// the same bytes: each level's block byte for byte, and a stream of records of every size (a record
// that fills a block to the byte, records larger than a block) cut where bgzf_flush_try + bgzf_write
// cut it, added in several batches, with 1 and 3 pool workers.
#include <gtest/gtest.h>
#include <htslib/bgzf.h>

#include <fstream>
#include <random>
#include <sstream>

#include "evk_testing.hpp"
#include "io/bgzf_blocks.hpp"

namespace bc = evk::barracuda_exact;
using evk::testing::TempDir;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Text that compresses like BAM records: names, bases, qualities with some noise.
std::string record_like(std::mt19937_64& rng, std::size_t n) {
  std::string s;
  while (s.size() < n) {
    s += "read" + std::to_string(rng() % 100000) + '\t';
    for (int i = 0; i < 40; ++i) s += "ACGT"[rng() % 4];
    for (int i = 0; i < 40; ++i) s += static_cast<char>('5' + rng() % 10);
  }
  s.resize(n);
  return s;
}

// htslib's file of these records (non-threaded bgzf at htslib level `level`, "" = its default):
// bgzf_flush_try then bgzf_write per record, as bam_write1 does.
std::string htslib_file(const std::filesystem::path& p, const std::string& level, const std::vector<std::string>& recs) {
  BGZF* f = bgzf_open(p.c_str(), ("w" + level).c_str());
  EXPECT_NE(f, nullptr);
  for (const auto& r : recs) {
    EXPECT_EQ(bgzf_flush_try(f, static_cast<ssize_t>(r.size())), 0);
    EXPECT_EQ(bgzf_write(f, r.data(), r.size()), static_cast<ssize_t>(r.size()));
  }
  EXPECT_EQ(bgzf_close(f), 0);
  return slurp(p);
}

// htslib's empty-file marker (an empty block): what bgzf_close writes after the last block.
std::string eof_block(const std::filesystem::path& p) { return htslib_file(p, "", {}); }

}  // namespace

TEST(BarracudaBgzfBlocks, EachLevelsBlockIsHtslibs) {
  TempDir dir;
  std::mt19937_64 rng(3);
  const std::string data = record_like(rng, bc::kBgzfBlockData);
  const std::string eof = eof_block(dir / "e.gz");
  ASSERT_EQ(eof.size(), 28u);
  for (int level = -1; level <= 9; ++level) {
    if (level == 0) continue;
    const std::string want = htslib_file(dir / "h.gz", level < 0 ? "" : std::to_string(level), {data});
    std::string got;
    bc::bgzf_block(data.data(), data.size(), bc::bgzf_deflate_level(level), got);
    EXPECT_EQ(got + eof, want) << "htslib level " << level << ": " << got.size() << " bytes against " << want.size() - 28;
  }
}

TEST(BarracudaBgzfBlocks, RecordsAreCutAndCompressedAsHtslibDoes) {
  TempDir dir;
  std::mt19937_64 rng(8);
  std::vector<std::string> recs;
  for (int i = 0; i < 3000; ++i) recs.push_back(record_like(rng, 30 + rng() % 400));
  recs.insert(recs.begin() + 700, record_like(rng, bc::kBgzfBlockData));           // fills a block to the byte
  recs.insert(recs.begin() + 1500, record_like(rng, 3 * bc::kBgzfBlockData + 17));  // spans blocks
  recs.insert(recs.begin() + 1501, record_like(rng, bc::kBgzfBlockData - 5));
  const std::string want = htslib_file(dir / "h.gz", "", recs);
  const std::string eof = eof_block(dir / "e.gz");
  for (const int workers : {0, 3}) {
    evk::TaskPool pool(workers);
    bc::BgzfBlocks blocks(bc::bgzf_deflate_level(-1));
    std::string got;
    // batches of uneven sizes, the last block left open between them
    for (std::size_t at = 0, step = 1; at < recs.size(); at += step, step = step * 3 + 1) {
      std::string bytes;
      std::vector<std::uint32_t> sizes;
      for (std::size_t i = at; i < std::min(recs.size(), at + step); ++i) {
        bytes += recs[i];
        sizes.push_back(static_cast<std::uint32_t>(recs[i].size()));
      }
      blocks.add(bytes, sizes);
      blocks.compress(pool, got);
    }
    blocks.compress(pool, got, true);
    EXPECT_EQ(got.size() + eof.size(), want.size()) << workers << " workers";
    EXPECT_TRUE(got + eof == want) << workers << " workers";
  }
}
