#include "seq_ops.hpp"

#include <algorithm>

namespace evk::sim {

namespace {

// A C G T -> 0 1 2 3 (either case), else 4
int base_code(char c) {
  switch (c | 0x20) {
    case 'a': return 0;
    case 'c': return 1;
    case 'g': return 2;
    case 't': return 3;
    default: return 4;
  }
}

char with_case(char base, char like) { return static_cast<char>(base | (like & 0x20)); }

// Another base than c: its transition partner twice as often as each transversion.
char substitute(char c, SimRng& rng) {
  static const char kTransition[4] = {'G', 'T', 'A', 'C'};
  static const char kTransversion[4][2] = {{'C', 'T'}, {'A', 'G'}, {'C', 'T'}, {'A', 'G'}};
  const int b = base_code(c);
  if (b == 4) return c;
  const std::uint64_t r = rng.below(4);
  return with_case(r < 2 ? kTransition[b] : kTransversion[b][r - 2], c);
}

}  // namespace

char seq_complement(char c) {
  switch (c) {
    case 'A': return 'T';
    case 'C': return 'G';
    case 'G': return 'C';
    case 'T': return 'A';
    case 'a': return 't';
    case 'c': return 'g';
    case 'g': return 'c';
    case 't': return 'a';
    default: return c;
  }
}

void seq_revcomp(char* s, std::size_t n) {
  std::reverse(s, s + n);
  for (std::size_t i = 0; i < n; ++i) s[i] = seq_complement(s[i]);
}

void seq_revcomp(std::string& s) { seq_revcomp(s.data(), s.size()); }

void seq_random(std::string& out, std::size_t n, const double comp[4], SimRng& rng) {
  const double c1 = comp[0], c2 = c1 + comp[1], c3 = c2 + comp[2];
  for (std::size_t i = 0; i < n; ++i) {
    const double u = rng.uniform() * (c3 + comp[3]);
    out += u < c1 ? 'A' : u < c2 ? 'C' : u < c3 ? 'G' : 'T';
  }
}

void seq_background(std::string& out, std::size_t n, double gc, SimRng& rng) {
  const std::uint64_t thr = static_cast<std::uint64_t>(gc * 32768.0);
  const std::size_t at = out.size();
  out.resize(at + n);
  char* p = out.data() + at;
  static const char kPair[2][2] = {{'A', 'T'}, {'C', 'G'}};
  std::size_t i = 0;
  while (i < n) {
    std::uint64_t r = rng.next();
    for (int k = 0; k < 4 && i < n; ++k, r >>= 16) p[i++] = kPair[(r & 0x7FFF) < thr][(r >> 15) & 1];
  }
}

void seq_cpg_decay(char* s, std::size_t n, double p, SimRng& rng) {
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if ((s[i] | 0x20) != 'c' || (s[i + 1] | 0x20) != 'g' || rng.uniform() >= p) continue;
    if (rng.next() & 1) s[i] = with_case('T', s[i]);
    else s[i + 1] = with_case('A', s[i + 1]);
  }
}

void seq_substitute(std::string& s, double div, SimRng& rng) {
  if (div <= 0) return;
  for (std::size_t i = rng.geometric(div); i < s.size(); i += 1 + rng.geometric(div)) s[i] = substitute(s[i], rng);
}

void seq_mutate(std::string& s, double div, SimRng& rng) {
  if (div <= 0 || s.empty()) return;
  std::string out;
  out.reserve(s.size() + s.size() / 16 + 8);
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t skip = rng.geometric(div);
    if (skip >= s.size() - i) {
      out.append(s, i, std::string::npos);
      break;
    }
    out.append(s, i, skip);
    i += skip;
    const double u = rng.uniform();
    const std::size_t k = 1 + rng.below(4);
    if (u < 0.90) {
      out += substitute(s[i++], rng);
    } else if (u < 0.95) {
      i = std::min(s.size(), i + k);  // deletion
    } else {
      out += s[i++];
      for (std::size_t j = 0; j < k; ++j) out += with_case("ACGT"[rng.below(4)], s[i - 1]);
    }
  }
  s.swap(out);
}

void seq_tandem(std::string& out, const std::string& unit, std::size_t len, double copy_div, SimRng& rng) {
  if (unit.empty()) return;
  const std::size_t end = out.size() + len;
  std::string copy;
  while (out.size() < end) {
    copy = unit;
    seq_mutate(copy, copy_div, rng);
    out.append(copy, 0, std::min(copy.size(), end - out.size()));
  }
}

}  // namespace evk::sim
