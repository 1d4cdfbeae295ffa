#include "core/sampe.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "core/aln_positions.hpp"
#include "core/ksw.hpp"
#include "evk/parallel.hpp"

namespace evk::barracuda_exact {

namespace {

constexpr std::uint64_t kNone = ~0ull;
constexpr double kOutlierBound = 2.0;
constexpr int kSwMinMatchLen = 20;
constexpr int kSwMinMapq = 17;
constexpr std::uint16_t kPaired = 1, kProper = 2, kRead1 = 64, kRead2 = 128;

// (int)x as x86-64 converts a double: out of range or NaN gives INT_MIN (bwa's arithmetic relies on it
// only in degenerate cases, e.g. a zero standard deviation).
int x86_int(double x) {
  if (!(x > -2147483649.0 && x < 2147483648.0)) return INT_MIN;
  return static_cast<int>(x);
}

int log_n(std::uint64_t n) { return n == 0 ? 0 : static_cast<int>(4.343 * std::log(static_cast<double>(n)) + 0.5); }

std::uint64_t hash_64(std::uint64_t key) {  // Thomas Wang's 64-bit mix (bwa's hash_64)
  key += ~(key << 32);
  key ^= (key >> 22);
  key += ~(key << 13);
  key ^= (key >> 8);
  key += (key << 3);
  key ^= (key >> 15);
  key += ~(key << 27);
  key ^= (key >> 31);
  return key;
}

struct P64 {  // bwa's pair64_t: x = position, y = aln index << 2 | strand << 1 | end
  std::uint64_t x, y;
};

// bwa's pairing(): returns the number of ends whose position changed with MAPQ > 0.
int pairing(SeqAln* p[2], const Aln* const aln[2], std::vector<P64>& arr, const PeOptions& opt, int s_mm,
            const IsizeInfo& ii) {
  int cnt_chg = 0;
  const int max_len = std::max(p[0]->full_len, p[1]->full_len);
  std::uint64_t o_score = kNone, subo_score = kNone;
  int o_n = 0, subo_n = 0;
  P64 o_pos[2] = {{kNone, kNone}, {kNone, kNone}};
  auto aux = [&](const P64& u, const P64& v) {
    const std::uint64_t l = v.x + static_cast<std::uint64_t>(static_cast<std::int64_t>(p[v.y & 1]->len)) - u.x;
    if (u.x != kNone && v.x > u.x && l >= static_cast<std::uint64_t>(max_len) &&
        ((ii.high && l <= ii.high_bayesian) || (ii.high == 0 && l <= static_cast<std::uint64_t>(opt.max_isize)))) {
      std::uint64_t s = static_cast<std::uint64_t>(static_cast<std::int64_t>(aln[v.y & 1][v.y >> 2].score + aln[u.y & 1][u.y >> 2].score));
      s *= 10;
      if (ii.high)
        s += static_cast<std::uint64_t>(static_cast<std::int64_t>(
            x86_int(-4.343 * std::log(.5 * std::erfc(M_SQRT1_2 * std::fabs(static_cast<double>(l) - ii.avg) / ii.std)) + .499)));
      s = s << 32 | static_cast<std::uint32_t>(hash_64(u.x << 32 | v.x));
      if (s >> 32 == o_score >> 32) ++o_n;
      else if (s >> 32 < o_score >> 32) subo_n += o_n, o_n = 1;
      else ++subo_n;
      if (s < o_score) subo_score = o_score, o_score = s, o_pos[u.y & 1] = u, o_pos[v.y & 1] = v;
      else if (s < subo_score) subo_score = s;
    }
  };
  std::sort(arr.begin(), arr.end(), [](const P64& a, const P64& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  P64 last[2][2];
  for (auto& a : last)
    for (auto& b : a) b = {kNone, kNone};
  for (const P64& x : arr) {
    if ((x.y >> 1 & 1) == 1) {  // reverse strand: pair with the last two forward hits of the other end
      const int y = 1 - static_cast<int>(x.y & 1);
      aux(last[y][1], x);
      aux(last[y][0], x);
    } else {
      last[x.y & 1][0] = last[x.y & 1][1];
      last[x.y & 1][1] = x;
    }
  }
  if (o_score != kNone) {
    int mapq_p = 0;  // the maximum mapping quality when one end is moved
    if (o_n == 1) {
      if (subo_score == kNone) mapq_p = 29;  // no sub-optimal pair
      else if ((subo_score >> 32) - (o_score >> 32) > static_cast<std::uint64_t>(s_mm * 10)) mapq_p = 23;
      else {
        const int n = subo_n > 255 ? 255 : subo_n;
        mapq_p = static_cast<int>(((subo_score >> 32) - (o_score >> 32)) / 2) - log_n(static_cast<std::uint64_t>(n));
        if (mapq_p < 0) mapq_p = 0;
      }
    }
    auto at = [&](int j) { return p[j]->pos == o_pos[j].x && p[j]->strand == static_cast<int>(o_pos[j].y >> 1 & 1); };
    if (at(0) && at(1)) {
      if (p[0]->mapq > 0 && p[1]->mapq > 0) {
        int mapq = p[0]->mapq + p[1]->mapq;
        if (mapq > 60) mapq = 60;
        p[0]->mapq = p[1]->mapq = mapq;
      } else {
        if (p[0]->mapq == 0) p[0]->mapq = mapq_p + 7 < p[1]->mapq ? mapq_p + 7 : p[1]->mapq;
        if (p[1]->mapq == 0) p[1]->mapq = mapq_p + 7 < p[0]->mapq ? mapq_p + 7 : p[0]->mapq;
      }
    } else if (at(0)) {  // end 2 moved
      p[1]->seq_q = 0;
      p[1]->mapq = p[0]->mapq;
      if (p[1]->mapq > mapq_p) p[1]->mapq = mapq_p;
    } else if (at(1)) {  // end 1 moved
      p[0]->seq_q = 0;
      p[0]->mapq = p[1]->mapq;
      if (p[0]->mapq > mapq_p) p[0]->mapq = mapq_p;
    } else {  // both moved
      p[0]->seq_q = p[1]->seq_q = 0;
      mapq_p -= 20;
      if (mapq_p < 0) mapq_p = 0;
      p[0]->mapq = p[1]->mapq = mapq_p;
    }
    for (int j = 0; j < 2; ++j) {
      const P64& w = o_pos[j];
      const Aln& r = aln[w.y & 1][w.y >> 2];
      p[j]->extra_flag |= kProper;
      if (p[j]->pos != w.x || p[j]->strand != static_cast<int>(w.y >> 1 & 1)) {
        p[j]->n_mm = r.n_mm;
        p[j]->n_gapo = r.n_gapo;
        p[j]->n_gape = r.n_gape;
        p[j]->strand = static_cast<int>(w.y >> 1 & 1);
        p[j]->score = r.score;
        p[j]->pos = w.x;
        if (p[j]->mapq > 0) ++cnt_chg;
      }
    }
  }
  return cnt_chg;
}

// bwa_sw_core: local alignment of the read (codes seq, already on the strand to align) in
// [beg, beg + reglen); on success the CIGAR (with soft clips), beg moved to the alignment start and
// cnt = n_mm << 16 | n_gapo << 8 | n_gape.
bool sw_core(const BwtIndex& idx, int len, const std::uint8_t* seq, std::int64_t& beg, std::int64_t reglen,
             std::vector<std::uint32_t>& cigar, std::uint32_t& cnt) {
  static const ScoreMatrix mat = score_matrix(1, 3);
  cigar.clear();
  if (reglen < kSwMinMatchLen || idx.l_pac - beg < len) return false;
  std::uint64_t x = 0;
  for (int k = 0; k < len; ++k) x += seq[k] >= 4;
  if (static_cast<float>(x) / static_cast<float>(len) >= 0.25 || static_cast<std::uint64_t>(len) - x < kSwMinMatchLen)
    return false;
  std::vector<std::uint8_t> ref;
  for (std::int64_t k = beg; static_cast<std::int64_t>(ref.size()) < reglen && k < idx.l_pac; ++k)
    ref.push_back(static_cast<std::uint8_t>(idx.pac_base(k)));
  const int l = static_cast<int>(ref.size());
  const LocalAlignment r = local_align(len, seq, l, ref.data(), mat, 5, 1, len < 250);
  if (r.score < kSwMinMatchLen || r.score2 == r.score) return false;  // poor hit or tandem hits
  const int gscore = global_align(r.qe - r.qb + 1, seq + r.qb, r.te - r.tb + 1, ref.data() + r.tb, mat, 5, 1, 50, &cigar);
  if (gscore != r.score) {  // weird alignment
    cigar.clear();
    return false;
  }
  std::uint64_t tx = 0, qy = 0;
  for (auto c : cigar) {
    if ((c & 0xf) == kCigarM) tx += c >> 4, qy += c >> 4;
    else if ((c & 0xf) == kCigarD) tx += c >> 4;
    else qy += c >> 4;
  }
  if (tx < kSwMinMatchLen || qy < kSwMinMatchLen) {
    cigar.clear();
    return false;
  }
  const int start = r.qb, end = r.qe + 1;
  beg += r.tb;
  if (start) cigar.insert(cigar.begin(), static_cast<std::uint32_t>(start) << 4 | kCigarS);
  if (end < len) cigar.push_back(static_cast<std::uint32_t>(len - end) << 4 | kCigarS);
  std::uint32_t n_mm = 0, n_gapo = 0, n_gape = 0;
  std::int64_t tt = r.tb, qq = r.qb;
  for (auto c : cigar) {
    const std::uint32_t cl = c >> 4;
    switch (c & 0xf) {
      case kCigarM:
        for (std::uint32_t i = 0; i < cl; ++i)
          if (ref[static_cast<std::size_t>(tt + i)] < 4 && seq[qq + i] < 4 && ref[static_cast<std::size_t>(tt + i)] != seq[qq + i]) ++n_mm;
        tt += cl, qq += cl;
        break;
      case kCigarD:
        tt += cl, ++n_gapo, n_gape += cl - 1;
        break;
      case kCigarI:
        qq += cl, ++n_gapo, n_gape += cl - 1;
        break;
      default:
        break;  // soft clips: bwa counts from r.qb, so they advance nothing here
    }
  }
  cnt = n_mm << 16 | n_gapo << 8 | n_gape;
  return true;
}

// bwa_paired_sw for one pair: rescue the unmapped (or discordant) end in the insert window of the
// other. Returns true when an end was placed.
bool paired_sw(const BwtIndex& idx, SeqAln* p[2], const std::uint8_t* fwd[2], const std::uint8_t* rc[2],
               const IsizeInfo& ii) {
  if (!((p[0]->mapq >= kSwMinMapq || p[1]->mapq >= kSwMinMapq) && (p[0]->extra_flag & kProper) == 0)) return false;
  int mq_adjust[2] = {255, 255};
  std::int64_t beg[2] = {0, 0}, end[2] = {0, 0};
  std::vector<std::uint32_t> cigar[2];
  bool ok[2] = {false, false};
  std::uint32_t cnt[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {  // p[1-k] is the anchor, p[k] the end to be placed
    SeqAln& pref = *p[1 - k];
    SeqAln& pmate = *p[k];
    if (pref.type == kNoMatch) continue;
    const std::uint8_t* seq;
    if (pref.strand == 0) {  // the mate is on the reverse strand at larger coordinates
      beg[k] = static_cast<std::int64_t>(static_cast<double>(static_cast<std::int64_t>(pref.pos)) + ii.avg - 3 * ii.std -
                                         pmate.len * 1.5);
      end[k] = static_cast<std::int64_t>(static_cast<double>(beg[k]) + 6 * ii.std + 2 * pmate.len);
      if (beg[k] < static_cast<std::int64_t>(pref.pos) + pref.len) beg[k] = static_cast<std::int64_t>(pref.pos) + pref.len;
      if (end[k] > idx.l_pac) end[k] = idx.l_pac;
      seq = rc[k];
    } else {  // on the forward strand at smaller coordinates
      beg[k] = static_cast<std::int64_t>(static_cast<double>(static_cast<std::int64_t>(pref.pos) + pref.len) - ii.avg -
                                         3 * ii.std - pmate.len * 0.5);
      end[k] = static_cast<std::int64_t>(static_cast<double>(beg[k]) + 6 * ii.std + 2 * pmate.len);
      if (beg[k] < 0) beg[k] = 0;
      if (end[k] > static_cast<std::int64_t>(pref.pos)) end[k] = static_cast<std::int64_t>(pref.pos);
      seq = fwd[k];
    }
    ok[k] = sw_core(idx, pmate.len, seq, beg[k], end[k] - beg[k], cigar[k], cnt[k]);
    if (ok[k] && pmate.type != kNoMatch) {  // weigh the rescue against the end's own hit
      int clip = 0;
      if ((cigar[k].front() & 0xf) == kCigarS) clip += static_cast<int>(cigar[k].front() >> 4);
      if ((cigar[k].back() & 0xf) == kCigarS) clip += static_cast<int>(cigar[k].back() >> 4);
      int s_old = static_cast<int>((pmate.n_mm * 9 + pmate.n_gapo * 13 + pmate.n_gape * 2) / 3. * 8. + .499);
      int s_new = static_cast<int>(((cnt[k] >> 16) * 9 + (cnt[k] >> 8 & 0xff) * 13 + (cnt[k] & 0xff) * 2 +
                                    static_cast<std::uint32_t>(clip) * 3) / 3. * 8. + .499);
      s_old = x86_int(s_old + -4.343 * std::log(ii.ap_prior / static_cast<double>(idx.l_pac)));
      s_new += x86_int(-4.343 * std::log(.5 * std::erfc(M_SQRT1_2 * 1.5) + .499));  // as bwa writes it
      if (s_old < s_new) {  // reject the rescue
        mq_adjust[k] = s_new - s_old;
        ok[k] = false;
        cigar[k].clear();
      } else {
        mq_adjust[k] = s_old - s_new;
      }
    }
  }
  int k = -1, mapq = 0;
  if (ok[0] && ok[1]) {
    k = p[0]->mapq < p[1]->mapq ? 0 : 1;
    mapq = std::abs(p[1]->mapq - p[0]->mapq);
  } else if (ok[0]) {
    k = 0, mapq = p[1]->mapq;
  } else if (ok[1]) {
    k = 1, mapq = p[0]->mapq;
  }
  if (k < 0 || static_cast<std::int64_t>(p[k]->pos) == beg[k]) return false;
  SeqAln& pm = *p[k];
  SeqAln& pr = *p[1 - k];
  int tmp = pr.mapq - pm.mapq / 2 - 8;
  if (tmp <= 0) tmp = 1;
  if (mapq > tmp) mapq = tmp;
  pm.mapq = pr.mapq = mapq;
  pm.seq_q = pr.seq_q = pr.seq_q < mapq ? pr.seq_q : mapq;
  if (pm.mapq > mq_adjust[k]) pm.mapq = mq_adjust[k];
  if (pm.seq_q > mq_adjust[k]) pm.seq_q = mq_adjust[k];
  pm.cigar = std::move(cigar[k]);
  pm.has_cigar = true;
  pm.type = kMateSw;
  pm.pos = static_cast<std::uint64_t>(beg[k]);
  pm.seq_q = pr.seq_q;
  pm.strand = 1 - pr.strand;
  pm.n_mm = cnt[k] >> 16;
  pm.n_gapo = cnt[k] >> 8 & 0xff;
  pm.n_gape = cnt[k] & 0xff;
  pm.extra_flag |= kProper;
  pr.extra_flag |= kProper;
  return true;
}

}  // namespace

bool infer_isize(const std::vector<SeqAln>& e1, const std::vector<SeqAln>& e2, double ap_prior, std::int64_t l_pac,
                 IsizeInfo& ii) {
  ii = IsizeInfo{};
  const std::size_t n_seqs = e1.size();
  std::vector<std::uint64_t> isizes;
  isizes.reserve(n_seqs);
  int max_len = 1;
  for (std::size_t i = 0; i < n_seqs; ++i) {
    const SeqAln &a = e1[i], &b = e2[i];
    if (a.mapq >= 20 && b.mapq >= 20) {
      const std::uint64_t x = a.pos < b.pos ? b.pos + static_cast<std::uint64_t>(static_cast<std::int64_t>(b.len)) - a.pos
                                            : a.pos + static_cast<std::uint64_t>(static_cast<std::int64_t>(a.len)) - b.pos;
      if (x < 100000) isizes.push_back(x);
    }
    max_len = std::max({max_len, a.len, b.len});
  }
  const int tot = static_cast<int>(isizes.size());
  if (tot < 20) return false;  // too few good pairs
  std::sort(isizes.begin(), isizes.end());
  const int p25 = static_cast<int>(isizes[static_cast<std::size_t>(static_cast<int>(tot * 0.25 + 0.5))]);
  const int p75 = static_cast<int>(isizes[static_cast<std::size_t>(static_cast<int>(tot * 0.75 + 0.5))]);
  const int tmp = static_cast<int>(p25 - kOutlierBound * (p75 - p25) + .499);
  ii.low = static_cast<std::uint64_t>(static_cast<std::int64_t>(tmp > max_len ? tmp : max_len));
  ii.high = static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<int>(p75 + kOutlierBound * (p75 - p25) + .499)));
  if (ii.low > ii.high) {  // the upper bound is below the read length
    ii = IsizeInfo{};
    return false;
  }
  std::uint64_t x = 0;
  int n = 0;
  for (auto v : isizes)
    if (v >= ii.low && v <= ii.high) ++n, x += v;
  ii.avg = static_cast<double>(x) / n;
  double skewness = 0.0, kurtosis = 0.0;
  ii.std = -1.0;  // bwa accumulates onto its initial -1
  for (auto v : isizes) {
    if (v >= ii.low && v <= ii.high) {
      const double t = (static_cast<double>(v) - ii.avg) * (static_cast<double>(v) - ii.avg);
      ii.std += t;
      skewness += t * (static_cast<double>(v) - ii.avg);
      kurtosis += t * t;
    }
  }
  kurtosis = kurtosis / n / (ii.std / n * ii.std / n) - 3;
  ii.std = std::sqrt(ii.std / n);
  skewness = skewness / n / (ii.std * ii.std * ii.std);
  (void)kurtosis;
  (void)skewness;
  double y = 1.0;
  for (y = 1.0; y < 10.0; y += 0.01)
    if (.5 * std::erfc(y / M_SQRT2) < ap_prior / static_cast<double>(l_pac) * (y * ii.std + ii.avg)) break;
  ii.high_bayesian = static_cast<std::uint64_t>(y * ii.std + ii.avg + .499);
  std::uint64_t n_ap = 0;
  for (auto v : isizes)
    if (v > ii.high_bayesian) ++n_ap;
  ii.ap_prior = .01 * (static_cast<double>(n_ap) + .01) / tot;
  if (ii.ap_prior < ap_prior) ii.ap_prior = ap_prior;
  if (std::isnan(ii.std) || p75 > 100000) {  // weird pairing
    ii.low = ii.high = ii.high_bayesian = 0;
    ii.avg = ii.std = -1.0;
    return false;
  }
  return true;
}

SampeResult sampe_batch(const BwtIndex& idx, const AlnReads& r1, const AlnReads& r2, const AlnBatch& a1,
                        const AlnBatch& a2, const AlnOptions& opt, const PeOptions& pe, Rand48& rng,
                        const IsizeInfo& last, int threads) {
  const ChunkLoop loop = [threads](std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn) {
    parallel_for(n, fn, threads);
  };
  return sampe_batch(idx, r1, r2, a1, a2, opt, pe, rng, last, loop, nullptr, nullptr);
}

SampeResult sampe_batch(const BwtIndex& idx, const AlnReads& r1, const AlnReads& r2, const AlnBatch& a1,
                        const AlnBatch& a2, const AlnOptions& opt, const PeOptions& pe, Rand48& rng,
                        const IsizeInfo& last, const ChunkLoop& loop, const std::vector<std::uint64_t>* pos1,
                        const std::vector<std::uint64_t>* pos2) {
  const std::size_t n = r1.codes->size();
  const std::vector<std::uint64_t>* known_pos[2] = {pos1, pos2};
  auto known = [&](int j, std::size_t i, ReadRows& rows) {  // end j's rows of pair i known in advance
    rows.n = 0;
    if (known_pos[j] && !known_pos[j]->empty()) known_rows(j ? a2 : a1, *known_pos[j], i, rows);
    return rows.known();
  };
  const AlnReads* rd[2] = {&r1, &r2};
  const AlnBatch* ab[2] = {&a1, &a2};
  std::vector<SeqAln> s[2] = {std::vector<SeqAln>(n), std::vector<SeqAln>(n)};
  for (std::size_t i = 0; i < n; ++i)  // pair order, end 1 then end 2: bwa's random draws
    for (int j = 0; j < 2; ++j) {
      SeqAln& x = s[j][i];
      x.len = x.clip_len = (*rd[j]->len)[i];
      x.full_len = static_cast<int>(rd[j]->codes->len[i]);
      x.extra_flag = static_cast<std::uint16_t>(kPaired | (j == 0 ? kRead1 : kRead2));
      aln_choose(ab[j]->begin(i), ab[j]->count(i), rng, x);
    }
  loop(n, [&](std::size_t b, std::size_t e) {
    ReadRows rows;
    for (std::size_t i = b; i < e; ++i)
      for (int j = 0; j < 2; ++j) {
        SeqAln& x = s[j][i];
        if (x.type == kUnique || x.type == kRepeat) {
          x.seq_q = x.mapq = approx_mapq(x, aln_max_diff(opt, x.len));
          x.pos = sa_to_pos(idx, x.sa, x.len + x.ref_shift, x.strand, known(j, i, rows));
          if (x.pos == kNone) x.type = kNoMatch;
        }
      }
  });
  SampeResult res;
  IsizeInfo ii;
  res.isize_inferred = infer_isize(s[0], s[1], pe.ap_prior, idx.l_pac, ii);
  if (ii.avg < 0.0 && last.avg > 0.0) ii = last;
  if (pe.force_isize) {
    ii.low = ii.high = 0;
    ii.avg = ii.std = -1.0;
  }
  res.isize = ii;
  std::vector<std::uint64_t> changed(n, 0), rescued(n, 0);
  res.rec1.resize(n);
  res.rec2.resize(n);
  loop(n, [&](std::size_t b, std::size_t e) {
    ReadRows rows;
    std::vector<P64> arr;
    std::vector<std::uint8_t> fwd[2], rc[2];
    for (std::size_t i = b; i < e; ++i) {
      SeqAln* p[2] = {&s[0][i], &s[1][i]};
      const Aln* aln[2] = {a1.begin(i), a2.begin(i)};
      const std::uint32_t na[2] = {a1.count(i), a2.count(i)};
      bool too_many = false;  // bwa skips the rest of this pair's pairing step, XA lists included
      if ((p[0]->type == kUnique || p[0]->type == kRepeat) && (p[1]->type == kUnique || p[1]->type == kRepeat)) {
        std::int64_t n_occ[2] = {0, 0};
        for (int j = 0; j < 2; ++j)
          for (std::uint32_t k = 0; k < na[j]; ++k) n_occ[j] += static_cast<std::int64_t>(aln[j][k].l - aln[j][k].k + 1);
        too_many = n_occ[0] > pe.max_occ || n_occ[1] > pe.max_occ;
        if (!too_many) {
          arr.clear();
          for (int j = 0; j < 2; ++j) {
            const KnownRows kr = known(j, i, rows);
            for (std::uint32_t k = 0; k < na[j]; ++k)
              for (std::uint64_t l = aln[j][k].k; l <= aln[j][k].l; ++l) {
                int strand = 0;
                const std::uint64_t pos = sa_to_pos(idx, l, p[j]->len + p[j]->ref_shift, strand, kr);
                arr.push_back({pos, static_cast<std::uint64_t>(k) << 2 | static_cast<std::uint64_t>(strand) << 1 |
                                        static_cast<std::uint64_t>(j)});
              }
          }
          changed[i] = static_cast<std::uint64_t>(pairing(p, aln, arr, pe, opt.s_mm, ii));
        }
      }
      if (!too_many && (pe.N_multi || pe.n_multi)) {
        for (int j = 0; j < 2; ++j) {
          if (p[j]->type == kNoMatch) continue;
          int nm = pe.n_multi;
          if (!(p[j]->extra_flag & kProper) && p[1 - j]->type != kNoMatch)
            nm = p[j]->c1 + p[j]->c2 - 1 > static_cast<std::uint64_t>(pe.N_multi) ? pe.n_multi : pe.N_multi;
          aln_multi(aln[j], na[j], nm, *p[j]);
          multi_positions(idx, *p[j], known(j, i, rows));
        }
      }
      if (pe.sw && ii.avg >= 0.0) {  // mate rescue
        const std::uint8_t *f[2], *r[2];
        for (int j = 0; j < 2; ++j) {
          const ReadCodes& c = *rd[j]->codes;
          const std::uint8_t* q = c.codes.data() + c.offset[i];
          const int len = p[j]->len;
          fwd[j].assign(q, q + len);
          rc[j].resize(static_cast<std::size_t>(len));
          for (int t = 0; t < len; ++t) rc[j][static_cast<std::size_t>(len - 1 - t)] = q[t] > 3 ? 4 : static_cast<std::uint8_t>(3 - q[t]);
          f[j] = fwd[j].data();
          r[j] = rc[j].data();
        }
        rescued[i] = paired_sw(idx, p, f, r, ii);
      }
      for (int j = 0; j < 2; ++j) {
        const ReadCodes& c = *rd[j]->codes;
        refine_read(idx, c.codes.data() + c.offset[i], *p[j]);
      }
      // end 1's record first: an unmapped end takes its mate's position
      res.rec1[i] = make_record(idx, *p[0], p[1], opt.max_top2);
      res.rec2[i] = make_record(idx, *p[1], p[0], opt.max_top2);
    }
  });
  for (std::size_t i = 0; i < n; ++i) {
    res.changed += changed[i];
    res.rescued += rescued[i];
  }
  return res;
}

}  // namespace evk::barracuda_exact
