// Builds bwa 0.7's index in memory: the same steps as `bwa index` (pack the FASTA with ambiguous
// bases replaced by drand48-style random bases seeded 11, BWT of forward + reverse complement,
// occurrence records every 128 positions, SA sampled every 32 rows), with the suffix array from
// libdivsufsort instead of bwa's own sorters (a suffix array is unique, so the bytes are the same).
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/index.hpp"
#include "core/rand48.hpp"
#include "evk/error.hpp"

extern "C" {
int divsufsort(const unsigned char* T, int* SA, int n);
int divsufsort64(const unsigned char* T, std::int64_t* SA, std::int64_t n);
}

namespace evk::barracuda_exact {
namespace {

// Packs the reference (forward strand) into 2-bit codes, recording contigs and holes as bwa does.
std::vector<std::uint8_t> pack_reference(const std::vector<RefSeq>& ref, BwtIndex& idx) {
  std::size_t total = 0;
  for (const auto& r : ref) total += r.seq.size();
  std::vector<std::uint8_t> codes(total);
  Rand48 rng(idx.seed);
  std::int64_t pos = 0;
  for (const auto& r : ref) {
    Contig ct;
    ct.name = r.name;
    ct.anno = r.comment.empty() ? "(null)" : r.comment;
    ct.offset = pos;
    ct.len = static_cast<std::int32_t>(r.seq.size());
    char last = 0;
    for (char ch : r.seq) {
      int c = base_code(ch);
      if (c >= 4) {
        if (last == ch) {
          ++idx.holes.back().len;
        } else {
          idx.holes.push_back(Hole{pos, 1, ch});
          ++ct.n_ambs;
        }
        c = static_cast<int>(rng.lrand() & 3);
      }
      last = ch;
      codes[static_cast<std::size_t>(pos++)] = static_cast<std::uint8_t>(c);
    }
    idx.contigs.push_back(ct);
  }
  idx.l_pac = pos;
  idx.pac.assign(static_cast<std::size_t>((pos + 3) / 4), 0);
  for (std::int64_t i = 0; i < pos; ++i)
    idx.pac[static_cast<std::size_t>(i >> 2)] |= static_cast<std::uint8_t>(codes[static_cast<std::size_t>(i)] << ((~i & 3) << 1));
  return codes;
}

template <class Idx>
void bwt_from_sa(const std::vector<std::uint8_t>& text, const std::vector<Idx>& sa, BwtIndex& idx) {
  const std::uint64_t n = text.size();
  idx.seq_len = n;
  for (int c = 0; c < 5; ++c) idx.L2[c] = 0;
  for (auto t : text) ++idx.L2[t + 1];
  for (int c = 2; c <= 4; ++c) idx.L2[c] += idx.L2[c - 1];
  idx.occ.assign(occ_words(n), 0);
  idx.sa_intv = kSaInterval;
  idx.sa.assign(static_cast<std::size_t>((n + kSaInterval) / kSaInterval), 0);
  idx.sa[0] = ~0ull;
  std::uint64_t cnt[4] = {0, 0, 0, 0};
  std::uint64_t bpos = 0;  // position in the BWT without '$'
  std::uint32_t* rec = idx.occ.data();
  auto put = [&](std::uint8_t c) {
    if (bpos % kOccInterval == 0) {
      rec = idx.occ.data() + (bpos / kOccInterval) * kBlockWords;
      std::memcpy(rec, cnt, sizeof cnt);
    }
    rec[8 + (bpos & 127) / 16] |= static_cast<std::uint32_t>(c) << ((15 - (bpos & 15)) << 1);
    ++cnt[c];
    ++bpos;
  };
  // row 0 is the suffix "$": its BWT character is the last text base.
  put(text[n - 1]);
  for (std::uint64_t row = 1; row <= n; ++row) {
    const std::uint64_t s = static_cast<std::uint64_t>(sa[row - 1]);
    if (row % kSaInterval == 0) idx.sa[row / kSaInterval] = s;
    if (s == 0) {
      idx.primary = row;
    } else {
      put(text[s - 1]);
    }
  }
  // the final record: totals, right after the last (possibly partial) block's base words
  std::memcpy(idx.occ.data() + idx.occ.size() - 8, cnt, sizeof cnt);
}

}  // namespace

BwtIndex build_index(const std::vector<RefSeq>& ref) {
  BwtIndex idx;
  std::vector<std::uint8_t> text = pack_reference(ref, idx);
  if (idx.l_pac == 0) throw InputError("reference has no bases");
  const std::size_t l = text.size();
  text.resize(2 * l);
  for (std::size_t i = 0; i < l; ++i) text[l + i] = static_cast<std::uint8_t>(3 - text[l - 1 - i]);
  const std::uint64_t n = text.size();
  if (n < static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
    std::vector<int> sa(n);
    if (divsufsort(text.data(), sa.data(), static_cast<int>(n)) != 0) throw std::runtime_error("divsufsort failed");
    bwt_from_sa(text, sa, idx);
  } else {
    std::vector<std::int64_t> sa(n);
    if (divsufsort64(text.data(), sa.data(), static_cast<std::int64_t>(n)) != 0)
      throw std::runtime_error("divsufsort64 failed");
    bwt_from_sa(text, sa, idx);
  }
  return idx;
}

}  // namespace evk::barracuda_exact
