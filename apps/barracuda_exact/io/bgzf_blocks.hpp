// BAM's BGZF blocks compressed on the task pool, byte for byte the blocks htslib's bgzf writes (the
// same cuts between records and libdeflate at the level htslib picks), so that the streaming
// writer (io/sam_writer.hpp) gives the bytes of the serial path (sam_write1) with every core
// compressing, not htslib's one writer thread feeding its pool record by record.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "evk/task_pool.hpp"

namespace evk::barracuda_exact {

constexpr std::size_t kBgzfBlockData = 0xff00;  // htslib's BGZF_BLOCK_SIZE: data bytes in a full block

// The libdeflate level htslib 1.16's bgzf uses for its level (-1: its default, 6; 1-9): its table
// (1 2 3 5 6 7 8 10 12), found by compressing a block both ways (bgzf_blocks_test.cpp checks it).
int bgzf_deflate_level(int htslib_level);

// One BGZF block of data (at most kBgzfBlockData bytes) appended to out: the gzip header with the
// BC field, raw deflate at `level` (libdeflate's), CRC-32 and size. Stored (level 0) when the
// compressed form would not fit a block.
void bgzf_block(const char* data, std::size_t n, int level, std::string& out);

// Records cut into blocks as htslib's bgzf_flush_try + bgzf_write cut them, compressed in parallel.
class BgzfBlocks {
 public:
  explicit BgzfBlocks(int level) : level_(level) {}
  // Adds records (their bytes back to back in `bytes`, each one's size in `sizes`) to the open block.
  void add(const std::string& bytes, std::span<const std::uint32_t> sizes);
  // Compresses the full blocks added so far on the pool into `out` (in order) and keeps the open one.
  // With last: the open block too (the end of the file).
  void compress(TaskPool& pool, std::string& out, bool last = false);

 private:
  int level_;
  std::string data_;               // the open block's bytes, then the full blocks' added since
  std::size_t start_ = 0;          // where the open block starts in data_
  std::vector<std::size_t> cuts_;  // ends of the full blocks in data_
  std::vector<std::string> parts_;
};

}  // namespace evk::barracuda_exact
