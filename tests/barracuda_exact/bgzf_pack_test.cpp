// BgzfPack against htslib's own serial writer: the same records through bgzf_flush_try +
// bgzf_write (what bam_write1 does) give the same file bytes, whatever the batch boundaries,
// record sizes (records larger than a block included) and level.
#include <gtest/gtest.h>
#include <htslib/bgzf.h>
#include <htslib/hfile.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "io/bgzf_pack.hpp"
#include "evk_testing.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;

namespace {

struct Stream {
  std::string bytes;
  std::vector<std::uint32_t> sizes;
};

Stream random_records(std::mt19937_64& rng, std::size_t n, bool huge) {
  Stream s;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t size = 30 + static_cast<std::uint32_t>(rng() % 400);
    if (huge && i % 97 == 13) size = BGZF_BLOCK_SIZE - 5 + static_cast<std::uint32_t>(rng() % 3 * BGZF_BLOCK_SIZE);
    for (std::uint32_t k = 0; k < size; ++k) s.bytes += "ACGT#FF:,"[rng() % (k % 7 == 0 ? 9 : 4)];
    s.sizes.push_back(size);
  }
  return s;
}

std::string htslib_file(const fs::path& p, const Stream& s, int level) {
  const std::string mode = "w" + (level < 0 ? std::string() : std::to_string(level));
  BGZF* fp = bgzf_open(p.c_str(), mode.c_str());
  EXPECT_NE(fp, nullptr);
  const char* r = s.bytes.data();
  for (const std::uint32_t size : s.sizes) {
    EXPECT_EQ(bgzf_flush_try(fp, size), 0);
    EXPECT_EQ(bgzf_write(fp, r, size), static_cast<ssize_t>(size));
    r += size;
  }
  EXPECT_EQ(bgzf_close(fp), 0);
  return bct::read_file(p);
}

// The pack's blocks behind no header, then htslib's end-of-file block (bgzf_close of an empty stream).
std::string pack_file(const fs::path& p, const Stream& s, int level, const std::vector<std::size_t>& batch_sizes,
                      bc::TaskPool& pool) {
  bc::BgzfPack pack(level);
  std::string out;
  auto put = [&] {
    for (std::size_t i = 0; i < pack.blocks(); ++i) out.append(pack.block(i).data(), pack.block(i).size());
  };
  std::size_t rec = 0, off = 0, b = 0;
  while (rec < s.sizes.size()) {
    const std::size_t n = std::min(batch_sizes[b++ % batch_sizes.size()], s.sizes.size() - rec);
    // each batch in two runs (two formatting parts)
    const std::size_t half = n / 2;
    std::size_t half_bytes = 0;
    for (std::size_t i = rec; i < rec + half; ++i) half_bytes += s.sizes[i];
    const std::vector<bc::BgzfPack::Run> runs = {
        {s.bytes.data() + off, std::span<const std::uint32_t>(s.sizes).subspan(rec, half)},
        {s.bytes.data() + off + half_bytes, std::span<const std::uint32_t>(s.sizes).subspan(rec + half, n - half)}};
    pack.add(runs, pool);
    put();
    for (std::size_t i = rec; i < rec + n; ++i) off += s.sizes[i];
    rec += n;
  }
  pack.finish(pool);
  put();
  BGZF* fp = bgzf_open(p.c_str(), "w");  // the end-of-file block, as htslib writes it
  EXPECT_EQ(bgzf_close(fp), 0);
  return out + bct::read_file(p);
}

}  // namespace

TEST(BgzfPack, SameBytesAsHtslibsSerialWriter) {
  evk::testing::TempDir dir;
  std::mt19937_64 rng(11);
  bc::TaskPool pool(3);
  const std::vector<std::vector<std::size_t>> batchings = {{1}, {7, 1, 300}, {2000}, {100000}};
  int compared = 0;
  for (const bool huge : {false, true}) {
    const Stream s = random_records(rng, huge ? 1500 : 4000, huge);
    for (const int level : {-1, 0, 1, 6}) {
      const std::string want = htslib_file(dir / "h.gz", s, level);
      ASSERT_GT(want.size(), 1000u);
      for (const auto& batching : batchings) {
        if (batching[0] == 1 && level > 1) continue;  // one record per batch: slow at the high levels, covered at 0/-1
        EXPECT_TRUE(pack_file(dir / "e.gz", s, level, batching, pool) == want)
            << "level " << level << ", huge records " << huge << ", batches of " << batching[0];
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 30);
}

TEST(BgzfPack, EmptyStreamHasNoBlocks) {
  bc::TaskPool pool(0);
  bc::BgzfPack pack(-1);
  pack.add({}, pool);
  EXPECT_EQ(pack.blocks(), 0u);
  pack.finish(pool);
  EXPECT_EQ(pack.blocks(), 0u);
}
