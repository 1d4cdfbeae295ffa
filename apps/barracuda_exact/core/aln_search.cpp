#include "core/aln_search.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

#include "core/base_counts.hpp"
#include "evk/parallel.hpp"

namespace evk::barracuda_exact {

int aln_max_diff(int l, double err, double thres) {
  const double elambda = std::exp(-l * err);
  double sum = elambda, y = 1.0;
  std::int32_t x = 1;
  for (int k = 1; k < 1000; ++k) {
    y *= l * err;
    x = static_cast<std::int32_t>(static_cast<std::uint32_t>(x) * static_cast<std::uint32_t>(k));  // wraps as bwa's int
    sum += elambda * y / x;
    if (1.0 - sum < thres) return k;
  }
  return 2;
}

int aln_max_diff(const AlnOptions& opt, int l) {
  return opt.fnr > 0.0f ? aln_max_diff(l, kAvgErr, static_cast<double>(opt.fnr)) : opt.max_diff;
}

std::vector<std::size_t> aln_batch_cuts(const AlnOptions& opt, const std::vector<int>& len, std::size_t per) {
  const std::size_t n = len.size();
  per = std::max<std::size_t>(per, 1);
  std::vector<std::size_t> cuts{0};
  bool same = true;
  int first = -1;
  for (std::size_t b = 0; b < n; b += per) {
    int longest = 0;
    for (std::size_t i = b; i < std::min(n, b + per); ++i) longest = std::max(longest, len[i]);
    const int gapo = std::min(opt.max_gapo, aln_max_diff(opt, longest));
    if (first < 0) first = gapo;
    same = same && gapo == first;
    if (b > 0) cuts.push_back(b);
  }
  if (same) cuts.resize(1);
  cuts.push_back(n);
  return cuts;
}

int trim_len(int trim_qual, const char* qual, int len) {
  if (trim_qual < 1 || qual == nullptr) return len;
  int s = 0, max = 0, max_l = len;
  for (int l = len - 1; l >= kMinTrimLen; --l) {
    s += trim_qual - (static_cast<unsigned char>(qual[l]) - 33);
    if (s < 0) break;
    if (s > max) max = s, max_l = l;
  }
  return max_l;
}

namespace {
// Occurrences of base c in BWT rows [0, k] (bwa's bwt_occ), by the table of core/base_counts.hpp.
inline std::uint64_t occ1(const BwtIndex& idx, std::uint64_t k, int c) {
  if (k == idx.seq_len) return idx.L2[c + 1] - idx.L2[c];
  if (k == ~0ull) return 0;
  k -= (k >= idx.primary);
  const std::uint32_t* p = idx.occ.data() + (k >> 7 << 4);
  std::uint64_t n = static_cast<std::uint64_t>(p[2 * c]) | (static_cast<std::uint64_t>(p[2 * c + 1]) << 32);
  p += 8;
  const unsigned full = static_cast<unsigned>((k & 127) >> 4), r = static_cast<unsigned>(~k & 15);
  std::uint32_t x = 0;
  for (unsigned w = 0; w < full; ++w) x += count4_packed(p[w]);
  x += count4_packed(p[full] & ~((1u << (r << 1)) - 1u));
  if (c == 0) x -= r;  // the masked-off fields read as A
  return n + (x >> (c << 3) & 0xff);
}
// Packed counts of the bases of one block's words before row offset r (0..127) of the block.
inline std::uint32_t block_count(const std::uint32_t* words, unsigned r) {
  const unsigned full = r >> 4, m = ~r & 15;
  std::uint32_t x = 0;
  for (unsigned w = 0; w < full; ++w) x += count4_packed(words[w]);
  return x + count4_packed(words[full] & ~((1u << (m << 1)) - 1u)) - m;
}
// bwa's bwt_2occ4: occ4 at k and at l (k <= l), sharing the block when both fall in one.
inline void occ2_4(const BwtIndex& idx, std::uint64_t k, std::uint64_t l, std::uint64_t ck[4], std::uint64_t cl[4]) {
  const std::uint64_t kk = k - (k >= idx.primary), ll = l - (l >= idx.primary);
  if (kk >> 7 != ll >> 7 || k == ~0ull || l == ~0ull) {
    occ4(idx, k, ck);
    occ4(idx, l, cl);
    return;
  }
  const std::uint32_t* p = idx.occ.data() + (kk >> 7 << 4);
  const std::uint32_t xk = block_count(p + 8, static_cast<unsigned>(kk & 127)),
                      xl = block_count(p + 8, static_cast<unsigned>(ll & 127));
  for (int c = 0; c < 4; ++c) {
    const std::uint64_t n = static_cast<std::uint64_t>(p[2 * c]) | (static_cast<std::uint64_t>(p[2 * c + 1]) << 32);
    ck[c] = n + (xk >> (c << 3) & 0xff);
    cl[c] = n + (xl >> (c << 3) & 0xff);
  }
}
// bwa's bwt_2occ for one base.
inline void occ2_1(const BwtIndex& idx, std::uint64_t k, std::uint64_t l, int c, std::uint64_t& ok, std::uint64_t& ol) {
  const std::uint64_t kk = k - (k >= idx.primary), ll = l - (l >= idx.primary);
  if (kk >> 7 != ll >> 7 || k == ~0ull || l == ~0ull || l == idx.seq_len) {
    ok = occ1(idx, k, c);
    ol = occ1(idx, l, c);
    return;
  }
  const std::uint32_t* p = idx.occ.data() + (kk >> 7 << 4);
  const std::uint64_t n = static_cast<std::uint64_t>(p[2 * c]) | (static_cast<std::uint64_t>(p[2 * c + 1]) << 32);
  ok = n + (block_count(p + 8, static_cast<unsigned>(kk & 127)) >> (c << 3) & 0xff);
  ol = n + (block_count(p + 8, static_cast<unsigned>(ll & 127)) >> (c << 3) & 0xff);
}
enum State : std::uint32_t { kMatch = 0, kIns = 1, kDel = 2 };

int int_log2(std::uint32_t v) {
  int c = 0;
  if (v & 0xffff0000u) { v >>= 16; c |= 16; }
  if (v & 0xff00) { v >>= 8; c |= 8; }
  if (v & 0xf0) { v >>= 4; c |= 4; }
  if (v & 0xc) { v >>= 2; c |= 2; }
  if (v & 0x2) c |= 1;
  return c;
}
}  // namespace

void occ4(const BwtIndex& idx, std::uint64_t k, std::uint64_t cnt[4]) {
  if (k == ~0ull) {
    cnt[0] = cnt[1] = cnt[2] = cnt[3] = 0;
    return;
  }
  k -= (k >= idx.primary);
  const std::uint32_t* p = idx.occ.data() + (k >> 7 << 4);
  for (int c = 0; c < 4; ++c) cnt[c] = static_cast<std::uint64_t>(p[2 * c]) | (static_cast<std::uint64_t>(p[2 * c + 1]) << 32);
  p += 8;
  const unsigned full = static_cast<unsigned>((k & 127) >> 4), r = static_cast<unsigned>(~k & 15);
  std::uint32_t x = 0;
  for (unsigned w = 0; w < full; ++w) x += count4_packed(p[w]);
  x += count4_packed(p[full] & ~((1u << (r << 1)) - 1u)) - r;  // the masked-off fields read as A
  for (int c = 0; c < 4; ++c) cnt[c] += x >> (c << 3) & 0xff;
}

AlnSearcher::AlnSearcher(const BwtIndex& idx, const AlnOptions& opt) : idx_(idx), opt_(opt) {}

void AlnSearcher::cal_width(const std::uint8_t* str, int len, Width* w) const {
  std::uint64_t k = 0, l = idx_.seq_len;
  int bid = 0;
  for (int i = 0; i < len; ++i) {
    const int c = str[i];
    if (c < 4) {
      std::uint64_t ok = 0, ol = 0;
      occ2_1(idx_, k - 1, l, c, ok, ol);
      k = idx_.L2[c] + ok + 1;
      l = idx_.L2[c] + ol;
    }
    if (k > l || c > 3) {  // restart
      k = 0;
      l = idx_.seq_len;
      ++bid;
    }
    w[i].w = l - k + 1;
    w[i].bid = bid;
  }
  w[len].w = 0;
  w[len].bid = ++bid;
}

void AlnSearcher::push(int i, std::uint64_t k, std::uint64_t l, std::uint32_t n_mm, std::uint32_t n_gapo,
                       std::uint32_t n_gape, std::uint32_t n_ins, std::uint32_t n_del, std::uint32_t state, bool is_diff) {
  const int score = score_of(static_cast<int>(n_mm), static_cast<int>(n_gapo), static_cast<int>(n_gape));
  if (static_cast<std::size_t>(score) >= buckets_.size()) buckets_.resize(static_cast<std::size_t>(score) + 1);
  Entry e;
  e.score = score;
  e.i = i;
  e.k = k;
  e.l = l;
  e.n_mm = n_mm;
  e.n_gapo = n_gapo;
  e.n_gape = n_gape;
  e.n_ins = n_ins;
  e.n_del = n_del;
  e.state = state;
  e.last_diff_pos = is_diff ? i : 0;
  buckets_[static_cast<std::size_t>(score)].push_back(e);
  ++n_entries_;
  if (best_ > score) best_ = score;
  if (score <= dead_above_) {  // the kernel stores it
    if (static_cast<std::size_t>(score) >= stored_by_score_.size()) stored_by_score_.resize(static_cast<std::size_t>(score) + 1, 0);
    ++stored_by_score_[static_cast<std::size_t>(score)];
    if (++stored_ > peak_stored_) peak_stored_ = stored_;
    if (score > max_stored_score_) max_stored_score_ = score;
  }
}

AlnSearcher::Entry AlnSearcher::pop() {  // the last entry of the lowest non-empty score
  auto& q = buckets_[static_cast<std::size_t>(best_)];
  Entry e = q.back();
  q.pop_back();
  if (static_cast<std::size_t>(e.score) < stored_by_score_.size() && stored_by_score_[static_cast<std::size_t>(e.score)]) {
    --stored_by_score_[static_cast<std::size_t>(e.score)];
    --stored_;
  }
  --n_entries_;
  if (q.empty() && n_entries_) {
    std::size_t i = static_cast<std::size_t>(best_) + 1;
    while (i < buckets_.size() && buckets_[i].empty()) ++i;
    best_ = static_cast<int>(i);
  } else if (n_entries_ == 0) {
    best_ = INT_MAX;
  }
  return e;
}

bool AlnSearcher::match_rest(const std::uint8_t* seq, int i, std::uint64_t& k, std::uint64_t& l) const {
  for (int j = i - 1; j >= 0; --j) {
    const int c = seq[j];
    if (c > 3) return false;
    std::uint64_t ok = 0, ol = 0;
    occ2_1(idx_, k - 1, l, c, ok, ol);
    k = idx_.L2[c] + ok + 1;
    l = idx_.L2[c] + ol;
    if (k > l) return false;
  }
  return true;
}

bool AlnSearcher::take_hit(const Entry& e, std::uint64_t k, std::uint64_t l, Read& r, std::vector<Aln>& out) {
  const int score = score_of(static_cast<int>(e.n_mm), static_cast<int>(e.n_gapo), static_cast<int>(e.n_gape));
  if (out.size() == r.first) {
    r.best_score = score;
    int best_diff = static_cast<int>(e.n_mm + e.n_gapo);
    if (r.gape) best_diff += static_cast<int>(e.n_gape);
    if (!opt_.non_stop) {
      r.max_diff = best_diff + 1 > r.opt_max_diff ? r.opt_max_diff : best_diff + 1;  // top2
      dead_above_ = r.best_score + opt_.s_mm;  // the kernel releases what it holds above
      for (std::size_t t = static_cast<std::size_t>(dead_above_) + 1; t < stored_by_score_.size(); ++t) {
        stored_ -= stored_by_score_[t];
        stored_by_score_[t] = 0;
      }
    }
  }
  if (score == r.best_score) r.best_cnt += l - k + 1;
  else if (r.best_cnt > static_cast<std::uint64_t>(opt_.max_top2)) return false;  // top2b
  if (e.n_gapo) {  // the same interval again (a gap in a tandem repeat)
    for (std::size_t j = r.first; j < out.size(); ++j)
      if (out[j].k == k && out[j].l == l) return true;
  }
  // shadow the found interval in the widths of the part already searched differently
  const std::uint64_t x = l - k + 1;
  int jj = 0;
  for (int t = 0; t < e.last_diff_pos; ++t) {
    if (r.width[t].w > x) {
      r.width[t].w -= x;
    } else if (r.width[t].w == x) {
      r.width[t].bid = 1;
      r.width[t].w = idx_.seq_len - static_cast<std::uint64_t>(++jj);
    }
  }
  Aln a;
  a.n_mm = e.n_mm;
  a.n_gapo = e.n_gapo;
  a.n_gape = e.n_gape;
  a.n_ins = e.n_ins;
  a.n_del = e.n_del;
  a.k = k;
  a.l = l;
  a.score = score;
  out.push_back(a);
  return true;
}

void AlnSearcher::expand(const Entry& e, int m, int m_seed, const Read& r) {
  const std::uint8_t* seq = r.seq;
  const Width* width = r.width;
  const Width* seed_w = r.seed_w;
  const int len = r.len;
  std::uint64_t k = e.k, l = e.l;
  const int i = e.i - 1;
  std::uint64_t cnt_k[4], cnt_l[4];
  occ2_4(idx_, k - 1, l, cnt_k, cnt_l);
  const std::uint64_t occ = l - k + 1;
  bool allow_diff = true, allow_m = true;
  if (i > 0) {
    const std::int64_t ii = static_cast<std::int64_t>(i) - (static_cast<std::int64_t>(len) - r.seed_len);
    if (width[i - 1].bid > m - 1) allow_diff = false;
    else if (width[i - 1].bid == m - 1 && width[i].bid == m - 1 && width[i - 1].w == width[i].w) allow_m = false;
    if (r.use_seed && ii > 0) {
      if (seed_w[ii - 1].bid > m_seed - 1) allow_diff = false;
      else if (seed_w[ii - 1].bid == m_seed - 1 && seed_w[ii].bid == m_seed - 1 && seed_w[ii - 1].w == seed_w[ii].w)
        allow_m = false;
    }
  }
  // indels
  const int tmp = opt_.log_gap ? int_log2(e.n_gape + e.n_gapo) / 2 + 1 : static_cast<int>(e.n_gapo + e.n_gape);
  if (allow_diff && i >= opt_.indel_end_skip + tmp && len - i >= opt_.indel_end_skip + tmp) {
    if (e.state == kMatch) {
      if (static_cast<int>(e.n_gapo) < r.max_gapo) {
        push(i, k, l, e.n_mm, e.n_gapo + 1, e.n_gape, e.n_ins + 1, e.n_del, kIns, true);
        for (int c = 0; c < 4; ++c) {
          const std::uint64_t kk = idx_.L2[c] + cnt_k[c] + 1, ll = idx_.L2[c] + cnt_l[c];
          if (kk <= ll) push(i + 1, kk, ll, e.n_mm, e.n_gapo + 1, e.n_gape, e.n_ins, e.n_del + 1, kDel, true);
        }
      }
    } else if (e.state == kIns) {
      if (static_cast<int>(e.n_gape) < opt_.max_gape)
        push(i, k, l, e.n_mm, e.n_gapo, e.n_gape + 1, e.n_ins + 1, e.n_del, kIns, true);
    } else if (e.state == kDel) {
      if (static_cast<int>(e.n_gape) < opt_.max_gape &&
          (static_cast<int>(e.n_gape + e.n_gapo) < r.max_diff || occ < static_cast<std::uint64_t>(opt_.max_del_occ))) {
        for (int c = 0; c < 4; ++c) {
          const std::uint64_t kk = idx_.L2[c] + cnt_k[c] + 1, ll = idx_.L2[c] + cnt_l[c];
          if (kk <= ll) push(i + 1, kk, ll, e.n_mm, e.n_gapo, e.n_gape + 1, e.n_ins, e.n_del + 1, kDel, true);
        }
      }
    }
  }
  // mismatches
  if (allow_diff && allow_m) {
    for (int j = 1; j <= 4; ++j) {
      const int c = (seq[i] + j) & 3;
      const bool is_mm = j != 4 || seq[i] > 3;
      const std::uint64_t kk = idx_.L2[c] + cnt_k[c] + 1, ll = idx_.L2[c] + cnt_l[c];
      if (kk <= ll) push(i, kk, ll, e.n_mm + is_mm, e.n_gapo, e.n_gape, e.n_ins, e.n_del, kMatch, is_mm);
    }
  } else if (seq[i] < 4) {  // exact match only
    const int c = seq[i];
    const std::uint64_t kk = idx_.L2[c] + cnt_k[c] + 1, ll = idx_.L2[c] + cnt_l[c];
    if (kk <= ll) push(i, kk, ll, e.n_mm, e.n_gapo, e.n_gape, e.n_ins, e.n_del, kMatch, false);
  }
}

void AlnSearcher::search(const std::uint8_t* codes, std::uint32_t len32, std::vector<Aln>& out, AlnSearchStats* stats) {
  const int len = static_cast<int>(len32);
  Read r;
  r.first = out.size();
  r.len = len;
  // bwa's layout: the read reversed (widths are computed on it), then complemented (the search)
  rev_.assign(codes, codes + len);
  std::reverse(rev_.begin(), rev_.end());
  width_.resize(static_cast<std::size_t>(len) + 1);
  cal_width(rev_.data(), len, width_.data());
  r.opt_max_diff = aln_max_diff(opt_, len);
  r.use_seed = len > opt_.seed_len;
  r.seed_len = opt_.seed_len < len ? opt_.seed_len : INT_MAX;
  if (r.use_seed) {
    seed_width_.resize(static_cast<std::size_t>(opt_.seed_len) + 1);
    cal_width(rev_.data() + (len - opt_.seed_len), opt_.seed_len, seed_width_.data());
  }
  seq_.resize(static_cast<std::size_t>(len));
  for (int j = 0; j < len; ++j) seq_[j] = rev_[j] > 3 ? 4 : static_cast<std::uint8_t>(3 - rev_[j]);
  r.seq = seq_.data();
  r.width = width_.data();
  r.seed_w = seed_width_.data();
  r.gape = opt_.gape_counts;
  r.max_gapo = batch_max_gapo_ >= 0 ? batch_max_gapo_ : std::min(opt_.max_gapo, r.opt_max_diff);
  r.best_score = score_of(r.opt_max_diff + 1, r.max_gapo + 1, opt_.max_gape + 1);
  r.max_diff = r.opt_max_diff;
  std::uint64_t max_entries = 0, pops = 0;
  bool queue_limit = false;
  int n_n = 0;
  for (int j = 0; j < len; ++j) n_n += r.seq[j] > 3;
  if (n_n > r.max_diff) {
    if (stats) *stats = AlnSearchStats{};
    return;
  }
  // (bookkeeping of the kernel below: stored_ counts what it would hold)
  for (auto& b : buckets_) b.clear();
  std::fill(stored_by_score_.begin(), stored_by_score_.end(), 0);
  stored_ = peak_stored_ = 0;
  dead_above_ = INT_MAX;
  max_stored_score_ = 0;
  n_entries_ = 0;
  best_ = INT_MAX;
  push(len, 0, idx_.seq_len, 0, 0, 0, 0, 0, kMatch, false);

  while (n_entries_) {
    if (max_entries < n_entries_) max_entries = n_entries_;
    if (n_entries_ > static_cast<std::size_t>(opt_.max_entries)) {
      queue_limit = true;
      break;
    }
    const Entry e = pop();
    ++pops;
    std::uint64_t k = e.k, l = e.l;
    const int i = e.i;
    if (!opt_.non_stop && e.score > r.best_score + opt_.s_mm) break;
    int m = r.max_diff - static_cast<int>(e.n_mm + e.n_gapo);
    if (r.gape) m -= static_cast<int>(e.n_gape);
    if (m < 0) continue;
    int m_seed = 0;
    if (r.use_seed) {
      m_seed = opt_.max_seed_diff - static_cast<int>(e.n_mm + e.n_gapo);
      if (r.gape) m_seed -= static_cast<int>(e.n_gape);
    }
    if (i > 0 && m < r.width[i - 1].bid) continue;
    bool hit = i == 0;
    if (!hit && m == 0 && (e.state == kMatch || r.gape || static_cast<int>(e.n_gape) == opt_.max_gape)) {
      // no difference left: the rest must match exactly
      if (!match_rest(r.seq, i, k, l)) continue;
      hit = true;
    }
    if (hit) {
      if (!take_hit(e, k, l, r, out)) break;
      continue;
    }
    expand(e, m, m_seed, r);
  }
  if (stats) {
    stats->max_entries = max_entries;
    stats->pops = pops;
    stats->stopped_by_queue_limit = queue_limit;
    stats->kernel_peak_stored = peak_stored_;
    stats->kernel_max_stored_score = max_stored_score_;
    stats->n_aln = static_cast<std::uint32_t>(out.size() - r.first);
  }
}

AlnBatch aln_search_batch(const BwtIndex& idx, const ReadCodes& reads, const AlnOptions& opt, int threads) {
  const std::size_t n = reads.size();
  std::vector<std::vector<Aln>> per(n);
  std::uint32_t max_len = 0;
  for (auto l : reads.len) max_len = std::max(max_len, l);
  const int batch_gapo = std::min(opt.max_gapo, aln_max_diff(opt, static_cast<int>(max_len)));
  const std::size_t t = std::min<std::size_t>(static_cast<std::size_t>(threads > 0 ? threads : default_threads()),
                                              std::max<std::size_t>(n / 64, 1));
  std::atomic<std::size_t> next{0};
  constexpr std::size_t kChunk = 64;  // reads differ a lot in cost: hand them out in small chunks
  auto work = [&] {
    AlnSearcher s(idx, opt);
    s.set_batch_max_gapo(batch_gapo);
    for (;;) {
      const std::size_t b = next.fetch_add(kChunk);
      if (b >= n) break;
      for (std::size_t i = b; i < std::min(n, b + kChunk); ++i)
        s.search(reads.codes.data() + reads.offset[i], reads.len[i], per[i]);
    }
  };
  if (t <= 1) {
    work();
  } else {
    std::exception_ptr err;
    std::mutex mu;
    std::vector<std::thread> pool;
    for (std::size_t i = 0; i < t; ++i)
      pool.emplace_back([&] {
        try {
          work();
        } catch (...) {
          std::lock_guard<std::mutex> g(mu);
          if (!err) err = std::current_exception();
        }
      });
    for (auto& th : pool) th.join();
    if (err) std::rethrow_exception(err);
  }
  AlnBatch out;
  std::size_t total = 0;
  for (const auto& v : per) total += v.size();
  out.alns.reserve(total);
  out.offset.reserve(n + 1);
  for (const auto& v : per) {
    out.alns.insert(out.alns.end(), v.begin(), v.end());
    out.offset.push_back(static_cast<std::uint32_t>(out.alns.size()));
  }
  return out;
}

}  // namespace evk::barracuda_exact
