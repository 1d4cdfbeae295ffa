// A BAM record stream cut into BGZF blocks and compressed in parallel on the map pool.
//
// Blocks follow htslib's serial rule (bam_write1 then bgzf_write): a record starts a new block
// unless it fits in the open one, a block closes as soon as it holds BGZF_BLOCK_SIZE bytes, and a
// record larger than a block spans several. Each block is compressed by htslib's own
// bgzf_compress at the file's level, so the bytes equal what sam_write1 record by record writes;
// the blocks of a batch are compressed at once on the pool instead of one by one behind a single
// writer. The open block at the end of a batch is kept (copied) and continued by the next batch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "io/task_pool.hpp"

namespace evk::barracuda_exact {

class BgzfPack {
 public:
  explicit BgzfPack(int level) : level_(level) {}  // htslib's levels: -1 its default, 0 stored, 1-9

  // One run of consecutive records: sizes[i] bytes each, back to back from `bytes`.
  struct Run {
    const char* bytes;
    std::span<const std::uint32_t> sizes;
  };
  // Appends the runs' records; the blocks they complete are compressed on the pool and are
  // block(0..blocks()) until the next call. Throws std::runtime_error when compression fails.
  void add(std::span<const Run> runs, TaskPool& pool);
  // Compresses the open block, if any, as the stream's last data block (block(0), blocks() 0 or 1).
  void finish(TaskPool& pool);
  std::size_t blocks() const { return used_; }
  std::span<const char> block(std::size_t i) const { return {out_[i].data(), out_size_[i]}; }

 private:
  struct Piece {
    const char* p;
    std::size_t n;
  };
  struct Block {
    std::vector<Piece> pieces;
    std::size_t len = 0;
  };
  Block& open_block();
  void close_block();
  void append(const char* p, std::size_t n);  // to the open block, closing it when full
  void compress(std::size_t n, TaskPool& pool);
  int level_;
  std::vector<Block> plan_;  // plan_[0..closed_): closed blocks; plan_[closed_]: the open one
  std::size_t closed_ = 0, used_ = 0;
  std::string carry_, next_carry_;  // the open block's bytes between batches
  std::vector<std::vector<char>> out_;
  std::vector<std::size_t> out_size_;
};

}  // namespace evk::barracuda_exact
