#include "core/damage.hpp"

#include <algorithm>
#include <stdexcept>

namespace evk::barracuda_exact {

const std::array<const char*, 21> kDamageMutations = {"G>A", "C>T", "A>G", "T>C", "A>C", "A>T", "C>G",
                                                       "C>A", "T>G", "T>A", "G>C", "G>T", "A>-", "T>-",
                                                       "C>-", "G>-", "->A", "->T", "->C", "->G", "S"};

namespace {

constexpr std::uint16_t kLeftOut = 0x4 | 0x100 | 0x200 | 0x400 | 0x800;

int letter(char c) {  // A C G T -> 0..3, '-' -> 4, else -1
  switch (c) {
    case 'A': return 0;
    case 'C': return 1;
    case 'G': return 2;
    case 'T': return 3;
    case '-': return 4;
    default: return -1;
  }
}

char upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }

char complement(char c) {
  switch (c) {
    case 'A': return 'T';
    case 'C': return 'G';
    case 'G': return 'C';
    case 'T': return 'A';
    default: return c;  // '-' and others: as they are (mapDamage complements IUPAC codes, which are skipped anyway)
  }
}

// The column of the substitution ref>read (r, q: letter codes, not equal), or -1.
int mutation_column(int r, int q) {
  static const char kL[] = "ACGT-";
  const std::string m = std::string(1, kL[r]) + ">" + std::string(1, kL[q]);
  for (std::size_t k = 0; k < kDamageMutations.size(); ++k)
    if (m == kDamageMutations[k]) return 4 + static_cast<int>(k);
  return -1;
}

}  // namespace

DamageProfile::DamageProfile(std::vector<std::string> contigs, DamageOptions opt)
    : contigs_(std::move(contigs)), opt_(opt) {
  if (opt_.length < 1) throw std::invalid_argument("damage: length must be at least 1");
  counts_.assign(contigs_.size() * 4 * static_cast<std::size_t>(opt_.length) * kDamageColumns, 0);
}

void DamageProfile::count_end(int c, int e, int s, std::string_view read, std::string_view ref, bool backwards) {
  static const auto table = [] {  // [ref letter][read letter] -> column
    std::array<std::array<int, 5>, 5> t{};
    for (int r = 0; r < 5; ++r)
      for (int q = 0; q < 5; ++q) t[r][q] = r == q ? -1 : mutation_column(r, q);
    return t;
  }();
  const std::size_t n = std::min<std::size_t>(read.size(), static_cast<std::size_t>(opt_.length));
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = backwards ? read.size() - 1 - i : i;
    const int q = letter(read[j]), r = letter(ref[j]);
    if (q < 0 || r < 0) continue;
    if (r < 4) ++at(c, e, s, static_cast<int>(i), r);
    if (r != q) {
      const int k = table[static_cast<std::size_t>(r)][static_cast<std::size_t>(q)];
      if (k >= 0) ++at(c, e, s, static_cast<int>(i), k);
    }
  }
}

std::int64_t reference_span(const DamageRead& r) {
  std::int64_t n = 0;
  for (const auto& [op, len] : r.cigar)
    if (op == 'M' || op == 'D' || op == 'N' || op == '=' || op == 'X') n += len;
  return n;
}

bool DamageProfile::add(const DamageRead& rd, std::string_view ref) {
  if ((rd.flag & kLeftOut) || rd.mapq < opt_.min_mapq) return false;
  const std::size_t from = static_cast<std::size_t>(std::clamp<std::int64_t>(rd.pos, 0, static_cast<std::int64_t>(ref.size())));
  return add_span(rd, ref.substr(from, static_cast<std::size_t>(std::max<std::int64_t>(reference_span(rd), 0))));
}

void DamageProfile::clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  for (auto& l : lengths_) l.clear();
  reads_ = 0;
}

bool DamageProfile::add_span(const DamageRead& rd, std::string_view span) {
  if ((rd.flag & kLeftOut) || rd.mapq < opt_.min_mapq) return false;
  if (rd.contig < 0 || static_cast<std::size_t>(rd.contig) >= contigs_.size()) throw std::out_of_range("damage: contig index");
  const bool rev = (rd.flag & 0x10) != 0;
  const int s = rev ? 1 : 0;
  // the alignment: read and reference with gaps, over the aligned part (soft clips left out)
  thread_local std::string a_read, a_ref;  // reused: no allocation per read
  a_read.clear();
  a_ref.clear();
  std::int64_t rp = rd.pos;
  auto ref_at = [&](std::int64_t p) {  // the span starts at rd.pos
    const std::int64_t j = p - rd.pos;
    return j >= 0 && j < static_cast<std::int64_t>(span.size()) ? upper(span[static_cast<std::size_t>(j)]) : 'N';
  };
  std::size_t qp = 0;
  int clip_left = 0, clip_right = 0;
  bool seen_aligned = false;
  for (const auto& [op, len] : rd.cigar) {
    switch (op) {
      case 'M': case '=': case 'X':
        for (int i = 0; i < len; ++i, ++rp, ++qp) {
          a_read += upper(qp < rd.seq.size() ? rd.seq[qp] : 'N');
          a_ref += ref_at(rp);
        }
        seen_aligned = true;
        break;
      case 'I':
        for (int i = 0; i < len; ++i, ++qp) {
          a_read += upper(qp < rd.seq.size() ? rd.seq[qp] : 'N');
          a_ref += '-';
        }
        seen_aligned = true;
        break;
      case 'D':
        for (int i = 0; i < len; ++i, ++rp) {
          a_read += '-';
          a_ref += ref_at(rp);
        }
        seen_aligned = true;
        break;
      case 'N':
        rp += len;
        break;
      case 'S':
        (seen_aligned ? clip_right : clip_left) += len;
        qp += static_cast<std::size_t>(len);
        break;
      default:  // H, P
        break;
    }
  }
  ++reads_;
  if (!(rd.flag & 0x1)) ++lengths_[static_cast<std::size_t>(s)][rp - rd.pos];
  if (rev) {
    std::reverse(a_read.begin(), a_read.end());
    std::reverse(a_ref.begin(), a_ref.end());
    for (char& ch : a_read) ch = complement(ch);
    for (char& ch : a_ref) ch = complement(ch);
  }
  // soft clips at the read's own 5' and 3' ends
  const int clip5 = rev ? clip_right : clip_left, clip3 = rev ? clip_left : clip_right;
  for (int i = 0; i < std::min(clip5, opt_.length); ++i) ++at(rd.contig, 0, s, i, kDamageColumns - 1);
  for (int i = 0; i < std::min(clip3, opt_.length); ++i) ++at(rd.contig, 1, s, i, kDamageColumns - 1);
  count_end(rd.contig, 0, s, a_read, a_ref, false);
  count_end(rd.contig, 1, s, a_read, a_ref, true);
  return true;
}

void DamageProfile::merge(const DamageProfile& o) {
  if (o.contigs_ != contigs_ || o.opt_.length != opt_.length) throw std::invalid_argument("damage: merging unlike profiles");
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
  for (int s = 0; s < 2; ++s)
    for (const auto& [len, n] : o.lengths_[static_cast<std::size_t>(s)]) lengths_[static_cast<std::size_t>(s)][len] += n;
  reads_ += o.reads_;
}

}  // namespace evk::barracuda_exact
