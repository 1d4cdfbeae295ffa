// The replay of the warp-per-read search (core/aln_warp.cuh) by the whole warp: bwa's order kept,
// the work shared by the lanes. No include guard: included by aln_warp.cuh.
//
// Why the lanes can share it. The records the lanes walked ahead all come from one score bucket b
// (a chain's steps keep its counts), so until the next hit every record is a skip or an expansion
// whose pushes depend only on its entry, its record and the search state, which only a hit
// changes. What replaying such a run of records does to the search is then a sum: each record pops
// one entry and pushes what it pushes, into the three buckets b + s_mm, b + s_gapo and b + s_gape,
// in bwa's order (with a penalty of 0 one of them is b itself, and one lane holds a chain at a
// time: w_refill). So a segment (the lanes' records in queue order up to the
// first chain that goes on or ends at a hit) is replayed in four steps: each lane counts what its
// records push (w_seg_count); each lane adds up the lanes before it and finds its first record that
// ends the search, by bwa's queue limit (-m) or the stack's (w_seg_scan); lane 0 ends the search at
// the first such record or takes the new chunks and moves the counts on (w_seg_commit); each lane
// writes its records' pushes where the sums put them (w_seg_write). A hit is replayed by lane 0
// alone, as before (w_seg_head), and makes the later chains walk again when it changes the state.

// A candidate push's target bucket: 0, 1, 2 (w.tb), or 3 when none (a penalty of 0 aside, never).
WHD inline int w_target(const wstate& w, int score) {
  return score == w.tb[0] ? 0 : score == w.tb[1] ? 1 : score == w.tb[2] ? 2 : 3;
}

struct wpush_count {  // what a record pushes: entries counted, stored, over the limits, per target
  const wstate& w;
  const wparams& p;
  int n_push, n_store, over;
  wu32 c0, c1, c2;
  WHD void operator()(bool v, int, wu64, wu64, wu32 n_mm, wu32 n_gapo, wu32 n_gape, wu32, wu32) {
    const int score = w_score(p, n_mm, n_gapo, n_gape), t = w_target(w, score);
    const bool kept = v && score <= w.dead_above;  // else counted, not stored
    const bool bad = kept && (score >= WMAX_BUCKETS || t == 3);
    const bool put = kept && !bad;
    n_push += v;
    over |= bad;
    n_store += put;
    c0 += put && t == 0;
    c1 += put && t == 1;
    c2 += put && t == 2;
  }
  WHD void held() {
    n_push++;
    n_store++;
  }
};

struct wpush_write {  // the stored pushes at their places in the target buckets
  const wstate& w;
  const wmem& m;
  const wparams& p;
  wu32 p0, p1, p2;  // the next place in each target bucket
  WHD void operator()(bool v, int i, wu64 k, wu64 l, wu32 n_mm, wu32 n_gapo, wu32 n_gape, wu32 n_ins, wu32 state) {
    const int score = w_score(p, n_mm, n_gapo, n_gape), t = w_target(w, score);
    if (!v || score > w.dead_above) return;
    const wu32 at = t == 0 ? p0++ : t == 1 ? p1++ : p2++;
    const wu32 first = w.tfirst[t];
    const wu32 c = at < first ? w.thead[t] : m.seg[t * WSEG_CHUNKS + ((at - first) >> 5)];
    w_put(m.pool + (static_cast<wu64>(c) * 32 + (at & 31)) * 2, w_entry(i, k, l, n_mm, n_gapo, n_gape, n_ins, state, 1));
  }
  WHD void held() {}
};

// Lane 0: the queue's head replayed alone while it is a hit, a finished lane or a chain that needs
// walking; then whether a segment follows (w.seg_go), with the checks that hold for all its records.
WHD inline void w_seg_head(wstate& w, const wmem& m, const wparams& p, const wbwt& bc, wu64* out, int aln_cap) {
  w.seg_go = 0;
  while (w.n_active > 0) {
    wlane& L = w.lane[w.cur];
    if (L.n_used == L.n_buf) {
      if (!L.fin) {  // the chain goes on: its lane writes more
        L.n_buf = L.n_used = 0;
        return;
      }
      L.st = WL_FREE;
      w.cur = (w.cur + 1) & 31;
      w.n_active--;
      continue;
    }
    if (!(L.hit && L.n_used == L.n_buf - 1)) break;
    const int r = w_replay(w, m, p, bc, out, aln_cap, w_rec(m, w.cur, L.n_used));
    L.n_used++;
    if (r == 2) return;
    if (r == 1) {  // the later chains were walked with the old state: again
      for (int q = 1; q < w.n_active; ++q) {
        const int ql = (w.cur + q) & 31;
        wlane& M = w.lane[ql];
        M.cur = w_get(m.start + 2 * ql);
        M.n_buf = M.n_used = 0;
        M.fin = M.hit = 0;
      }
    }
  }
  if (w.n_active == 0) return;
  // every record of the segment scores w.best: the first one ends the search if that is too much
  if (!p.non_stop && w.best > w.best_score + p.s_mm) {
    w_finish(w, w.n_aln);
    return;
  }
  w.tb[0] = w.best + p.s_mm;
  w.tb[1] = w.best + p.s_gapo;
  w.tb[2] = w.best + p.s_gape;
  w.stop_key = WNIL;
  w.seg_go = 1;
}

// Each lane: what its records of the segment push (noted in each record's [1].z above its state).
WHD inline void w_seg_count(wstate& w, const wmem& m, const wparams& p, const wbwt& bc, int lane) {
  wlane& L = w.lane[lane];
  L.seg = L.in = 0;
  if (((lane - w.cur) & 31) >= w.n_active) return;
  L.lo = L.n_used;
  L.hi = L.n_buf - (L.hit ? 1 : 0);
  L.sn = L.ss = 0;
  wu32 c0 = 0, c1 = 0, c2 = 0;
  for (int r = L.lo; r < L.hi; ++r) {
    uint4* rec = w_rec(m, lane, r);
    wpush_count c{w, p, 0, 0, 0, 0, 0, 0};
    if (rec[1].w == WK_EXPAND) w_plan(w, m, p, bc, w_get(rec), rec, c);
    rec[1].z = (rec[1].z & 255u) | static_cast<wu32>(c.n_push | c.n_store << 5 | c.over << 10) << 8;
    L.sn += c.n_push - 1;
    L.ss += c.n_store - 1;
    c0 += c.c0;
    c1 += c.c1;
    c2 += c.c2;
  }
  L.cnt[0] = c0;
  L.cnt[1] = c1;
  L.cnt[2] = c2;
  L.seg = !L.fin || L.hit ? 2 : 1;
}

// A lane in the segment, given the sums of the lanes before it: its first record that ends the
// search (bwa's queue limit -m, then the stack's), into w.stop_key.
WHD inline void w_seg_stop(wstate& w, const wmem& m, const wparams& p, int lane, int q, long long n, long long s) {
  const wlane& L = w.lane[lane];
  long long ne = static_cast<long long>(w.n_entries) + n, st = static_cast<long long>(w.stored) + s;
  for (int r = L.lo; r < L.hi; ++r) {
    const wu32 c = w_rec(m, lane, r)[1].z >> 8;
    const int n_push = static_cast<int>(c & 31), n_store = static_cast<int>(c >> 5 & 31);
    int stop = -1;
    if (ne > static_cast<long long>(p.max_entries)) stop = 0;
    else if ((c >> 10) || (n_store > 0 && st + n_store - 2 >= static_cast<long long>(w.cap))) stop = 1;
    if (stop >= 0) {
      atomicMin(&w.stop_key, static_cast<wu32>((q * 64 + r) * 2 + stop));
      return;
    }
    ne += n_push - 1;
    st += n_store - 1;
  }
}

#if defined(__CUDA_ARCH__)
// Each lane: in the segment when no lane before it ends it; the sums of the lanes before it (a scan
// over the queue's places by shuffles: place q - d is lane - d); its first record that ends the
// search. The segment's last lane writes the totals.
WHD inline void w_seg_scan(wstate& w, const wmem& m, const wparams& p, int lane) {
  wlane& L = w.lane[lane];
  const int q = (lane - w.cur) & 31, act = q < w.n_active;
  const unsigned bar = __ballot_sync(0xffffffffu, act && L.seg == 2);
  const unsigned rot = w.cur ? (bar >> w.cur) | (bar << (32 - w.cur)) : bar;  // bit q: place q
  const int q_end = rot ? __ffs(static_cast<int>(rot)) - 1 : w.n_active - 1;
  const int in = act && q <= q_end;
  int n = in ? L.sn : 0, s = in ? L.ss : 0;
  wu32 c0 = in ? L.cnt[0] : 0, c1 = in ? L.cnt[1] : 0, c2 = in ? L.cnt[2] : 0;
  for (int d = 1; d < 32; d <<= 1) {
    const int src = (lane - d) & 31;
    const int n2 = __shfl_sync(0xffffffffu, n, src), s2 = __shfl_sync(0xffffffffu, s, src);
    const wu32 a0 = __shfl_sync(0xffffffffu, c0, src), a1 = __shfl_sync(0xffffffffu, c1, src),
               a2 = __shfl_sync(0xffffffffu, c2, src);
    if (q >= d) {
      n += n2;
      s += s2;
      c0 += a0;
      c1 += a1;
      c2 += a2;
    }
  }
  if (!in) return;
  L.in = 1;
  L.pre[0] = c0 - L.cnt[0];
  L.pre[1] = c1 - L.cnt[1];
  L.pre[2] = c2 - L.cnt[2];
  if (q == q_end) {
    w.q_end = q;
    w.tot_n = n;
    w.tot_s = s;
    w.tcnt[0] = c0;
    w.tcnt[1] = c1;
    w.tcnt[2] = c2;
  }
  w_seg_stop(w, m, p, lane, q, n - L.sn, s - L.ss);
}
#else
// The same on the host (lanes in turn): the sums of the lanes before it by a loop.
WHD inline void w_seg_scan(wstate& w, const wmem& m, const wparams& p, int lane) {
  wlane& L = w.lane[lane];
  const int q = (lane - w.cur) & 31;
  if (q >= w.n_active) return;
  long long n = 0, s = 0;
  wu32 pre[3] = {0, 0, 0};
  for (int j = 0; j < q; ++j) {
    const wlane& M = w.lane[(w.cur + j) & 31];
    if (M.seg == 2) return;
    n += M.sn;
    s += M.ss;
    for (int t = 0; t < 3; ++t) pre[t] += M.cnt[t];
  }
  L.in = 1;
  for (int t = 0; t < 3; ++t) L.pre[t] = pre[t];
  if (L.seg == 2 || q == w.n_active - 1) {
    w.q_end = q;
    w.tot_n = n + L.sn;
    w.tot_s = s + L.ss;
    for (int t = 0; t < 3; ++t) w.tcnt[t] = pre[t] + L.cnt[t];
  }
  w_seg_stop(w, m, p, lane, q, n, s);
}
#endif

// Lane 0: the search ends at the segment's first record that ends it; else the counts move on, the
// target buckets take their new chunks (their ids in m.seg) and the finished lanes leave the queue.
WHD inline void w_seg_commit(wstate& w, const wmem& m) {
  if (w.stop_key != WNIL) {
    w_finish(w, (w.stop_key & 1) ? WHANDED_BACK : w.n_aln);
    return;
  }
  w.n_entries = static_cast<wu64>(static_cast<long long>(w.n_entries) + w.tot_n);
  w.stored = static_cast<wu64>(static_cast<long long>(w.stored) + w.tot_s);
  for (int t = 0; t < 3; ++t) {
    if (w.tcnt[t] == 0) continue;
    const int b = w.tb[t];
    const wu32 s = w.size[b], end = s + w.tcnt[t];
    w.tsize[t] = s;
    w.thead[t] = w.head[b];
    w.tfirst[t] = (s + 31) & ~31u;
    wu32* ids = m.seg + t * WSEG_CHUNKS;
    for (wu32 at = w.tfirst[t]; at < end; at += 32) *ids++ = w_new_chunk(w, m, b);
    w.size[b] = end;
  }
  // the lanes before the last are finished; the last too unless its chain goes on or ends at a hit
  const int gone = w.q_end + (w.lane[(w.cur + w.q_end) & 31].seg == 1 ? 1 : 0);
  w.cur = (w.cur + gone) & 31;
  w.n_active -= gone;
}

// Each lane in the segment: its records' stored pushes where the sums put them; its records used.
WHD inline void w_seg_write(wstate& w, const wmem& m, const wparams& p, const wbwt& bc, int lane) {
  wlane& L = w.lane[lane];
  if (!L.in) return;
  wpush_write f{w, m, p, w.tsize[0] + L.pre[0], w.tsize[1] + L.pre[1], w.tsize[2] + L.pre[2]};
  for (int r = L.lo; r < L.hi; ++r) {
    const uint4* rec = w_rec(m, lane, r);
    if (rec[1].w == WK_EXPAND) w_plan(w, m, p, bc, w_get(rec), rec, f);
  }
  L.n_used = L.hi;
  if (L.seg == 1) L.st = WL_FREE;
}

// The records the lanes have written, in bwa's order, as far as they go (every lane calls it).
WHD inline void w_replay_warp(wstate& w, const wmem& m, const wparams& p, const wbwt& bc, wu64* out, int aln_cap) {
  for (;;) {
    WLANE0(w_seg_head(w, m, p, bc, out, aln_cap));
    if (!w.seg_go) return;
    WLANES(lane, w_seg_count(w, m, p, bc, lane));
    WLANES(lane, w_seg_scan(w, m, p, lane));
    WLANE0(w_seg_commit(w, m));
    if (w.done) return;
    WLANES(lane, w_seg_write(w, m, p, bc, lane));
  }
}
