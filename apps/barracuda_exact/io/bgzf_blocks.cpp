#include "io/bgzf_blocks.hpp"

#include <libdeflate.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace evk::barracuda_exact {
namespace {

constexpr std::size_t kHeader = 18, kFooter = 8, kMaxBlock = 0x10000;

struct CompressorFree {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

// This thread's compressor for a level (one per level asked on the thread).
libdeflate_compressor* compressor(int level) {
  thread_local std::unique_ptr<libdeflate_compressor, CompressorFree> c[13];
  if (level < 0 || level > 12) throw std::invalid_argument("bgzf_block: libdeflate level outside 0-12");
  if (!c[level]) c[level].reset(libdeflate_alloc_compressor(level));
  if (!c[level]) throw std::bad_alloc();
  return c[level].get();
}

void put16(char* p, std::uint32_t v) {
  p[0] = static_cast<char>(v & 0xff);
  p[1] = static_cast<char>(v >> 8 & 0xff);
}
void put32(char* p, std::uint32_t v) {
  put16(p, v & 0xffff);
  put16(p + 2, v >> 16);
}

}  // namespace

int bgzf_deflate_level(int htslib_level) {
  static const int table[10] = {0, 1, 2, 3, 5, 6, 7, 8, 10, 12};
  if (htslib_level < 0) htslib_level = 6;
  if (htslib_level > 9) htslib_level = 9;
  return table[htslib_level];
}

void bgzf_block(const char* data, std::size_t n, int level, std::string& out) {
  if (n > kBgzfBlockData) throw std::invalid_argument("bgzf_block: more than a block's data");
  const std::size_t at = out.size();
  out.resize(at + kMaxBlock);
  char* b = out.data() + at;
  static const unsigned char head[16] = {31, 139, 8, 4, 0, 0, 0, 0, 0, 255, 6, 0, 66, 67, 2, 0};
  std::memcpy(b, head, sizeof head);
  std::size_t c = libdeflate_deflate_compress(compressor(level), data, n, b + kHeader, kMaxBlock - kHeader - kFooter);
  if (c == 0) c = libdeflate_deflate_compress(compressor(0), data, n, b + kHeader, kMaxBlock - kHeader - kFooter);
  if (c == 0) throw std::runtime_error("bgzf_block: a block does not fit even stored");
  const std::size_t total = kHeader + c + kFooter;
  put16(b + 16, static_cast<std::uint32_t>(total - 1));
  put32(b + kHeader + c, libdeflate_crc32(0, data, n));
  put32(b + kHeader + c + 4, static_cast<std::uint32_t>(n));
  out.resize(at + total);
}

void BgzfBlocks::add(const std::string& bytes, std::span<const std::uint32_t> sizes) {
  const char* rec = bytes.data();
  for (const std::uint32_t s : sizes) {
    // bgzf_flush_try: a record that does not fit the open block ends it (an empty one stays open)
    if (data_.size() - start_ + s > kBgzfBlockData && data_.size() > start_) {
      start_ = data_.size();
      cuts_.push_back(start_);
    }
    data_.append(rec, s);
    rec += s;
    while (data_.size() - start_ >= kBgzfBlockData) {  // bgzf_write: a block full to the byte is written
      start_ += kBgzfBlockData;
      cuts_.push_back(start_);
    }
  }
}

void BgzfBlocks::compress(TaskPool& pool, std::string& out, bool last) {
  if (last && data_.size() > start_) {
    start_ = data_.size();
    cuts_.push_back(start_);
  }
  const std::size_t n = cuts_.size();
  if (parts_.size() < n) parts_.resize(n);
  pool.parallel_for(n, 4, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      const std::size_t from = i == 0 ? 0 : cuts_[i - 1];
      parts_[i].clear();
      bgzf_block(data_.data() + from, cuts_[i] - from, level_, parts_[i]);
    }
  });
  for (std::size_t i = 0; i < n; ++i) out += parts_[i];
  data_.erase(0, start_);  // the open block moves to the front
  start_ = 0;
  cuts_.clear();
}

}  // namespace evk::barracuda_exact
