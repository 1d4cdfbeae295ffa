#include "core/damage.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

namespace evk::barracuda_exact {

const std::array<const char*, 21> kDamageMutations = {"G>A", "C>T", "A>G", "T>C", "A>C", "A>T", "C>G",
                                                       "C>A", "T>G", "T>A", "G>C", "G>T", "A>-", "T>-",
                                                       "C>-", "G>-", "->A", "->T", "->C", "->G", "S"};

namespace {

constexpr std::uint16_t kLeftOut = 0x4 | 0x100 | 0x200 | 0x400 | 0x800;

// A C G T (either case) 0-3, the gap 4, anything else 5 (mapDamage uppercases; skips the rest).
constexpr std::array<std::uint8_t, 256> kCode = [] {
  std::array<std::uint8_t, 256> t{};
  for (auto& v : t) v = 5;
  t['A'] = t['a'] = 0;
  t['C'] = t['c'] = 1;
  t['G'] = t['g'] = 2;
  t['T'] = t['t'] = 3;
  t['-'] = 4;
  return t;
}();

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
  if (opt_.around < 0) throw std::invalid_argument("damage: around must be at least 0");
  blocks_.resize(contigs_.size());
}

bool DamageProfile::wants(const DamageRead& r) const { return !(r.flag & kLeftOut) && r.mapq >= opt_.min_mapq; }

DamageProfile::Block& DamageProfile::block(int c) {
  Block& b = blocks_[static_cast<std::size_t>(c)];
  if (b.counts.empty()) {
    b.counts.assign(4 * static_cast<std::size_t>(opt_.length) * kDamageColumns, 0);
    b.comp.assign(4 * static_cast<std::size_t>(opt_.around + opt_.length) * 4, 0);
    touched_.push_back(c);
  }
  return b;
}

std::size_t DamageProfile::comp_at(int e, int s, int pos, int b) const {
  int slot = -1;  // 5': -around..-1 then 1..length; 3': -length..-1 then 1..around
  if (e == 0) slot = pos < 0 ? (pos >= -opt_.around ? pos + opt_.around : -1) : (pos >= 1 && pos <= opt_.length ? opt_.around + pos - 1 : -1);
  else slot = pos < 0 ? (pos >= -opt_.length ? pos + opt_.length : -1) : (pos >= 1 && pos <= opt_.around ? opt_.length + pos - 1 : -1);
  if (slot < 0) return static_cast<std::size_t>(-1);
  return (static_cast<std::size_t>(e * 2 + s) * static_cast<std::size_t>(opt_.around + opt_.length) + static_cast<std::size_t>(slot)) * 4 +
         static_cast<std::size_t>(b);
}

std::uint64_t DamageProfile::composition(int c, int e, int s, int pos, int b) const {
  const std::vector<std::uint64_t>& v = blocks_[static_cast<std::size_t>(c)].comp;
  const std::size_t i = comp_at(e, s, pos, b);
  return v.empty() || i == static_cast<std::size_t>(-1) ? 0 : v[i];
}

void DamageProfile::count_end(int c, int e, int s, const std::uint8_t* q, const std::uint8_t* r, std::size_t len,
                              bool backwards) {
  static const auto table = [] {  // [ref code][read code] -> column (codes 0-4)
    std::array<std::array<int, 5>, 5> t{};
    for (int x = 0; x < 5; ++x)
      for (int y = 0; y < 5; ++y) t[static_cast<std::size_t>(x)][static_cast<std::size_t>(y)] = x == y ? -1 : mutation_column(x, y);
    return t;
  }();
  const std::size_t n = std::min<std::size_t>(len, static_cast<std::size_t>(opt_.length));
  std::uint64_t* row = block(c).counts.data() + count_at(e, s, 0, 0);  // position i's columns: row[i * kDamageColumns + k]
  for (std::size_t i = 0; i < n; ++i, row += kDamageColumns) {
    const std::size_t j = backwards ? len - 1 - i : i;
    const std::uint8_t y = q[j], x = r[j];
    if (y > 4 || x > 4) continue;
    if (x < 4) ++row[x];
    if (x != y) {
      const int k = table[x][y];
      if (k >= 0) ++row[k];
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
  if (!wants(rd)) return false;
  const std::int64_t n = static_cast<std::int64_t>(ref.size());
  const std::int64_t from = std::clamp<std::int64_t>(rd.pos - opt_.around, 0, n);
  const std::int64_t to = std::clamp<std::int64_t>(rd.pos + reference_span(rd) + opt_.around, from, n);
  return add_window(rd, ref.substr(static_cast<std::size_t>(from), static_cast<std::size_t>(to - from)), from);
}

void DamageProfile::clear() {
  for (const int c : touched_) blocks_[static_cast<std::size_t>(c)] = Block{};  // released, not kept zeroed
  touched_.clear();
  for (auto& l : lengths_) l.clear();
  reads_ = 0;
}

bool DamageProfile::add_window(const DamageRead& rd, std::string_view win, std::int64_t win_start) {
  if (!wants(rd)) return false;
  if (rd.contig < 0 || static_cast<std::size_t>(rd.contig) >= contigs_.size()) throw std::out_of_range("damage: contig index");
  const bool rev = (rd.flag & 0x10) != 0;
  const int s = rev ? 1 : 0;
  // the alignment as letter codes (A C G T 0-3, gap 4, anything else 5): read and reference with
  // gaps over the aligned part (soft clips left out); buffers reused, no allocation per read
  thread_local std::vector<std::uint8_t> tq, tr;
  std::vector<std::uint8_t>& q = tq;
  std::vector<std::uint8_t>& r = tr;
  std::size_t n = 0;
  for (const auto& [op, len] : rd.cigar)
    if (op == 'M' || op == '=' || op == 'X' || op == 'I' || op == 'D') n += static_cast<std::size_t>(len);
  if (q.size() < n) {
    q.resize(n);
    r.resize(n);
  }
  auto ref_code = [&](std::int64_t p) {  // the window starts at win_start
    const std::int64_t j = p - win_start;
    return j >= 0 && j < static_cast<std::int64_t>(win.size()) ? kCode[static_cast<unsigned char>(win[static_cast<std::size_t>(j)])]
                                                                : std::uint8_t{5};
  };
  auto read_code = [&](std::size_t i) { return i < rd.seq.size() ? kCode[static_cast<unsigned char>(rd.seq[i])] : std::uint8_t{5}; };
  std::int64_t rp = rd.pos;
  std::size_t qp = 0, k = 0;
  int clip_left = 0, clip_right = 0;
  bool seen_aligned = false;
  for (const auto& [op, len] : rd.cigar) {
    if (op == 'M' || op == '=' || op == 'X') {
      for (int i = 0; i < len; ++i, ++k) {
        q[k] = read_code(qp++);
        r[k] = ref_code(rp++);
      }
    } else if (op == 'I') {
      for (int i = 0; i < len; ++i, ++k) {
        q[k] = read_code(qp++);
        r[k] = 4;
      }
    } else if (op == 'D') {
      for (int i = 0; i < len; ++i, ++k) {
        q[k] = 4;
        r[k] = ref_code(rp++);
      }
    } else if (op == 'N') {
      rp += len;
    } else if (op == 'S') {
      (seen_aligned ? clip_right : clip_left) += len;
      qp += static_cast<std::size_t>(len);
    }
    if (op == 'M' || op == '=' || op == 'X' || op == 'I' || op == 'D') seen_aligned = true;
  }
  ++reads_;
  if (!(rd.flag & 0x1)) ++lengths_[static_cast<std::size_t>(s)][rp - rd.pos];
  if (rev) {  // the read's own orientation: reverse complement both
    static constexpr std::uint8_t kComp[6] = {3, 2, 1, 0, 4, 5};
    std::reverse(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(n));
    std::reverse(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(n));
    for (std::size_t i = 0; i < n; ++i) {
      q[i] = kComp[q[i]];
      r[i] = kComp[r[i]];
    }
  }
  // soft clips at the read's own 5' and 3' ends
  const int clip5 = rev ? clip_right : clip_left, clip3 = rev ? clip_left : clip_right;
  std::uint64_t* counts = block(rd.contig).counts.data();
  for (int i = 0; i < std::min(clip5, opt_.length); ++i) ++counts[count_at(0, s, i, kDamageColumns - 1)];
  for (int i = 0; i < std::min(clip3, opt_.length); ++i) ++counts[count_at(1, s, i, kDamageColumns - 1)];
  count_end(rd.contig, 0, s, q.data(), r.data(), n, false);
  count_end(rd.contig, 1, s, q.data(), r.data(), n, true);
  count_composition(rd, s, q.data(), n, win, win_start, rp);
  return true;
}

// dnacomp.txt: the read's bases (its aligned part, gaps left out) from each end, and the reference
// `around` bases before and after it, all in the read's orientation.
void DamageProfile::count_composition(const DamageRead& rd, int s, const std::uint8_t* q, std::size_t n, std::string_view win,
                                      std::int64_t win_start, std::int64_t end) {
  static constexpr std::uint8_t kComp[6] = {3, 2, 1, 0, 4, 5};
  const int c = rd.contig, L = opt_.length, A = opt_.around;
  std::vector<std::uint64_t>& comp = block(c).comp;
  int i = 0;  // the read from its 5' end, then from its 3' end
  for (std::size_t j = 0; j < n && i < L; ++j)
    if (q[j] < 4) ++comp[comp_at(0, s, ++i, q[j])];
    else if (q[j] == 5) ++i;  // an N still takes its place
  i = 0;
  for (std::size_t j = n; j-- > 0 && i < L;)
    if (q[j] < 4) ++comp[comp_at(1, s, -(++i), q[j])];
    else if (q[j] == 5) ++i;
  auto ref_code = [&](std::int64_t p) {
    const std::int64_t j = p - win_start;
    return j >= 0 && j < static_cast<std::int64_t>(win.size()) ? kCode[static_cast<unsigned char>(win[static_cast<std::size_t>(j)])]
                                                                : std::uint8_t{5};
  };
  const std::int64_t lo = std::max<std::int64_t>(rd.pos - A, win_start), hi = std::min<std::int64_t>(end + A, win_start + static_cast<std::int64_t>(win.size()));
  const bool rev = s == 1;
  for (std::int64_t p = lo; p < rd.pos; ++p) {  // the reference before the read's leftmost base
    const std::uint8_t b = ref_code(p);
    if (b > 3) continue;
    if (!rev) ++comp[comp_at(0, s, static_cast<int>(p - rd.pos), b)];       // -1 next to the read
    else ++comp[comp_at(1, s, static_cast<int>(rd.pos - p), kComp[b])];    // after the read's 3' end
  }
  for (std::int64_t p = end; p < hi; ++p) {  // the reference after its rightmost base
    const std::uint8_t b = ref_code(p);
    if (b > 3) continue;
    if (!rev) ++comp[comp_at(1, s, static_cast<int>(p - end + 1), b)];
    else ++comp[comp_at(0, s, static_cast<int>(end - 1 - p), kComp[b])];
  }
}

void DamageProfile::merge(const DamageProfile& o) {
  if (o.contigs_ != contigs_ || o.opt_.length != opt_.length || o.opt_.around != opt_.around) throw std::invalid_argument("damage: merging unlike profiles");
  for (const int c : o.touched_) {
    const Block& from = o.blocks_[static_cast<std::size_t>(c)];
    Block& to = block(c);
    for (std::size_t i = 0; i < from.counts.size(); ++i) to.counts[i] += from.counts[i];
    for (std::size_t i = 0; i < from.comp.size(); ++i) to.comp[i] += from.comp[i];
  }
  for (int s = 0; s < 2; ++s)
    for (const auto& [len, n] : o.lengths_[static_cast<std::size_t>(s)]) lengths_[static_cast<std::size_t>(s)][len] += n;
  reads_ += o.reads_;
}

}  // namespace evk::barracuda_exact
