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

struct wpush_count {  // what a record pushes: entries counted, stored, over the limits, per target
  const wstate& w;
  const wparams& p;
  int n_push, n_store, over;
  wu32 cnt[3];
  WHD void operator()(int, wu64, wu64, wu32 n_mm, wu32 n_gapo, wu32 n_gape, wu32, wu32) {
    n_push++;
    const int score = w_score(p, n_mm, n_gapo, n_gape);
    if (score > w.dead_above) return;  // counted, not stored
    const int t = score == w.tb[0] ? 0 : score == w.tb[1] ? 1 : score == w.tb[2] ? 2 : -1;
    if (score >= WMAX_BUCKETS || t < 0) {
      over = 1;
      return;
    }
    n_store++;
    cnt[t]++;
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
  wu32 pos[3];
  WHD void operator()(int i, wu64 k, wu64 l, wu32 n_mm, wu32 n_gapo, wu32 n_gape, wu32 n_ins, wu32 state) {
    const int score = w_score(p, n_mm, n_gapo, n_gape);
    if (score > w.dead_above) return;
    const int t = score == w.tb[0] ? 0 : score == w.tb[1] ? 1 : 2;
    const wu32 at = pos[t]++;
    const wu32 c = at < w.tfirst[t] ? w.thead[t] : w.tch[t][(at - w.tfirst[t]) >> 5];
    wentry e;
    e.k = k;
    e.l = l;
    e.i = i;
    e.last_diff = i;
    e.n_mm = n_mm;
    e.n_gapo = n_gapo;
    e.n_gape = n_gape;
    e.n_ins = n_ins;
    e.state = state;
    w_put(m.pool + (static_cast<wu64>(c) * 32 + (at & 31)) * 2, e);
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
        wlane& M = w.lane[(w.cur + q) & 31];
        M.cur = M.start;
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
  w.seg_go = 1;
}

// Each lane: what its records of the segment push.
WHD inline void w_seg_count(wstate& w, const wmem& m, const wparams& p, const wbwt& bc, int lane) {
  wlane& L = w.lane[lane];
  L.seg = 0;
  if (((lane - w.cur) & 31) >= w.n_active) return;
  L.lo = L.n_used;
  L.hi = L.n_buf - (L.hit ? 1 : 0);
  L.sn = L.ss = 0;
  L.cnt[0] = L.cnt[1] = L.cnt[2] = 0;
  for (int r = L.lo; r < L.hi; ++r) {
    const uint4* rec = w_rec(m, lane, r);
    wpush_count c{w, p, 0, 0, 0, {0, 0, 0}};
    if (rec[1].w == WK_EXPAND) w_plan(w, p, bc, w_get(rec), rec, c);
    w.rc[lane][r] = static_cast<unsigned short>(c.n_push | c.n_store << 5 | c.over << 10);
    L.sn += c.n_push - 1;
    L.ss += c.n_store - 1;
    for (int t = 0; t < 3; ++t) L.cnt[t] += c.cnt[t];
  }
  L.seg = !L.fin || L.hit ? 2 : 1;
}

// Each lane: in the segment when no lane before it ends it; the sums before it; its first record
// that ends the search. The segment's last lane writes the totals.
WHD inline void w_seg_scan(wstate& w, const wparams& p, int lane) {
  wlane& L = w.lane[lane];
  L.in = 0;
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
  L.stop = -1;
  long long ne = static_cast<long long>(w.n_entries) + n, st = static_cast<long long>(w.stored) + s;
  for (int r = L.lo; r < L.hi; ++r) {
    const int c = w.rc[lane][r], n_push = c & 31, n_store = c >> 5 & 31;
    if (ne > static_cast<long long>(p.max_entries)) {  // bwa's queue limit: the search ends
      L.stop = r;
      L.stop_back = 0;
      break;
    }
    if ((c >> 10) || (n_store > 0 && st + n_store - 2 >= static_cast<long long>(w.cap))) {  // the stack's
      L.stop = r;
      L.stop_back = 1;
      break;
    }
    ne += n_push - 1;
    st += n_store - 1;
  }
  if (L.seg == 2 || q == w.n_active - 1) {
    w.q_end = q;
    w.tot_n = n + L.sn;
    w.tot_s = s + L.ss;
    for (int t = 0; t < 3; ++t) w.tcnt[t] = pre[t] + L.cnt[t];
  }
}

// Lane 0: the search ends at the segment's first record that ends it; else the counts move on, the
// target buckets take their new chunks and the lanes their records.
WHD inline void w_seg_commit(wstate& w, const wmem& m) {
  for (int q = 0; q <= w.q_end; ++q) {
    const wlane& L = w.lane[(w.cur + q) & 31];
    if (L.stop >= 0) {
      w_finish(w, L.stop_back ? WHANDED_BACK : w.n_aln);
      return;
    }
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
    int j = 0;
    for (wu32 at = w.tfirst[t]; at < end; at += 32) {  // a new chunk on top of the bucket
      wu32 c;
      if (w.free_head != WNIL) {
        c = w.free_head;
        w.free_head = m.link[c];
      } else {
        c = w.bump++;
      }
      m.link[c] = w.head[b];
      w.head[b] = c;
      w.tch[t][j++] = c;
    }
    w.size[b] = end;
  }
  for (int q = 0; q <= w.q_end; ++q) {
    wlane& L = w.lane[(w.cur + q) & 31];
    L.n_used = L.hi;
  }
}

// Each lane in the segment: its records' stored pushes where the sums put them.
WHD inline void w_seg_write(const wstate& w, const wmem& m, const wparams& p, const wbwt& bc, int lane) {
  const wlane& L = w.lane[lane];
  if (!L.in) return;
  wpush_write f{w, m, p, {w.tsize[0] + L.pre[0], w.tsize[1] + L.pre[1], w.tsize[2] + L.pre[2]}};
  for (int r = L.lo; r < L.hi; ++r) {
    const uint4* rec = w_rec(m, lane, r);
    if (rec[1].w == WK_EXPAND) w_plan(w, p, bc, w_get(rec), rec, f);
  }
}

// The records the lanes have written, in bwa's order, as far as they go (every lane calls it).
WHD inline void w_replay_warp(wstate& w, const wmem& m, const wparams& p, const wbwt& bc, wu64* out, int aln_cap) {
  for (;;) {
    WLANE0(w_seg_head(w, m, p, bc, out, aln_cap));
    if (!w.seg_go) return;
    WLANES(lane, w_seg_count(w, m, p, bc, lane));
    WLANES(lane, w_seg_scan(w, p, lane));
    WLANE0(w_seg_commit(w, m));
    if (w.done) return;
    WLANES(lane, w_seg_write(w, m, p, bc, lane));
  }
}
