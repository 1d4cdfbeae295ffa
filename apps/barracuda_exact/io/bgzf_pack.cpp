#include "io/bgzf_pack.hpp"

#include <htslib/bgzf.h>

#include <algorithm>
#include <stdexcept>

namespace evk::barracuda_exact {

BgzfPack::Block& BgzfPack::open_block() {
  if (plan_.size() <= closed_) plan_.resize(closed_ + 1);
  return plan_[closed_];
}

void BgzfPack::close_block() {
  ++closed_;
  Block& b = open_block();
  b.pieces.clear();
  b.len = 0;
}

void BgzfPack::append(const char* p, std::size_t n) {
  while (n > 0) {
    Block& b = open_block();
    const std::size_t take = std::min<std::size_t>(n, BGZF_BLOCK_SIZE - b.len);
    b.pieces.push_back({p, take});
    b.len += take;
    p += take;
    n -= take;
    if (b.len == BGZF_BLOCK_SIZE) close_block();
  }
}

void BgzfPack::compress(std::size_t n, TaskPool& pool) {
  if (out_.size() < n) {
    out_.resize(n);
    out_size_.resize(n);
  }
  pool.parallel_for(n, 1, [&](std::size_t b0, std::size_t b1) {
    thread_local std::vector<char> gathered;
    for (std::size_t i = b0; i < b1; ++i) {
      const Block& b = plan_[i];
      const char* src = b.pieces.front().p;
      if (b.pieces.size() > 1) {
        gathered.resize(b.len);
        char* d = gathered.data();
        for (const Piece& pc : b.pieces) d = std::copy_n(pc.p, pc.n, d);
        src = gathered.data();
      }
      out_[i].resize(BGZF_MAX_BLOCK_SIZE);
      std::size_t len = BGZF_MAX_BLOCK_SIZE;
      if (bgzf_compress(out_[i].data(), &len, src, b.len, level_) != 0)
        throw std::runtime_error("BGZF compression of a block failed");
      out_size_[i] = len;
    }
  });
  used_ = n;
}

void BgzfPack::add(std::span<const Run> runs, TaskPool& pool) {
  closed_ = 0;
  Block& first = open_block();  // starts with the bytes left open by the last batch
  first.pieces.clear();
  first.len = 0;
  if (!carry_.empty()) {
    first.pieces.push_back({carry_.data(), carry_.size()});
    first.len = carry_.size();
  }
  for (const Run& r : runs) {
    const char* p = r.bytes;
    for (const std::uint32_t size : r.sizes) {
      if (open_block().len > 0 && open_block().len + size > BGZF_BLOCK_SIZE) close_block();  // bgzf_flush_try
      append(p, size);
      p += size;
    }
  }
  compress(closed_, pool);
  next_carry_.clear();  // the open block may still hold carry_'s bytes: copy, then swap
  for (const Piece& pc : open_block().pieces) next_carry_.append(pc.p, pc.n);
  carry_.swap(next_carry_);
}

void BgzfPack::finish(TaskPool& pool) {
  closed_ = 0;
  Block& b = open_block();
  b.pieces.clear();
  b.len = carry_.size();
  if (carry_.empty()) {
    used_ = 0;
    return;
  }
  b.pieces.push_back({carry_.data(), carry_.size()});
  compress(1, pool);
  carry_.clear();
}

}  // namespace evk::barracuda_exact
