#include "core/match.hpp"

#include <algorithm>

#include "evk/parallel.hpp"

namespace evk::barracuda_exact {

void ReadCodes::add(const char* seq, std::size_t n) {
  offset.push_back(codes.size());
  len.push_back(static_cast<std::uint32_t>(n));
  for (std::size_t i = 0; i < n; ++i) codes.push_back(static_cast<std::uint8_t>(base_code(seq[i])));
}

KL match_exact(const BwtIndex& idx, const std::uint8_t* codes, std::uint32_t len) {
  std::uint64_t k = 0, l = idx.seq_len;
  for (std::uint32_t j = 0; j < len; ++j) {
    const int b = codes[j];
    if (b > 3) return KL{0, 0};
    const int c = 3 - b;  // the search runs over the reverse complement, from its last base
    const std::uint64_t ok = idx.occ_at(k - 1, c), ol = idx.occ_at(l, c);
    k = idx.L2[c] + ok + 1;
    l = idx.L2[c] + ol;
    if (k > l) break;
  }
  return KL{k, l};
}

std::vector<KL> match_cpu(const BwtIndex& idx, const ReadCodes& reads, int threads) {
  std::vector<KL> out(reads.size());
  parallel_for(
      reads.size(),
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) out[i] = match_exact(idx, reads.codes.data() + reads.offset[i], reads.len[i]);
      },
      threads);
  return out;
}

std::uint32_t packed_stride(std::uint32_t max_len) { return (std::max<std::uint32_t>(max_len, 1) + 7) / 8; }

void pack_reads_range(const ReadCodes& reads, std::uint32_t stride, std::size_t r0, std::size_t r1, std::uint32_t* words) {
  const std::size_t blocks_end = (r1 + 31) / 32;
  std::fill(words + (r0 / 32) * stride * 32, words + blocks_end * stride * 32, 0u);
  for (std::size_t r = r0; r < r1; ++r) {
    std::uint32_t* w = words + (r / 32) * stride * 32 + r % 32;
    const std::uint8_t* s = reads.codes.data() + reads.offset[r];
    for (std::uint32_t j = 0; j < reads.len[r]; ++j) w[(j / 8) * 32] |= static_cast<std::uint32_t>(s[j]) << ((j % 8) * 4);
  }
}

void pack_reads(const ReadCodes& reads, PackedReads& out) {
  const std::size_t n = reads.size();
  std::uint32_t max_len = 1;
  for (auto l : reads.len) max_len = std::max(max_len, l);
  out.stride = packed_stride(max_len);
  out.len = reads.len;
  out.index.resize(n);
  out.words.assign(((n + 31) / 32) * 32 * out.stride, 0u);
  for (std::size_t r = 0; r < n; ++r) out.index[r] = static_cast<std::uint32_t>((r / 32) * out.stride * 32 + r % 32);
  pack_reads_range(reads, out.stride, 0, n, out.words.data());
}

}  // namespace evk::barracuda_exact
