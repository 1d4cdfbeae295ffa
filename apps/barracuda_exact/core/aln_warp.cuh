// bwa aln's inexact search with one warp per read: the kernel of the later GPU passes
// (core/aln_warp.cu), for the reads whose search outgrows the first pass's per-thread stack. Same
// search, same stopping rules, same hits in the same order as the first pass
// (kernels/original/barracuda_exact/inexact.cu) and the CPU (core/aln_search.cpp); only who does the
// work differs. Plain C++ apart from the CUDA built-ins, so that tests compile it for the host and
// run the 32 lanes one after another (tests/barracuda_exact/aln_warp_host.cpp).
//
// Why a warp can share one read's search. bwa pops the lowest non-empty score bucket, last in first
// out. Popping an entry of bucket b pushes its differences into higher buckets and at most one entry
// into b: the exact continuation (the same counts, pushed last), which is popped next. So bucket b
// is worked through as a sequence of chains (an entry and its exact continuations), one after the
// other in the bucket's last-in-first-out order. What a chain costs (the occurrence look-ups, the
// exact match of a read's rest) depends only on its entry and on the search state (the maximum
// differences and the widths), which changes only at a hit.
//
// So each lane takes the next chain of the bucket and walks it ahead, writing one record a step (the
// entry; skip, hit or expand; the occurrence counts), up to WARP_STEPS records. The warp then replays
// the records in bwa's order (core/aln_warp_replay.cuh): the stack counts and the queue limit (-m),
// the pushes into higher buckets, the hits and the stopping rules, exactly as the one-thread search;
// the runs of records between hits by all lanes at once (sums over the lanes), a hit by lane 0. A hit
// that changes the state (the first hit, or a new interval that shadows the widths) makes the lanes
// after it start their chains again. The stack lives in chunks of 32 entries, so a bucket's next 32
// entries are handed to the lanes by one look-up each.
//
// Limits: a read answers exactly when the first pass's bookkeeping for it (stored entries, its
// `dead_above` rule, ALN_CAP, MAX_BUCKETS) stays within stack_cap entries and aln_cap intervals
// (kernel_answers in core/aln_search.hpp); else it is handed back (n_out = 0xffffffff).
// No include guard: tests include it inside two namespaces, once per WARP_STEPS.
#include "core/aln_warp_stack.cuh"

// v[c] for a c known only at run time, by selects: an array indexed so would live in local memory.
WHD inline wu64 w_sel4(const wu64 v[4], wu32 c) { return c == 0 ? v[0] : c == 1 ? v[1] : c == 2 ? v[2] : v[3]; }

// One step of a lane's chain: entry e's record (what the one-thread search does with it, as far as
// that depends on e and the state); 1 and its exact continuation in `next` when the chain goes on.
WHD inline int w_step(const wu32* bwt, const wbwt& bc, const wparams& p, const wstate& w, const wentry& e, uint4* rec,
                      wentry& next) {
  w_put(rec, e);  // rec[1].w: the kind (WK_SKIP until known)
  int m = w.max_diff - static_cast<int>(e.n_mm + e.n_gapo);
  if (p.gape_counts) m -= static_cast<int>(e.n_gape);
  if (m < 0 || (e.i > 0 && m < static_cast<int>(w.wb[e.i - 1]))) return 0;
  wu64 k = e.k, l = e.l;
  int hit = e.i == 0;
  if (!hit && m == 0 && (e.state == 0 || p.gape_counts || static_cast<int>(e.n_gape) == p.max_gape)) {
    for (int j = e.i - 1; j >= 0; j--) {  // the rest exactly
      const wu32 c = w.seq[j];
      if (c > 3) return 0;
      const wu64 a = w_occ1(bwt, bc, k - 1, c), b = w_occ1(bwt, bc, l, c);
      k = bc.L2[c] + a + 1;
      l = bc.L2[c] + b;
      if (k > l) return 0;
    }
    hit = 1;
  }
  if (hit) {
    rec[1].w = WK_HIT;
    rec[2] = w_pair(k, l);
    return 0;
  }
  rec[1].w = WK_EXPAND;
  wu64 ck[4], cl[4];
  w_occ4(bwt, bc, e.k - 1, ck);
  w_occ4(bwt, bc, e.l, cl);
  rec[2] = w_pair(ck[0], ck[1]);
  rec[3] = w_pair(ck[2], ck[3]);
  rec[4] = w_pair(cl[0], cl[1]);
  rec[5] = w_pair(cl[2], cl[3]);
  const int i = e.i - 1;
  const wu32 c = w.seq[i];
  if (c > 3) return 0;
  const wu64 kk = bc.L2[c] + w_sel4(ck, c) + 1, ll = bc.L2[c] + w_sel4(cl, c);
  if (kk > ll) return 0;
  next = e;
  next.k = kk;
  next.l = ll;
  next.i = i;
  next.last_diff = 0;
  next.state = 0;
  return 1;
}

// A hit popped in order: bwa's bookkeeping and stopping rules. 0, 1 (the state changed), 2 (ended).
WHD inline int w_hit(wstate& w, const wmem& m, const wparams& p, const wbwt& bc, wu64* out, int aln_cap, const wentry& e,
                     int score, wu64 k, wu64 l) {
  int changed = 0;
  if (w.n_aln == 0) {
    w.best_score = score;
    int best_diff = static_cast<int>(e.n_mm + e.n_gapo);
    if (p.gape_counts) best_diff += static_cast<int>(e.n_gape);
    if (!p.non_stop) {
      w.max_diff = best_diff + 1 > w.opt_max_diff ? w.opt_max_diff : best_diff + 1;
      w.dead_above = w.best_score + p.s_mm;
      w_release_above(w, m, w.dead_above);
      changed = 1;
    }
  }
  if (score == w.best_score) w.best_cnt += l - k + 1;
  else if (w.best_cnt > static_cast<wu64>(p.max_top2)) return w_finish(w, w.n_aln);
  if (e.n_gapo) {
    for (wu32 j = 0; j < w.n_aln; j++)
      if (out[3 * j] == k && out[3 * j + 1] == l) return changed;
  }
  if (w.n_aln == static_cast<wu32>(aln_cap)) return w_finish(w, WHANDED_BACK);
  const wu64 x = l - k + 1;
  wu64 jj = 0;
  for (int t = 0; t < e.last_diff; t++) {  // shadow the interval found in the widths
    if (w.ww[t] > x) {
      w.ww[t] -= x;
    } else if (w.ww[t] == x) {
      w.wb[t] = 1;
      w.ww[t] = bc.seq_len - (++jj);
    }
  }
  const wu32 n_del = e.n_gapo + e.n_gape - e.n_ins;
  wu64* o = out + 3 * static_cast<wu64>(w.n_aln);
  o[0] = k;
  o[1] = l;
  o[2] = static_cast<wu64>(e.n_mm) | static_cast<wu64>(e.n_gapo) << 8 | static_cast<wu64>(e.n_gape) << 16 |
         static_cast<wu64>(e.n_ins) << 24 | static_cast<wu64>(n_del) << 34 | static_cast<wu64>(score) << 44;
  w.n_aln++;
  return 1;
}

WHD inline int w_log2(wu32 v) {
  int c = 0;
  while (v >>= 1) c++;
  return c;
}

// What popping expanded entry e does, as far as it depends on e, its record and the search state
// (constant between hits): bwa's candidate pushes in bwa's order, each to f(valid, i, k, l, n_mm,
// n_gapo, n_gape, n_ins, state), the exact continuation (held by its lane) to f.held(). Every
// candidate is offered, valid or not, so that the lanes of a warp stay together (no divergent
// branches, no arrays indexed at run time). The serial replay stores the valid ones (w_expand); the
// parallel one counts them, then writes them where its scan put them.
template <class F>
WHD inline void w_plan(const wstate& w, const wmem& mem, const wparams& p, const wbwt& bc, const wentry& e, const uint4* rec,
                       F& f) {
  int mm = w.max_diff - static_cast<int>(e.n_mm + e.n_gapo);
  if (p.gape_counts) mm -= static_cast<int>(e.n_gape);
  int m_seed = 0;
  if (w.use_seed) {
    m_seed = p.max_seed_diff - static_cast<int>(e.n_mm + e.n_gapo);
    if (p.gape_counts) m_seed -= static_cast<int>(e.n_gape);
  }
  const int i = e.i - 1;
  const wu64 occ = e.l - e.k + 1;
  int allow_diff = 1, allow_m = 1;
  if (i > 0) {
    const long long ii = static_cast<long long>(i) - (static_cast<long long>(w.len) - w.seed_len);
    if (static_cast<int>(w.wb[i - 1]) > mm - 1) allow_diff = 0;
    else if (static_cast<int>(w.wb[i - 1]) == mm - 1 && static_cast<int>(w.wb[i]) == mm - 1 && w.ww[i - 1] == w.ww[i])
      allow_m = 0;
    if (w.use_seed && ii > 0) {
      const int sb0 = mem.sb[ii - 1];
      if (sb0 > m_seed - 1) allow_diff = 0;
      else if (sb0 == m_seed - 1 && static_cast<int>(mem.sb[ii]) == m_seed - 1 && mem.sw[ii - 1] == mem.sw[ii])
        allow_m = 0;
    }
  }
  wu64 kk[4], ll[4];  // the interval after each base
  {
    const uint4 r2 = rec[2], r3 = rec[3], r4 = rec[4], r5 = rec[5];
    kk[0] = bc.L2[0] + w_lo(r2) + 1;
    kk[1] = bc.L2[1] + w_hi(r2) + 1;
    kk[2] = bc.L2[2] + w_lo(r3) + 1;
    kk[3] = bc.L2[3] + w_hi(r3) + 1;
    ll[0] = bc.L2[0] + w_lo(r4);
    ll[1] = bc.L2[1] + w_hi(r4);
    ll[2] = bc.L2[2] + w_lo(r5);
    ll[3] = bc.L2[3] + w_hi(r5);
  }
  const int tmp = p.log_gap ? w_log2(e.n_gape + e.n_gapo) / 2 + 1 : static_cast<int>(e.n_gapo + e.n_gape);
  const bool gap_ok = allow_diff && i >= p.indel_end_skip + tmp && w.len - i >= p.indel_end_skip + tmp;
  const bool open = e.state == 0 && static_cast<int>(e.n_gapo) < p.max_gapo;  // state 0: a gap opens
  const bool ext = static_cast<int>(e.n_gape) < p.max_gape;                   // else it extends
  const wu32 go = e.state == 0 ? 1u : 0u, ge = 1u - go;
  // an insertion (opened in state 0, extended in state 1), then the deletions (opened in state 0,
  // extended in state 2 while few or narrow)
  f(gap_ok && (open || (e.state == 1 && ext)), i, e.k, e.l, e.n_mm, e.n_gapo + go, e.n_gape + ge, e.n_ins + 1, 1u);
  const bool del = gap_ok && (open || (e.state == 2 && ext &&
                                       (static_cast<int>(e.n_gape + e.n_gapo) < w.max_diff || occ < static_cast<wu64>(p.max_del_occ))));
WUNROLL
  for (int c = 0; c < 4; c++) f(del && kk[c] <= ll[c], i + 1, kk[c], ll[c], e.n_mm, e.n_gapo + go, e.n_gape + ge, e.n_ins, 2u);
  // the mismatches: the bases after the read's, then (when the read has N there) base 0
  const wu32 s = w.seq[i];
  const bool mm_ok = allow_diff && allow_m;
WUNROLL
  for (wu32 j = 1; j <= 4; j++) {
    const wu32 c = (s + j) & 3;
    const wu64 a = w_sel4(kk, c), b = w_sel4(ll, c);
    f(mm_ok && (j != 4 || s > 3) && a <= b, i, a, b, e.n_mm + 1, e.n_gapo, e.n_gape, e.n_ins, 0u);
  }
  if (s < 4 && w_sel4(kk, s) <= w_sel4(ll, s)) f.held();  // the exact continuation
}

struct wpush_serial {  // bwa's pushes one after another into the bucket lists
  wstate& w;
  const wmem& m;
  const wparams& p;
  int over;
  WHD void operator()(bool v, int i, wu64 k, wu64 l, wu32 n_mm, wu32 n_gapo, wu32 n_gape, wu32 n_ins, wu32 state) {
    if (v) over |= w_push(w, m, p, i, k, l, n_mm, n_gapo, n_gape, n_ins, state, 1);
  }
  WHD void held() { over |= w_push_held(w); }
};

// An expanded entry popped in order: its pushes (gaps, mismatches; the exact one held by its lane).
WHD inline int w_expand(wstate& w, const wmem& m, const wparams& p, const wbwt& bc, const wentry& e, const uint4* rec) {
  wpush_serial s{w, m, p, 0};
  w_plan(w, m, p, bc, e, rec, s);
  return s.over ? w_finish(w, WHANDED_BACK) : 0;
}

// One record popped in bwa's order: the loop's checks, then skip, hit or expand.
WHD inline int w_replay(wstate& w, const wmem& m, const wparams& p, const wbwt& bc, wu64* out, int aln_cap,
                        const uint4* rec) {
  if (w.n_entries > static_cast<wu64>(p.max_entries)) return w_finish(w, w.n_aln);
  w.stored--;
  w.n_entries--;
  const wentry e = w_get(rec);
  const int score = w_score(p, e.n_mm, e.n_gapo, e.n_gape);
  if (!p.non_stop && score > w.best_score + p.s_mm) return w_finish(w, w.n_aln);
  const wu32 kind = rec[1].w;
  if (kind == WK_SKIP) return 0;
  if (kind == WK_HIT) return w_hit(w, m, p, bc, out, aln_cap, e, score, w_lo(rec[2]), w_hi(rec[2]));
  return w_expand(w, m, p, bc, e, rec);
}

// Lane 0: how many of the bucket's top entries go to the free lanes at the queue's end (w.r_take,
// from queue place w.r_first; the lanes take them in w_walk), the chunks they lie in (at most two:
// the top one, w.r_h0, and the one below, w.r_h1), the top chunk freed when they empty it (its
// entries are read before any push); the next bucket when this one is done; the end of the search
// when no entry is stored. With a penalty of 0 a chain pushes into its own bucket, whose next entry
// bwa pops is then the last pushed: one chain at a time.
WHD inline void w_refill(wstate& w, const wmem& m, const wparams& p) {
  const int most = p.s_mm > 0 && p.s_gapo > 0 && p.s_gape > 0 ? 32 : 1;
  w.r_take = 0;
  if (w.n_active == 0 && w.size[w.best] == 0) {
    int b = w.best + 1;
    while (b < WMAX_BUCKETS && w.size[b] == 0) b++;
    if (b >= WMAX_BUCKETS) {
      w_finish(w, w.n_aln);
      return;
    }
    w.best = b;
  }
  const int b = w.best;
  const wu32 size = w.size[b], room = static_cast<wu32>(most - w.n_active);
  const wu32 take = size < room ? size : room;
  if (take == 0) return;
  const wu32 h0 = w.head[b], top_lo = (size - 1) & ~31u, left = size - take;
  w.r_first = w.n_active;
  w.r_take = static_cast<int>(take);
  w.r_top = size;
  w.r_h0 = h0;
  w.r_h1 = left < top_lo ? m.link[h0] : WNIL;
  if (left <= top_lo) {  // the top chunk is empty: free
    w.head[b] = m.link[h0];
    m.link[h0] = w.free_head;
    w.free_head = h0;
  }
  w.size[b] = left;
  w.n_active += static_cast<int>(take);
}

// A lane given an entry by w_refill: its place in the pool, a fresh chain.
WHD inline void w_take(wstate& w, int lane) {
  const int q = ((lane - w.cur) & 31) - w.r_first;
  if (q < 0 || q >= w.r_take) return;
  wlane& L = w.lane[lane];
  const wu32 at = w.r_top - 1 - static_cast<wu32>(q);
  L.slot = (at >= ((w.r_top - 1) & ~31u) ? w.r_h0 : w.r_h1) * 32 + (at & 31);
  L.st = WL_FRESH;
  L.fin = L.hit = L.n_buf = L.n_used = 0;
}

// Each lane: its chain's next steps, up to WARP_STEPS records.
WHD inline void w_walk(wstate& w, const wmem& m, const wu32* bwt, const wbwt& bc, const wparams& p, int lane) {
  w_take(w, lane);
  wlane& L = w.lane[lane];
  if (L.st == WL_FRESH) {
    const uint4* at = m.pool + static_cast<wu64>(L.slot) * 2;
    m.start[2 * lane] = at[0];
    m.start[2 * lane + 1] = at[1];
    L.cur = w_get(at);
    L.st = WL_ACTIVE;
  }
  while (L.st == WL_ACTIVE && !L.fin && L.n_buf < WARP_STEPS) {
    wentry next;
    const int more = w_step(bwt, bc, p, w, L.cur, w_rec(m, lane, L.n_buf), next);
    L.n_buf++;
    if (more) {
      L.cur = next;
    } else {
      L.fin = 1;
      L.hit = w_rec(m, lane, L.n_buf - 1)[1].w == WK_HIT;
    }
  }
}

// Lane 0: the read's limits; too long: handed back.
WHD inline void w_begin(wstate& w, const wparams& p, const int* max_diff, const wu32* seq_lens, wu32 r, wu64 cap) {
  w.read = r;
  w.done = 0;
  w.len = static_cast<int>(seq_lens[r]);
  if (w.len > WMAX_LEN) {
    w_finish(w, WHANDED_BACK);
    return;
  }
  w.cap = static_cast<wu32>(cap);
  w.use_seed = w.len > p.seed_len;
  w.seed_len = p.seed_len < w.len ? p.seed_len : 0x7fffffff;
  w.opt_max_diff = w.max_diff = max_diff[w.len];
}

// Lane 0, after the read and its widths: N's over the limit end it; else the root entry.
WHD inline void w_start(wstate& w, const wmem& m, const wparams& p, const wbwt& bc) {
  int n_n = 0;
  for (int j = 0; j < w.len; j++) n_n += w.seq[j] > 3;
  if (n_n > w.max_diff) {
    w_finish(w, 0);
    return;
  }
  w.best_score = (w.opt_max_diff + 1) * p.s_mm + (p.max_gapo + 1) * p.s_gapo + (p.max_gape + 1) * p.s_gape;
  w.best_cnt = 0;
  w.n_aln = 0;
  for (int b = 0; b < WMAX_BUCKETS; b++) {
    w.head[b] = WNIL;
    w.size[b] = 0;
  }
  w.free_head = WNIL;
  w.bump = 0;
  w.stored = 0;
  w.n_entries = 0;
  w.best = 0;
  w.dead_above = 0x7fffffff;
  w.cur = 0;
  w.n_active = 0;
  for (int q = 0; q < 32; q++) w.lane[q].st = WL_FREE;
  if (w_push(w, m, p, w.len, 0, bc.seq_len, 0, 0, 0, 0, 0, 0)) w_finish(w, WHANDED_BACK);
}

#include "core/aln_warp_replay.cuh"

// One read by the warp (every lane calls it; on the host, once); the answer in w.result.
WHD inline void w_search(wstate& w, const wmem& m, const wu32* bwt, const wbwt& bc, const wparams& p, const int* max_diff,
                         const wu32* seqs, const wu32* seq_lens, wu32 stride, wu32 r, wu64 cap, wu64* out, int aln_cap) {
  WLANE0(w_begin(w, p, max_diff, seq_lens, r, cap));
  if (w.done) return;
  const wu32 base = (r >> 5) * stride * 32 + (r & 31);
  WLANES(lane, for (int j = lane; j < w.len; j += 32) {  // the reverse complement
    const wu32 c = w_base(seqs, base, w.len - 1 - j);
    w.seq[j] = static_cast<unsigned char>(c > 3 ? 4 : 3 - c);
  });
  WLANES(lane, {
    if (lane == 0) w_cal_width(bwt, bc, seqs, base, w.len, 0, w.len, w.ww, w.wb);
    if (lane == 1 && w.use_seed) w_cal_width(bwt, bc, seqs, base, w.len, w.len - p.seed_len, p.seed_len, m.sw, m.sb);
  });
  WLANE0(w_start(w, m, p, bc));
  while (!w.done) {
    WLANE0(w_refill(w, m, p));
    if (w.done) break;
    WLANES(lane, w_walk(w, m, bwt, bc, p, lane));
    w_replay_warp(w, m, p, bc, out, aln_cap);
  }
}
