#include "core/sai_samse.hpp"

#include "evk/error.hpp"

namespace evk::barracuda_exact {

std::vector<SaiAln> exact_alns(const KL& kl) {
  if (!kl.hit()) return {};
  SaiAln a;
  a.k = kl.k;
  a.l = kl.l;
  return {a};
}

namespace {
// bwa_sa2pos for an exact hit (ref_len = len): false when the occurrence straddles the forward /
// reverse-complement boundary of the text (bwa: no match).
bool sa_place(const BwtIndex& idx, std::uint64_t row, std::uint32_t len, Place& out) {
  const std::int64_t p = static_cast<std::int64_t>(idx.sa_at(row));
  if (p < idx.l_pac && idx.l_pac < p + static_cast<std::int64_t>(len)) return false;
  out = row_place(idx, row, len);
  return true;
}
}  // namespace

Hit samse_hit(const BwtIndex& idx, const std::vector<SaiAln>& alns, std::uint32_t len, Rand48& rng, int n_occ) {
  Hit h;
  if (alns.empty()) return h;
  for (const auto& a : alns)
    if (!a.exact())
      throw InputError("alignment with " + std::to_string(a.n_mm) + " mismatches and " +
                       std::to_string(a.n_gapo + a.n_gape) + " gaps: inexact alignments need barracuda_exact's inexact "
                       "mapping, which this build does not have");
  // bwa_aln2seq_core, set_main: the best-scoring alignments, one of their rows at random.
  const std::uint32_t best = alns[0].score;
  std::uint64_t cnt = 0, sa = 0;
  std::size_t i = 0;
  for (; i < alns.size(); ++i) {
    const SaiAln& p = alns[i];
    if (p.score > best) break;
    const std::uint64_t w = p.l - p.k + 1;
    if (rng.drand() * static_cast<double>(w + cnt) > static_cast<double>(cnt))
      sa = p.k + static_cast<std::uint64_t>(static_cast<double>(w) * rng.drand());
    cnt += w;
  }
  h.count = cnt;  // c1 (X0); c2 counts the rest, always 0 for exact-only alignments
  Place primary;
  if (!sa_place(idx, sa, len, primary)) return Hit{};  // bwa: BWA_TYPE_NO_MATCH
  h.primary = primary;
  const Contig& ct = idx.contigs[static_cast<std::size_t>(primary.tid)];
  h.bridging = primary.pos + static_cast<std::int64_t>(len) - ct.offset > ct.len;
  h.n_ambiguous = count_ambiguous(idx, primary.pos, static_cast<int>(len));
  // n_multi: every occurrence of every alignment when there are at most n_occ + 1, those at
  // another position than the primary's (bwa compares positions only).
  std::uint64_t n_all = 0;
  for (const auto& a : alns) n_all += a.l - a.k + 1;
  if (n_occ > 0 && n_all <= static_cast<std::uint64_t>(n_occ) + 1) {
    for (const auto& a : alns)
      for (std::uint64_t r = a.k; r <= a.l; ++r) {
        Place q;
        if (sa_place(idx, r, len, q) && q.pos != primary.pos) h.alts.push_back(q);
      }
  }
  return h;
}

}  // namespace evk::barracuda_exact
