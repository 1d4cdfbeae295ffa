#include "core/samse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/hits.hpp"
#include "core/ksw.hpp"
#include "evk/parallel.hpp"

namespace evk::barracuda_exact {

namespace {
constexpr std::uint64_t kNoPos = ~0ull;

int log_n(std::uint64_t n) {  // bwa's g_log_n[n] = (int)(4.343 * log(n) + 0.5), n in 1..255
  return static_cast<int>(4.343 * std::log(static_cast<double>(n)) + 0.5);
}

std::uint64_t pos_end(const SeqAln& s) {
  if (!s.has_cigar) return s.pos + static_cast<std::uint64_t>(s.len);
  std::uint64_t x = s.pos;
  for (auto c : s.cigar)
    if ((c & 0xf) == kCigarM || (c & 0xf) == kCigarD) x += c >> 4;
  return x;
}

// bwa_refine_gapped_core: global alignment of the read against [pos, pos + len + ref_shift),
// band max(50, 1.5 |length difference|); leading/trailing insertions become soft clips, a leading
// deletion moves the position, a trailing one is dropped.
std::vector<std::uint32_t> refine_core(const BwtIndex& idx, int len, const std::uint8_t* seq, int ref_shift,
                                       std::uint64_t& pos) {
  static const ScoreMatrix mat = score_matrix(1, 3);
  const std::int64_t rb = static_cast<std::int64_t>(pos);
  const std::int64_t re = std::min<std::int64_t>(rb + len + ref_shift, idx.l_pac);  // bwa asserts re <= l_pac
  std::vector<std::uint8_t> rseq;
  for (std::int64_t k = rb; k < re; ++k) rseq.push_back(static_cast<std::uint8_t>(idx.pac_base(k)));
  const int rlen = static_cast<int>(rseq.size());
  const int w = static_cast<int>(std::abs(rlen - len) * 1.5);
  std::vector<std::uint32_t> cigar;
  global_align(len, seq, rlen, rseq.data(), mat, 5, 1, 50 > w ? 50 : w, &cigar);
  if ((cigar.back() & 0xf) == kCigarI) cigar.back() = (cigar.back() >> 4 << 4) | kCigarS;
  if ((cigar.front() & 0xf) == kCigarI) cigar.front() = (cigar.front() >> 4 << 4) | kCigarS;
  if ((cigar.back() & 0xf) == kCigarD) cigar.pop_back();
  if ((cigar.front() & 0xf) == kCigarD) {
    pos += cigar.front() >> 4;
    cigar.erase(cigar.begin());
  }
  return cigar;
}

// bwa_cal_md1: MD and NM of a hit at pos (with or without a CIGAR) for the read codes seq.
void cal_md(const BwtIndex& idx, const std::vector<std::uint32_t>* cigar, int len, std::uint64_t pos,
            const std::uint8_t* seq, std::string& md, int& nm_out) {
  md.clear();
  int nm = 0, u = 0;
  std::uint64_t x = pos, y = 0;
  const std::uint64_t l_pac = static_cast<std::uint64_t>(idx.l_pac);
  auto match_run = [&](std::uint64_t l) {
    for (std::uint64_t z = 0; z < l && x + z < l_pac; ++z) {
      const int c = idx.pac_base(static_cast<std::int64_t>(x + z));
      if (seq[y + z] > 3 || c != seq[y + z]) {
        md += std::to_string(u);
        md += "ACGTN"[c];
        ++nm;
        u = 0;
      } else {
        ++u;
      }
    }
  };
  if (cigar) {
    for (auto c : *cigar) {
      const std::uint64_t l = c >> 4;
      switch (c & 0xf) {
        case kCigarM:
          match_run(l);
          x += l;
          y += l;
          break;
        case kCigarI:
          y += l;
          nm += static_cast<int>(l);
          break;
        case kCigarS:
          y += l;
          break;
        case kCigarD:
          md += std::to_string(u);
          md += '^';
          for (std::uint64_t z = 0; z < l && x + z < l_pac; ++z) md += "ACGT"[idx.pac_base(static_cast<std::int64_t>(x + z))];
          u = 0;
          x += l;
          nm += static_cast<int>(l);
          break;
        default:
          break;
      }
    }
  } else {
    match_run(static_cast<std::uint64_t>(len));
  }
  md += std::to_string(u);
  nm_out = nm;
}

// bwa_correct_trimmed: a soft clip for the trimmed 3' end (on the read's strand).
void correct_trimmed(SeqAln& s) {
  if (s.len == s.full_len) return;
  const std::uint32_t clip = static_cast<std::uint32_t>(s.full_len - s.len);
  if (s.strand == 0) {
    if (s.has_cigar && (s.cigar.back() & 0xf) == kCigarS) {
      s.cigar.back() += clip << 4;
    } else {
      if (!s.has_cigar) s.cigar.assign(1, static_cast<std::uint32_t>(s.len) << 4 | kCigarM);
      s.cigar.push_back(clip << 4 | kCigarS);
    }
  } else {
    if (s.has_cigar && (s.cigar.front() & 0xf) == kCigarS) {
      s.cigar.front() += clip << 4;
    } else {
      if (!s.has_cigar) s.cigar.assign(1, static_cast<std::uint32_t>(s.len) << 4 | kCigarM);
      s.cigar.insert(s.cigar.begin(), clip << 4 | kCigarS);
    }
  }
  s.has_cigar = true;
  s.len = s.full_len;
}

int contig_or_none(const BwtIndex& idx, std::uint64_t pos) {
  return pos >= static_cast<std::uint64_t>(idx.l_pac) ? -1 : contig_of(idx, static_cast<std::int64_t>(pos));
}

}  // namespace

AlnDraw aln_draw(const Aln* a, std::uint32_t n, Rand48& rng) {
  AlnDraw d;
  if (n == 0) return d;
  const int best = a[0].score;
  std::int32_t cnt = 0;  // bwa's int
  for (std::uint32_t i = 0; i < n; ++i) {
    const Aln& p = a[i];
    if (p.score > best) break;
    const std::uint64_t w = p.l - p.k + 1;
    if (rng.drand() * static_cast<double>(w + static_cast<std::uint64_t>(static_cast<std::int64_t>(cnt))) >
        static_cast<double>(cnt)) {
      d.pick = static_cast<std::int32_t>(i);
      d.sa = p.k + static_cast<std::uint64_t>(static_cast<double>(w) * rng.drand());
    }
    cnt = static_cast<std::int32_t>(static_cast<std::uint32_t>(cnt) + static_cast<std::uint32_t>(w));
  }
  return d;
}

void aln_apply(const Aln* a, std::uint32_t n, const AlnDraw& d, SeqAln& s) {
  if (n == 0) {
    s.type = kNoMatch;
    s.c1 = s.c2 = 0;
    return;
  }
  if (d.pick >= 0) {  // (none when the first draw was exactly 0: bwa leaves the fields as they were)
    const Aln& p = a[d.pick];
    s.n_mm = p.n_mm;
    s.n_gapo = p.n_gapo;
    s.n_gape = p.n_gape;
    s.ref_shift = static_cast<int>(p.n_del) - static_cast<int>(p.n_ins);
    s.score = p.score;
    s.sa = d.sa;
  }
  const int best = a[0].score;
  std::int32_t cnt = 0;
  std::uint32_t i = 0;
  for (; i < n && a[i].score <= best; ++i)
    cnt = static_cast<std::int32_t>(static_cast<std::uint32_t>(cnt) + static_cast<std::uint32_t>(a[i].l - a[i].k + 1));
  s.c1 = static_cast<std::uint64_t>(static_cast<std::int64_t>(cnt)) & 0xfffffff;  // a 28-bit field in bwa
  for (; i < n; ++i) cnt = static_cast<std::int32_t>(static_cast<std::uint32_t>(cnt) + static_cast<std::uint32_t>(a[i].l - a[i].k + 1));
  s.c2 = (static_cast<std::uint64_t>(static_cast<std::int64_t>(cnt)) - s.c1) & 0xfffffff;
  s.type = s.c1 > 1 ? kRepeat : kUnique;
}

void aln_choose(const Aln* a, std::uint32_t n, Rand48& rng, SeqAln& s) { aln_apply(a, n, aln_draw(a, n, rng), s); }

void aln_multi(const Aln* a, std::uint32_t n, int n_multi, SeqAln& s) {
  if (n == 0 || n_multi == 0) return;  // bwa leaves the list as it was (empty here)
  std::int64_t n_occ = 0;
  for (std::uint32_t k = 0; k < n; ++k) n_occ += static_cast<std::int64_t>(a[k].l - a[k].k + 1);
  s.multi.clear();
  if (n_occ > n_multi + 1) return;  // too many hits: none of them
  for (std::uint32_t k = 0; k < n; ++k)  // all of them (bwa's random sampling branch is unreachable here)
    for (std::uint64_t l = a[k].k; l <= a[k].l; ++l) {
      MultiHit m;
      m.pos = l;
      m.gap = a[k].n_gapo + a[k].n_gape;
      m.ref_shift = static_cast<int>(a[k].n_del) - static_cast<int>(a[k].n_ins);
      m.mm = a[k].n_mm;
      s.multi.push_back(m);
    }
}

int approx_mapq(const SeqAln& s, int max_diff) {
  if (s.c1 == 0) return 23;
  if (s.c1 > 1) return 0;
  if (static_cast<int>(s.n_mm) == max_diff) return 25;
  if (s.c2 == 0) return 37;
  const std::uint64_t n = s.c2 >= 255 ? 255 : s.c2;
  const int g = log_n(n);
  return 23 < g ? 0 : 23 - g;
}

std::uint64_t sa_to_pos(const BwtIndex& idx, std::uint64_t sa, int ref_len, int& strand, const KnownRows& known) {
  strand = 0;
  std::uint64_t pos_f = known.text_pos(idx, sa);
  const std::uint64_t l_pac = static_cast<std::uint64_t>(idx.l_pac);
  if (pos_f < l_pac && l_pac < pos_f + static_cast<std::uint64_t>(static_cast<std::int64_t>(ref_len))) return kNoPos;
  const bool is_rev = pos_f >= l_pac;
  if (is_rev) pos_f = (l_pac << 1) - 1 - pos_f;
  strand = !is_rev;
  if (is_rev) {
    const std::uint64_t rl = static_cast<std::uint64_t>(static_cast<std::int64_t>(ref_len));
    pos_f = pos_f + 1 < rl ? 0 : pos_f - rl + 1;
  }
  return pos_f;
}

void se_positions(const BwtIndex& idx, const AlnOptions& opt, SeqAln& s, const KnownRows& known) {
  if (s.type != kUnique && s.type != kRepeat) return;
  const int max_diff = aln_max_diff(opt, s.len);
  s.seq_q = s.mapq = approx_mapq(s, max_diff);
  s.pos = sa_to_pos(idx, s.sa, s.len + s.ref_shift, s.strand, known);
  if (s.pos == kNoPos) s.type = kNoMatch;
}

void multi_positions(const BwtIndex& idx, SeqAln& s, const KnownRows& known) {
  std::size_t n = 0;
  for (auto& q : s.multi) {
    q.pos = sa_to_pos(idx, q.pos, s.len + q.ref_shift, q.strand, known);
    if (q.pos != s.pos && q.pos != kNoPos) s.multi[n++] = q;
  }
  s.multi.resize(n);
}

void refine_read(const BwtIndex& idx, const std::uint8_t* codes, SeqAln& s) {
  const int len = s.len;
  thread_local std::vector<std::uint8_t> fwd, rc;  // no allocation per read
  fwd.assign(codes, codes + len);
  rc.resize(static_cast<std::size_t>(len));
  for (int i = 0; i < len; ++i) rc[static_cast<std::size_t>(len - 1 - i)] = codes[i] > 3 ? 4 : static_cast<std::uint8_t>(3 - codes[i]);
  for (auto& q : s.multi)
    if (q.gap) q.cigar = refine_core(idx, len, q.strand ? rc.data() : fwd.data(), q.ref_shift, q.pos);
  if (s.type != kNoMatch && s.type != kMateSw && s.n_gapo != 0) {
    s.cigar = refine_core(idx, len, s.strand ? rc.data() : fwd.data(), s.ref_shift, s.pos);
    s.has_cigar = true;
  }
  if (s.type != kNoMatch)
    cal_md(idx, s.has_cigar ? &s.cigar : nullptr, len, s.pos, s.strand ? rc.data() : fwd.data(), s.md, s.nm);
  correct_trimmed(s);
}

AlnRecord make_record(const BwtIndex& idx, SeqAln& s, SeqAln* mate, int max_top2) {
  AlnRecord r;
  if (s.clip_len < s.full_len) r.xc = s.clip_len;
  if (s.type != kNoMatch || (mate && mate->type != kNoMatch)) {
    std::uint16_t flag = s.extra_flag;
    std::int64_t j;
    if (s.type == kNoMatch) {
      s.pos = mate->pos;
      s.strand = mate->strand;
      flag |= 4;
      j = 1;
    } else {
      j = static_cast<std::int64_t>(pos_end(s) - s.pos);
    }
    const int seqid = contig_or_none(idx, s.pos);
    const int nn = count_ambiguous(idx, static_cast<std::int64_t>(s.pos), static_cast<int>(j));
    const Contig& ct = idx.contigs[static_cast<std::size_t>(std::max(seqid, 0))];
    if (s.type != kNoMatch && static_cast<std::int64_t>(s.pos) + j - ct.offset > ct.len) flag |= 4;  // bridges contigs
    if (s.strand) flag |= 16;
    if (mate) {
      if (mate->type != kNoMatch) {
        if (mate->strand) flag |= 32;
      } else {
        flag |= 8;
      }
    }
    r.flag = flag;
    r.tid = seqid;
    r.pos = static_cast<std::int64_t>(s.pos) - ct.offset;
    r.mapq = s.mapq;
    if (s.has_cigar) r.cigar = s.cigar;
    else if (s.type != kNoMatch) r.cigar.assign(1, static_cast<std::uint32_t>(s.len) << 4 | kCigarM);
    int am = 0;
    if (mate && mate->type != kNoMatch) {
      am = mate->seq_q < s.seq_q ? mate->seq_q : s.seq_q;
      const int m_seqid = contig_or_none(idx, mate->pos);
      const Contig& mc = idx.contigs[static_cast<std::size_t>(std::max(m_seqid, 0))];
      auto pos5 = [](const SeqAln& x) -> std::int64_t {
        return x.type != kNoMatch ? static_cast<std::int64_t>(x.strand ? pos_end(x) : x.pos) : -1;
      };
      r.isize = seqid == m_seqid ? pos5(*mate) - pos5(s) : 0;
      if (s.type == kNoMatch) r.isize = 0;
      r.mtid = m_seqid;
      r.mpos = static_cast<std::int64_t>(mate->pos) - mc.offset;
    } else if (mate) {
      r.mtid = seqid;
      r.mpos = r.pos;
    }
    r.reverse = s.strand != 0;
    if (s.type != kNoMatch) {
      r.aligned = true;
      r.xt = "NURM"[s.type];
      if (nn > 10) r.xt = 'N';
      r.nm = s.nm;
      r.xn = nn;
      if (mate) {
        r.paired = true;
        r.sm = s.seq_q;
        r.am = am;
      }
      if (s.type != kMateSw) {
        r.has_x0 = true;
        r.x0 = s.c1;
        if (s.c1 <= static_cast<std::uint64_t>(max_top2)) {
          r.has_x1 = true;
          r.x1 = s.c2;
        }
      }
      r.xm = static_cast<int>(s.n_mm);
      r.xo = static_cast<int>(s.n_gapo);
      r.xg = static_cast<int>(s.n_gapo + s.n_gape);
      r.md = s.md;
      for (const auto& q : s.multi) {
        const int qid = contig_or_none(idx, q.pos);
        const Contig& qc = idx.contigs[static_cast<std::size_t>(std::max(qid, 0))];
        r.xa += qc.name + "," + (q.strand ? '-' : '+') + std::to_string(static_cast<std::int64_t>(q.pos) - qc.offset + 1) + ",";
        if (!q.cigar.empty()) {
          for (auto c : q.cigar) r.xa += std::to_string(c >> 4) + "MIDNS"[c & 0xf];
        } else {
          r.xa += std::to_string(s.len) + "M";
        }
        r.xa += "," + std::to_string(q.gap + q.mm) + ";";
      }
    }
  } else {
    r.flag = static_cast<std::uint16_t>(s.extra_flag | 4);
    if (mate && mate->type == kNoMatch) r.flag |= 8;
    r.reverse = s.strand != 0;
  }
  return r;
}

namespace {
// x = SeqAln{} without freeing its containers' memory (this loop is serial: no free() per read).
void reset(SeqAln& x) {
  std::vector<std::uint32_t> cigar = std::move(x.cigar);
  std::vector<MultiHit> multi = std::move(x.multi);
  std::string md = std::move(x.md);
  cigar.clear();
  multi.clear();
  md.clear();
  x = SeqAln{};
  x.cigar = std::move(cigar);
  x.multi = std::move(multi);
  x.md = std::move(md);
}
}  // namespace

void samse_draws(const AlnBatch& alns, Rand48& rng, std::vector<AlnDraw>& draws) {
  const std::size_t n = alns.size();
  draws.resize(n);
  for (std::size_t i = 0; i < n; ++i) draws[i] = aln_draw(alns.begin(i), alns.count(i), rng);  // bwa's order
}

AlnRecord samse_record(const BwtIndex& idx, const AlnReads& reads, std::size_t i, const AlnBatch& alns, const AlnDraw& draw,
                       const AlnOptions& opt, int n_multi, SeqAln& s, const KnownRows& known) {
  const ReadCodes& rc = *reads.codes;
  reset(s);
  s.len = s.clip_len = (*reads.len)[i];
  s.full_len = static_cast<int>(rc.len[i]);
  aln_apply(alns.begin(i), alns.count(i), draw, s);
  aln_multi(alns.begin(i), alns.count(i), n_multi, s);
  se_positions(idx, opt, s, known);
  multi_positions(idx, s, known);
  refine_read(idx, rc.codes.data() + rc.offset[i], s);
  return make_record(idx, s, nullptr, opt.max_top2);
}

std::vector<AlnRecord> samse_batch(const BwtIndex& idx, const AlnReads& reads, const AlnBatch& alns,
                                   const AlnOptions& opt, Rand48& rng, int threads, int n_multi) {
  const std::size_t n = reads.codes->size();
  std::vector<AlnDraw> draws;
  samse_draws(alns, rng, draws);
  std::vector<AlnRecord> out(n);
  parallel_for(
      n,
      [&](std::size_t b, std::size_t e) {
        SeqAln s;
        for (std::size_t i = b; i < e; ++i) out[i] = samse_record(idx, reads, i, alns, draws[i], opt, n_multi, s);
      },
      threads);
  return out;
}

}  // namespace evk::barracuda_exact
