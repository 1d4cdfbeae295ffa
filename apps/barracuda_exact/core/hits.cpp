#include "core/hits.hpp"

#include "evk/parallel.hpp"

namespace evk::barracuda_exact {

Place row_place(const BwtIndex& idx, std::uint64_t row, std::uint32_t len) { return text_place(idx, idx.sa_at(row), len); }

Place text_place(const BwtIndex& idx, std::uint64_t text_pos, std::uint32_t len) {
  const std::int64_t p = static_cast<std::int64_t>(text_pos);
  Place pl;
  if (p >= idx.l_pac) {  // the reverse-complement half: the read itself lies on the forward strand
    const std::int64_t f = (idx.l_pac << 1) - 1 - p;
    pl.pos = f + 1 < static_cast<std::int64_t>(len) ? 0 : f - static_cast<std::int64_t>(len) + 1;
    pl.reverse = false;
  } else {  // its reverse complement occurs on the forward strand: the read maps to the reverse strand
    pl.pos = p;
    pl.reverse = true;
  }
  pl.tid = contig_of(idx, pl.pos);
  return pl;
}

int contig_of(const BwtIndex& idx, std::int64_t pos) {
  if (pos >= idx.l_pac) return -1;
  int left = 0, mid = 0, right = static_cast<int>(idx.contigs.size());
  while (left < right) {
    mid = (left + right) >> 1;
    if (pos >= idx.contigs[mid].offset) {
      if (mid == static_cast<int>(idx.contigs.size()) - 1) break;
      if (pos < idx.contigs[mid + 1].offset) break;
      left = mid + 1;
    } else {
      right = mid;
    }
  }
  return mid;
}

int count_ambiguous(const BwtIndex& idx, std::int64_t pos, int len) {
  int left = 0, right = static_cast<int>(idx.holes.size()), nn = 0;
  while (left < right) {
    const int mid = (left + right) >> 1;
    const Hole& h = idx.holes[mid];
    if (pos >= h.offset + h.len) {
      left = mid + 1;
    } else if (pos + len <= h.offset) {
      right = mid;
    } else {
      if (pos >= h.offset)
        nn += h.offset + h.len < pos + len ? static_cast<int>(h.offset + h.len - pos) : len;
      else
        nn += h.offset + h.len < pos + len ? h.len : len - static_cast<int>(h.offset - pos);
      break;
    }
  }
  return nn;
}

Hit resolve_hit(const BwtIndex& idx, const KL& kl, std::uint32_t len, const std::uint64_t* sa_rows) {
  Hit h;
  if (!kl.hit()) return h;
  h.count = kl.count();
  const std::uint64_t given = !sa_rows ? 0 : h.count <= static_cast<std::uint64_t>(kSaRowsPerHit) ? h.count : 1;
  auto place_of_row = [&](const BwtIndex& x, std::uint64_t row, std::uint32_t n) {
    return row - kl.k < given ? text_place(x, sa_rows[row - kl.k], n) : text_place(x, x.sa_at(row), n);
  };
  auto bridges = [&](const Place& p) {
    const Contig& ct = idx.contigs[static_cast<std::size_t>(p.tid)];
    return p.pos + static_cast<std::int64_t>(len) - ct.offset > ct.len;
  };
  // the primary: row k, or for a repeat the first of its first 16 rows that lies within one contig
  std::uint64_t chosen = kl.k;
  h.primary = place_of_row(idx, kl.k, len);
  h.bridging = bridges(h.primary);
  for (std::uint64_t r = kl.k + 1; h.bridging && r <= kl.l && r < kl.k + 16; ++r) {
    const Place p = place_of_row(idx, r, len);
    if (!bridges(p)) {
      h.primary = p;
      h.bridging = false;
      chosen = r;
    }
  }
  h.n_ambiguous = count_ambiguous(idx, h.primary.pos, static_cast<int>(len));
  if (h.count > 1 && h.count <= static_cast<std::uint64_t>(kMaxXa + 1)) {
    for (std::uint64_t r = kl.k; r <= kl.l; ++r) {
      if (r == chosen) continue;
      Place p = place_of_row(idx, r, len);
      if (p.pos != h.primary.pos) h.alts.push_back(p);  // bwa compares positions only
    }
  }
  return h;
}

std::vector<Hit> resolve_hits(const BwtIndex& idx, const std::vector<KL>& kl, const std::vector<std::uint32_t>& len,
                              int threads) {
  std::vector<Hit> out(kl.size());
  parallel_for(
      kl.size(),
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) out[i] = resolve_hit(idx, kl[i], len[i]);
      },
      threads);
  return out;
}

}  // namespace evk::barracuda_exact
