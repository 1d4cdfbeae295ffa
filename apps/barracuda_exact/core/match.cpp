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

void pack_reads(const ReadCodes& reads, PackedReads& out) {
  const std::size_t n = reads.size();
  std::uint32_t max_len = 1;
  for (auto l : reads.len) max_len = std::max(max_len, l);
  out.stride = (max_len + 7) / 8;
  out.len = reads.len;
  out.index.resize(n);
  out.words.assign(((n + 31) / 32) * 32 * out.stride, 0u);
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint32_t base = static_cast<std::uint32_t>((r / 32) * out.stride * 32 + r % 32);
    out.index[r] = base;
    const std::uint8_t* s = reads.codes.data() + reads.offset[r];
    for (std::uint32_t j = 0; j < reads.len[r]; ++j)
      out.words[base + (j / 8) * 32] |= static_cast<std::uint32_t>(s[j]) << ((j % 8) * 4);
  }
}

}  // namespace evk::barracuda_exact
