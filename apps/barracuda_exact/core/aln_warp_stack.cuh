// The warp-per-read search's data (core/aln_warp.cuh): limits, the shared state of a warp, entries,
// the stack in chunks of 32 entries with bwa's push and the release above a score, and the FM-index
// look-ups (bwa's occ and widths). No include guard: tests include it (through aln_warp.cuh) inside
// two namespaces, once per WARP_STEPS.
#ifndef WARP_STEPS
#define WARP_STEPS 32  // records a lane writes ahead of the replay (at most 64: w.stop_key)
#endif
#define WMAX_LEN 256      // longest read (core/aln_kernel.hpp kAlnKernelMaxLen)
#define WMAX_BUCKETS 128  // score buckets (the first pass's MAX_BUCKETS)
#define WNIL 0xffffffffu
#define WHANDED_BACK 0xffffffffu
#define WREC_U4 6  // uint4 per record: the entry (its kind in [1].w), then the hit or the counts
#define WSEG_CHUNKS (8 * WARP_STEPS + 1)  // new chunks of a target bucket in one segment: <= 8 pushes a record

#if defined(__CUDACC__)
#define WLANE0(body)                  \
  do {                                \
    if ((threadIdx.x & 31) == 0) {    \
      body;                           \
    }                                 \
    __syncwarp();                     \
  } while (0)
#define WLANES(lane, body)                       \
  do {                                           \
    const int lane = static_cast<int>(threadIdx.x & 31); \
    body;                                        \
    __syncwarp();                                \
  } while (0)
#define WHD __device__
#define WHOSTDEV __host__ __device__
#define WUNROLL _Pragma("unroll")
#else
#define WLANE0(body) \
  do {               \
    body;            \
  } while (0)
#define WLANES(lane, body)                      \
  do {                                          \
    for (int lane = 0; lane < 32; ++lane) {     \
      body;                                     \
    }                                           \
  } while (0)
#define WHD
#define WHOSTDEV
#define WUNROLL
#endif

typedef unsigned int wu32;
typedef unsigned long long wu64;

struct wbwt {  // as the first pass's bwt_consts
  wu64 primary, seq_len;
  wu64 L2[5];
};

struct wparams {  // as the first pass's aln_params
  int s_mm, s_gapo, s_gape;
  int max_gapo, max_gape, gape_counts;
  int indel_end_skip, max_del_occ, max_entries;
  int seed_len, max_seed_diff, max_top2;
  int log_gap, non_stop;
};

struct wentry {
  wu64 k, l;
  int i, last_diff;
  wu32 n_mm, n_gapo, n_gape, n_ins, state;
};

enum { WL_FREE = 0, WL_FRESH = 1, WL_ACTIVE = 2 };
enum { WK_SKIP = 0, WK_HIT = 1, WK_EXPAND = 2 };

struct wlane {
  wentry cur;         // the chain's next step (its entry, to start again, in wmem.start)
  wu32 slot;          // WL_FRESH: the start entry's place in the pool
  int st, fin, hit, n_buf, n_used;  // hit: the chain ended at a hit (its last record)
  // the parallel replay's segment (core/aln_warp_replay.cuh): its records [lo, hi), their sums
  // (entries and stored: pushes less one pop a record; stored pushes per target bucket), the lane's
  // place in the segment (0 out, 1 in, 2 in and last: its chain goes on or ends at a hit), the sums
  // of the lanes before it and its first record that ends the search (-1: none; stop_back: handed back)
  int lo, hi, seg, in, stop, stop_back;
  int sn, ss;
  wu32 cnt[3], pre[3];
};


// One warp's, in shared memory. Kept small: the warps an SM holds are bounded by it (12.3 KB with the
// seed's widths and the chains' entries here: 17 warps an SM; 8.2 KB: 25, as the 80 registers allow;
// the later passes measured no faster for it, H200).
struct wstate {
  wu64 ww[WMAX_LEN + 1];                     // widths of the read (its seed's: wmem.sw, wmem.sb)
  wu64 stored, n_entries, best_cnt;          // stored: entries held (the bucket lists and the lanes)
  wu32 head[WMAX_BUCKETS], size[WMAX_BUCKETS];
  wu32 free_head, bump, cap, n_aln, read, result;
  int len, use_seed, opt_max_diff, max_diff, best_score, best, dead_above, done, cur, n_active;
  long long seed_len;
  unsigned short wb[WMAX_LEN + 1];
  unsigned char seq[WMAX_LEN];
  wlane lane[32];  // the queue: lanes cur, cur + 1, ... (mod 32), n_active of them, hold chains in order
  // the parallel replay: the target buckets of the segment's pushes (best + s_mm, s_gapo, s_gape),
  // their sizes and top chunks before it and what it adds to them, its totals and last lane
  int tb[3];
  wu32 tsize[3], thead[3], tfirst[3], tcnt[3];
  long long tot_n, tot_s;
  int q_end, seg_go;
  int r_first, r_take;  // w_refill: the new chains' first queue place and count, where they lie
  wu32 r_top, r_h0, r_h1;
  wu32 stop_key;  // the segment's first record that ends the search: (q * 64 + record) * 2 + handed back
};

struct wmem {  // one warp's global memory: lane records, the new chunks of a segment's target buckets
  uint4* rec;   // (3 x WSEG_CHUNKS), the chains' entries (2 uint4 a lane), the seed's widths, chunk
  wu32* seg;    // links, chunks of 32 entries of 2 uint4
  uint4* start;
  wu64* sw;
  unsigned short* sb;
  wu32* link;
  uint4* pool;
};

// Chunks for cap stored entries: full chunks, one part-filled chunk per bucket, one spare.
WHOSTDEV inline wu64 w_chunks(wu64 cap) { return (cap + 31) / 32 + WMAX_BUCKETS + 1; }
WHOSTDEV inline wu64 w_rec_u4() { return 32ull * WARP_STEPS * WREC_U4; }
WHOSTDEV inline wu64 w_seg_u4() { return (3ull * WSEG_CHUNKS + 3) / 4; }
// the chains' entries, the seed's widths (WMAX_LEN + 1 of 8 bytes) and bounds (of 2 bytes)
WHOSTDEV inline wu64 w_side_u4() { return 64 + (WMAX_LEN + 2) / 2 + (WMAX_LEN + 8) / 8; }
WHOSTDEV inline wu64 w_warp_u4(wu64 cap) {
  return w_rec_u4() + w_seg_u4() + w_side_u4() + (w_chunks(cap) + 3) / 4 + w_chunks(cap) * 64;
}
WHOSTDEV inline wmem w_mem(uint4* base, wu64 cap) {
  wmem m;
  m.rec = base;
  uint4* at = base + w_rec_u4();
  m.seg = reinterpret_cast<wu32*>(at);
  at += w_seg_u4();
  m.start = at;
  m.sw = reinterpret_cast<wu64*>(at + 64);
  m.sb = reinterpret_cast<unsigned short*>(at + 64 + (WMAX_LEN + 2) / 2);
  at += w_side_u4();
  m.link = reinterpret_cast<wu32*>(at);
  m.pool = at + (w_chunks(cap) + 3) / 4;
  return m;
}

// Lane `lane`'s record `step` (in global memory: on an H200 the later passes of 200k aDNA reads took
// 1.79 s with 8 records a lane there, 2.12 s with 4 and 2.52 s with 2 in shared memory).
WHD inline uint4* w_rec(const wmem& m, int lane, int step) {
  return m.rec + (static_cast<wu64>(lane) * WARP_STEPS + step) * WREC_U4;
}

WHD inline int w_score(const wparams& p, wu32 n_mm, wu32 n_gapo, wu32 n_gape) {
  return static_cast<int>(n_mm) * p.s_mm + static_cast<int>(n_gapo) * p.s_gapo + static_cast<int>(n_gape) * p.s_gape;
}

WHD inline void w_put(uint4* at, const wentry& e) {
  uint4 a, b;
  a.x = static_cast<wu32>(e.k);
  a.y = static_cast<wu32>(e.k >> 32);
  a.z = static_cast<wu32>(e.l);
  a.w = static_cast<wu32>(e.l >> 32);
  b.x = static_cast<wu32>(e.i) | static_cast<wu32>(e.last_diff) << 16;
  b.y = e.n_mm | e.n_gapo << 8 | e.n_gape << 16 | e.n_ins << 24;
  b.z = e.state;
  b.w = 0;
  at[0] = a;
  at[1] = b;
}

WHD inline wentry w_get(const uint4* at) {
  const uint4 a = at[0], b = at[1];
  wentry e;
  e.k = static_cast<wu64>(a.y) << 32 | a.x;
  e.l = static_cast<wu64>(a.w) << 32 | a.z;
  e.i = static_cast<int>(b.x & 0xffff);
  e.last_diff = static_cast<int>(b.x >> 16);
  e.n_mm = b.y & 255;
  e.n_gapo = b.y >> 8 & 255;
  e.n_gape = b.y >> 16 & 255;
  e.n_ins = b.y >> 24;
  e.state = b.z & 255;  // above: the parallel replay's note of what the record pushes
  return e;
}

WHD inline uint4 w_pair(wu64 a, wu64 b) {
  uint4 v;
  v.x = static_cast<wu32>(a);
  v.y = static_cast<wu32>(a >> 32);
  v.z = static_cast<wu32>(b);
  v.w = static_cast<wu32>(b >> 32);
  return v;
}
WHD inline wu64 w_lo(const uint4& v) { return static_cast<wu64>(v.y) << 32 | v.x; }
WHD inline wu64 w_hi(const uint4& v) { return static_cast<wu64>(v.w) << 32 | v.z; }

WHD inline wu32 w_count(wu32 w, wu32 c) {
  const wu32 x = w ^ (c * 0x55555555u);
  return static_cast<wu32>(__popc(~(x | (x >> 1)) & 0x55555555u));
}

// bwa's bwt_occ4 over the .bwt body (per 128 rows 4 uint64 counts and 8 words of 16 bases).
WHD inline void w_occ4(const wu32* bwt, const wbwt& bc, wu64 k, wu64 cnt[4]) {
  cnt[0] = cnt[1] = cnt[2] = cnt[3] = 0;
  if (k == ~0ull) return;
  if (k >= bc.primary) k--;
  const wu32* q = bwt + (k >> 7) * 16;
  for (int c = 0; c < 4; ++c) cnt[c] = static_cast<wu64>(__ldg(q + 2 * c + 1)) << 32 | __ldg(q + 2 * c);
  const int full = static_cast<int>((k & 127) >> 4), r = static_cast<int>(~k & 15);
  wu32 n[4] = {0, 0, 0, 0};
  for (int j = 0; j <= full; ++j) {
    wu32 word = __ldg(q + 8 + j);
    if (j == full) word &= ~((1u << (r << 1)) - 1u);
    for (int c = 0; c < 4; ++c) n[c] += w_count(word, static_cast<wu32>(c));
  }
  n[0] -= static_cast<wu32>(r);  // the masked-off fields read as A
  for (int c = 0; c < 4; ++c) cnt[c] += n[c];
}

// bwa's bwt_occ: occurrences of base c in rows [0, k].
WHD inline wu64 w_occ1(const wu32* bwt, const wbwt& bc, wu64 k, wu32 c) {
  if (k == bc.seq_len) return bc.L2[c + 1] - bc.L2[c];
  if (k == ~0ull) return 0;
  if (k >= bc.primary) k--;
  const wu32* q = bwt + (k >> 7) * 16;
  const wu64 n = static_cast<wu64>(__ldg(q + 2 * c + 1)) << 32 | __ldg(q + 2 * c);
  const int full = static_cast<int>((k & 127) >> 4), r = static_cast<int>(~k & 15);
  wu32 m = 0;
  for (int j = 0; j < full; ++j) m += w_count(__ldg(q + 8 + j), c);
  m += w_count(__ldg(q + 8 + full) & ~((1u << (r << 1)) - 1u), c);
  if (c == 0) m -= static_cast<wu32>(r);
  return n + m;
}

WHD inline wu32 w_base(const wu32* seqs, wu32 base, int j) {
  return (__ldg(seqs + base + static_cast<wu32>(j >> 3) * 32) >> ((j & 7) * 4)) & 15;
}

// bwt_cal_width over positions from..from+len of the reversed read (bwa's order).
WHD inline void w_cal_width(const wu32* bwt, const wbwt& bc, const wu32* seqs, wu32 base, int read_len, int from, int len,
                            wu64* ww, unsigned short* wb) {
  wu64 k = 0, l = bc.seq_len;
  int bid = 0;
  for (int i = 0; i < len; i++) {
    const wu32 c = w_base(seqs, base, read_len - 1 - (from + i));
    if (c < 4) {
      const wu64 ok = w_occ1(bwt, bc, k - 1, c), ol = w_occ1(bwt, bc, l, c);
      k = bc.L2[c] + ok + 1;
      l = bc.L2[c] + ol;
    }
    if (k > l || c > 3) {
      k = 0;
      l = bc.seq_len;
      bid++;
    }
    ww[i] = l - k + 1;
    wb[i] = static_cast<unsigned short>(bid);
  }
  ww[len] = 0;
  wb[len] = static_cast<unsigned short>(bid + 1);
}

WHD inline int w_finish(wstate& w, wu32 result) {
  w.done = 1;
  w.result = result;
  return 2;
}

// A new chunk on top of bucket b (from the free list, else never used before; w_chunks: there is always one).
WHD inline wu32 w_new_chunk(wstate& w, const wmem& m, int b) {
  wu32 c;
  if (w.free_head != WNIL) {
    c = w.free_head;
    w.free_head = m.link[c];
  } else {
    c = w.bump++;
  }
  m.link[c] = w.head[b];
  w.head[b] = c;
  return c;
}

// A pushed entry (bwa's gap_push: last_diff is its position when it is a difference).
WHD inline wentry w_entry(int i, wu64 k, wu64 l, wu32 n_mm, wu32 n_gapo, wu32 n_gape, wu32 n_ins, wu32 state, int is_diff) {
  wentry e;
  e.k = k;
  e.l = l;
  e.i = i;
  e.last_diff = is_diff ? i : 0;
  e.n_mm = n_mm;
  e.n_gapo = n_gapo;
  e.n_gape = n_gape;
  e.n_ins = n_ins;
  e.state = state;
  return e;
}

// bwa's gap_push into the bucket lists; 1 when the stack is over its limits (the read goes back).
WHD inline int w_push(wstate& w, const wmem& m, const wparams& p, int i, wu64 k, wu64 l, wu32 n_mm, wu32 n_gapo,
                      wu32 n_gape, wu32 n_ins, wu32 state, int is_diff) {
  const int score = w_score(p, n_mm, n_gapo, n_gape);
  w.n_entries++;
  if (score > w.dead_above) return 0;  // could only end the search: counted, not stored
  if (score >= WMAX_BUCKETS || w.stored >= w.cap) return 1;
  const wu32 at = w.size[score];
  if ((at & 31) == 0) w_new_chunk(w, m, score);
  w_put(m.pool + (static_cast<wu64>(w.head[score]) * 32 + (at & 31)) * 2,
        w_entry(i, k, l, n_mm, n_gapo, n_gape, n_ins, state, is_diff));
  w.size[score] = at + 1;
  w.stored++;
  return 0;
}

// The exact continuation: pushed and popped next, so only counted (its lane holds it).
WHD inline int w_push_held(wstate& w) {
  w.n_entries++;
  if (w.stored >= w.cap) return 1;
  w.stored++;
  return 0;
}

// Releases the stored entries of the buckets above `above` (they could only end the search).
WHD inline void w_release_above(wstate& w, const wmem& m, int above) {
  for (int b = above + 1; b < WMAX_BUCKETS; b++) {
    w.stored -= w.size[b];
    for (wu32 c = w.head[b]; c != WNIL;) {
      const wu32 next = m.link[c];
      m.link[c] = w.free_head;
      w.free_head = c;
      c = next;
    }
    w.head[b] = WNIL;
    w.size[b] = 0;
  }
}

