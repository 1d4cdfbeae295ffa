#include "core/index.hpp"

#include <bit>

namespace evk::barracuda_exact {

int base_code(char c) {
  switch (c) {
    case 'A': case 'a': return 0;
    case 'C': case 'c': return 1;
    case 'G': case 'g': return 2;
    case 'T': case 't': return 3;
    default: return 4;
  }
}

bool is_iupac(char c) {
  switch (c) {
    case 'A': case 'C': case 'G': case 'T': case 'U': case 'R': case 'Y': case 'S': case 'W': case 'K':
    case 'M': case 'B': case 'D': case 'H': case 'V': case 'N':
    case 'a': case 'c': case 'g': case 't': case 'u': case 'r': case 'y': case 's': case 'w': case 'k':
    case 'm': case 'b': case 'd': case 'h': case 'v': case 'n': case '-':
      return true;
    default:
      return false;
  }
}

std::uint64_t occ_words(std::uint64_t seq_len) {
  const std::uint64_t n_occ = (seq_len + kOccInterval - 1) / kOccInterval + 1;
  return (seq_len + 15) / 16 + n_occ * 8;
}

namespace {
// Occurrences of base c among the 16 2-bit fields of w.
inline int count_in_word(std::uint32_t w, int c) {
  const std::uint32_t x = w ^ (static_cast<std::uint32_t>(c) * 0x55555555u);
  return std::popcount(~(x | (x >> 1)) & 0x55555555u);
}
}  // namespace

std::uint64_t BwtIndex::occ_at(std::uint64_t k, int c) const {
  if (k == seq_len) return L2[c + 1] - L2[c];
  if (k == ~0ull) return 0;
  k -= (k >= primary);
  const std::uint32_t* p = occ.data() + (k >> 7 << 4);
  std::uint64_t n = static_cast<std::uint64_t>(p[2 * c]) | (static_cast<std::uint64_t>(p[2 * c + 1]) << 32);
  p += 8;
  const unsigned last = static_cast<unsigned>((k & 127) >> 4), r = static_cast<unsigned>(k & 15);
  for (unsigned w = 0; w < last; ++w) n += static_cast<std::uint64_t>(count_in_word(p[w], c));
  const std::uint32_t masked = p[last] & ~((1u << ((15 - r) << 1)) - 1u);
  n += static_cast<std::uint64_t>(count_in_word(masked, c));
  if (c == 0) n -= 15 - r;  // the masked-off fields read as A
  return n;
}

std::uint64_t BwtIndex::sa_at(std::uint64_t k) const {
  auto bwt_base = [&](std::uint64_t i) {
    return static_cast<int>(occ[(i >> 7 << 4) + 8 + ((i & 127) >> 4)] >> ((~i & 15) << 1) & 3);
  };
  std::uint64_t steps = 0;
  const std::uint64_t mask = sa_intv - 1;
  while (k & mask) {
    ++steps;
    if (k == primary) {
      k = 0;
    } else {
      const int c = k < primary ? bwt_base(k) : bwt_base(k - 1);
      k = L2[c] + occ_at(k, c);
    }
  }
  return steps + sa[k / sa_intv];  // sa[0] is (uint64)-1, as in bwa
}

}  // namespace evk::barracuda_exact
