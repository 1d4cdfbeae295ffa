#include "core/ksw.hpp"

#include <algorithm>
#include <cstdlib>

namespace evk::barracuda_exact {

ScoreMatrix score_matrix(int a, int b) {
  ScoreMatrix s{};
  int k = 0;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) s.m[k++] = static_cast<std::int8_t>(i == j ? a : -b);
    s.m[k++] = -1;  // ambiguous base
  }
  for (int j = 0; j < 5; ++j) s.m[k++] = -1;
  return s;
}

namespace {
constexpr std::int32_t kMinusInf = -0x40000000;

void push_cigar(std::vector<std::uint32_t>& c, std::uint32_t op, std::uint32_t len) {
  if (c.empty() || op != (c.back() & 0xf)) c.push_back(len << 4 | op);
  else c.back() += len << 4;
}
}  // namespace

int global_align(int qlen, const std::uint8_t* query, int tlen, const std::uint8_t* target, const ScoreMatrix& mat,
                 int gapo, int gape, int w, std::vector<std::uint32_t>* cigar) {
  const int oe = gapo + gape;
  const int n_col = qlen < 2 * w + 1 ? qlen : 2 * w + 1;  // columns of the backtrack matrix
  std::vector<std::uint8_t> z;
  if (cigar) {
    cigar->clear();
    z.assign(static_cast<std::size_t>(n_col) * static_cast<std::size_t>(std::max(tlen, 0)), 0);
  }
  std::vector<std::int8_t> qp(static_cast<std::size_t>(qlen) * 5);
  for (int k = 0, i = 0; k < 5; ++k)
    for (int j = 0; j < qlen; ++j) qp[static_cast<std::size_t>(i++)] = mat.m[k * 5 + query[j]];
  struct EH {
    std::int32_t h, e;
  };
  std::vector<EH> eh(static_cast<std::size_t>(qlen) + 1);
  eh[0] = {0, kMinusInf};
  int j = 1;
  for (; j <= qlen && j <= w; ++j) eh[static_cast<std::size_t>(j)] = {-(gapo + gape * j), kMinusInf};
  for (; j <= qlen; ++j) eh[static_cast<std::size_t>(j)] = {kMinusInf, kMinusInf};  // outside the band
  for (int i = 0; i < tlen; ++i) {  // the target in the outer loop
    std::int32_t f = kMinusInf;
    const std::int8_t* q = &qp[static_cast<std::size_t>(target[i]) * static_cast<std::size_t>(qlen)];
    const int beg = i > w ? i - w : 0;
    const int end = i + w + 1 < qlen ? i + w + 1 : qlen;
    std::int32_t h1 = beg == 0 ? -(gapo + gape * (i + 1)) : kMinusInf;
    std::uint8_t* zi = cigar ? &z[static_cast<std::size_t>(i) * static_cast<std::size_t>(n_col)] : nullptr;
    for (j = beg; j < end; ++j) {
      // eh[j] = {H(i-1,j-1), E(i,j)}, f = F(i,j), h1 = H(i,j-1); M and H kept apart for the traceback
      EH& p = eh[static_cast<std::size_t>(j)];
      std::int32_t m = p.h, e = p.e;
      p.h = h1;
      m += q[j];
      std::uint8_t d = m >= e ? 0 : 1;
      std::int32_t h = m >= e ? m : e;
      d = h >= f ? d : 2;
      h = h >= f ? h : f;
      h1 = h;
      std::int32_t t = m - oe;
      e -= gape;
      d |= e > t ? 1 << 2 : 0;
      e = e > t ? e : t;
      p.e = e;
      t = m - oe;
      f -= gape;
      d |= f > t ? 2 << 4 : 0;
      f = f > t ? f : t;
      if (zi) zi[j - beg] = d;
    }
    eh[static_cast<std::size_t>(end)] = {h1, kMinusInf};
  }
  const int score = eh[static_cast<std::size_t>(qlen)].h;
  if (cigar) {
    int i = tlen - 1, k = (i + w + 1 < qlen ? i + w + 1 : qlen) - 1, which = 0;
    while (i >= 0 && k >= 0) {
      which = z[static_cast<std::size_t>(i) * static_cast<std::size_t>(n_col) + static_cast<std::size_t>(k - (i > w ? i - w : 0))] >>
                  (which << 1) & 3;
      if (which == 0) push_cigar(*cigar, kCigarM, 1), --i, --k;
      else if (which == 1) push_cigar(*cigar, kCigarD, 1), --i;
      else push_cigar(*cigar, kCigarI, 1), --k;
    }
    if (i >= 0) push_cigar(*cigar, kCigarD, static_cast<std::uint32_t>(i + 1));
    if (k >= 0) push_cigar(*cigar, kCigarI, static_cast<std::uint32_t>(k + 1));
    std::reverse(cigar->begin(), cigar->end());
  }
  return score;
}

namespace {

// One pass of bwa's striped Smith-Waterman (ksw_u8 / ksw_i16), emulated lane by lane: the query
// profile is segmented (position lane * slen + segment), the lazy-F loop runs as in the SIMD code,
// the lane arithmetic saturates as the SSE2 instructions do. The results (score, te, qe, the
// second-best bookkeeping) are therefore those of bwa's kernel, padding included.
struct Pass {
  int score = 0, te = -1, qe = -1, score2 = -1, te2 = -1;
};

Pass striped_pass(int qlen, const std::uint8_t* query, int tlen, const std::uint8_t* target, const ScoreMatrix& mat,
                  int o_del, int e_del, int o_ins, int e_ins, bool u8, int minsc, int endsc) {
  const int p = u8 ? 16 : 8;  // values per 128-bit vector
  const int slen = (qlen + p - 1) / p;
  int min_s = 127, max_s = 0;
  for (int a = 0; a < 25; ++a) {
    min_s = std::min<int>(min_s, mat.m[a]);
    max_s = std::max<int>(max_s, mat.m[a]);
  }
  const int shift = u8 ? (256 - static_cast<std::uint8_t>(min_s)) & 0xff : 0;
  const int qmax = max_s;
  // profile[c][segment][lane]
  const std::size_t nv = static_cast<std::size_t>(slen) * static_cast<std::size_t>(p);
  std::vector<int> prof(5 * nv);
  for (int c = 0; c < 5; ++c)
    for (int s = 0; s < slen; ++s)
      for (int lane = 0; lane < p; ++lane) {
        const int k = lane * slen + s;
        prof[static_cast<std::size_t>(c) * nv + static_cast<std::size_t>(s * p + lane)] =
            (k >= qlen ? 0 : mat.m[c * 5 + query[k]]) + shift;
      }
  auto sat = [&](int v) { return u8 ? std::clamp(v, 0, 255) : std::clamp(v, -32768, 32767); };
  auto subs = [&](int a, int b) { return std::max(0, a - b); };  // subs_epu8 / subs_epu16 on non-negative values
  std::vector<int> H0(nv, 0), H1(nv, 0), E(nv, 0), Hmax(nv, 0);
  std::vector<int> f(static_cast<std::size_t>(p)), mx(static_cast<std::size_t>(p)), h(static_cast<std::size_t>(p));
  const int oe_del = o_del + e_del, oe_ins = o_ins + e_ins;
  std::vector<std::uint64_t> b;
  int gmax = 0, te = -1;
  for (int i = 0; i < tlen; ++i) {
    const int* S = &prof[static_cast<std::size_t>(target[i]) * nv];
    std::fill(f.begin(), f.end(), 0);
    std::fill(mx.begin(), mx.end(), 0);
    for (int lane = p - 1; lane >= 1; --lane) h[lane] = H0[static_cast<std::size_t>((slen - 1) * p + lane - 1)];
    h[0] = 0;
    for (int j = 0; j < slen; ++j) {
      for (int lane = 0; lane < p; ++lane) {
        const std::size_t x = static_cast<std::size_t>(j * p + lane);
        int v = u8 ? subs(sat(h[lane] + S[x]), shift) : sat(h[lane] + S[x]);
        int e = E[x];
        v = std::max(v, e);
        v = std::max(v, f[lane]);
        mx[lane] = std::max(mx[lane], v);
        H1[x] = v;
        e = std::max(subs(e, e_del), subs(v, oe_del));
        E[x] = e;
        f[lane] = std::max(subs(f[lane], e_ins), subs(v, oe_ins));
        h[lane] = H0[x];
      }
    }
    for (int k = 0; k < 16; ++k) {  // lazy F
      for (int lane = p - 1; lane >= 1; --lane) f[lane] = f[lane - 1];
      f[0] = 0;
      bool done = false;
      for (int j = 0; j < slen && !done; ++j) {
        bool all_le = true;
        for (int lane = 0; lane < p; ++lane) {
          const std::size_t x = static_cast<std::size_t>(j * p + lane);
          int v = std::max(H1[x], f[lane]);
          H1[x] = v;
          v = subs(v, oe_ins);
          f[lane] = subs(f[lane], e_ins);
          if (f[lane] > v) all_le = false;
        }
        done = all_le;
      }
      if (done) break;
    }
    int imax = 0;
    for (int lane = 0; lane < p; ++lane) imax = std::max(imax, mx[lane]);
    if (imax >= minsc) {
      if (b.empty() || static_cast<std::int32_t>(b.back()) + 1 != i)
        b.push_back(static_cast<std::uint64_t>(imax) << 32 | static_cast<std::uint32_t>(i));
      else if (static_cast<int>(b.back() >> 32) < imax)
        b.back() = static_cast<std::uint64_t>(imax) << 32 | static_cast<std::uint32_t>(i);
    }
    if (imax > gmax) {
      gmax = imax;
      te = i;
      Hmax = H1;
      if ((u8 && gmax + shift >= 255) || gmax >= endsc) break;
    }
    std::swap(H0, H1);
  }
  Pass r;
  r.score = u8 ? (gmax + shift < 255 ? gmax : 255) : gmax;
  r.te = te;
  if (!u8 || r.score != 255) {
    int max = -1;
    for (std::size_t x = 0; x < nv; ++x) {  // memory order: segment-major, lanes within a segment
      const int pos = static_cast<int>(x) / p + static_cast<int>(x) % p * slen;
      if (Hmax[x] > max) max = Hmax[x], r.qe = pos;
      else if (Hmax[x] == max && pos < r.qe) r.qe = pos;
    }
    if (!b.empty()) {
      const int w = (r.score + qmax - 1) / qmax;
      const int low = te - w, high = te + w;
      for (auto v : b) {
        const int e = static_cast<std::int32_t>(v);
        if ((e < low || e > high) && static_cast<int>(v >> 32) > r.score2) r.score2 = static_cast<int>(v >> 32), r.te2 = e;
      }
    }
  }
  return r;
}

}  // namespace

LocalAlignment local_align(int qlen, const std::uint8_t* query, int tlen, const std::uint8_t* target,
                           const ScoreMatrix& mat, int gapo, int gape, bool bytes) {
  const Pass f = striped_pass(qlen, query, tlen, target, mat, gapo, gape, gapo, gape, bytes, 0, 0x10000);
  LocalAlignment r;
  r.score = f.score;
  r.te = f.te;
  r.qe = f.qe;
  r.score2 = f.score2;
  r.te2 = f.te2;
  if (r.qe < 0 || r.te < 0) return r;  // nothing aligned (bwa would read out of bounds; the hit is rejected anyway)
  // the start: the same search on the reversed prefixes, stopping at the first column reaching the score
  std::vector<std::uint8_t> rq(query, query + r.qe + 1), rt(target, target + tlen);
  std::reverse(rq.begin(), rq.end());
  std::reverse(rt.begin(), rt.begin() + r.te + 1);
  const Pass b = striped_pass(r.qe + 1, rq.data(), tlen, rt.data(), mat, gapo, gape, gapo, gape, bytes, 0x10000, r.score);
  if (b.score == r.score) {
    r.tb = r.te - b.te;
    r.qb = r.qe - b.qe;
  }
  return r;
}

}  // namespace evk::barracuda_exact
