// bwa aln's inexact search on the GPU (BarraCUDA's cuda_split_inexact_match_caller's job, written
// for EvoKernels): each thread takes reads from a shared counter and runs, for one read at a time,
// the bounded backtracking of bwt_match_gap over bwa 0.7's FM-index with the same priority stack
// (buckets by score, last in first out within a bucket), width/seed pruning, gap rules and "top2"
// stopping rules as the CPU reference (apps/barracuda_exact/core/aln_search.cpp), so every read gets
// the same hit intervals in the same order.
//
// One difference in bookkeeping, not in results: once the first hit is found (best score B), an
// entry pushed with a score above B + s_mm could only end the search when popped (bwa breaks on the
// first such pop), so it is counted (bwa's queue limit counts it) but not stored, and the stored
// ones above that bound are released. A read that still needs more than STACK_CAP stored entries,
// finds more than ALN_CAP intervals, needs a score bucket beyond MAX_BUCKETS or is longer than
// MAX_LEN is handed back (n_out = 0xffffffff) and the host searches it on the CPU.
//
// Data (prepared by apps/barracuda_exact/core/aln_gpu.cpp):
//   bwt       bwa's .bwt body (per 128 rows 4 uint64 counts + 8 words of 16 2-bit bases), padded;
//   seqs      reads packed 4 bits per base, 8 per word, blocked by 32 reads (as the exact kernel);
//   max_diff  per read length 0..MAX_LEN, bwa's maximum differences (computed on the host);
//   stack     STACK_CAP entries per thread (uint4 each), entry e of thread t at e * n_threads + t;
//   n_out     per read: hit intervals found (or 0xffffffff: handed back);
//   aln_out   per read ALN_CAP x (k, l, packed counts and score).
#ifndef BLOCK_W
#define BLOCK_W 128   // threads per block
#endif
#ifndef MAX_LEN
#define MAX_LEN 256   // longest read searched here (at most 511: 9-bit positions)
#endif
#ifndef STACK_CAP
#define STACK_CAP 4095  // stored stack entries per thread (at most 4095: 12-bit links; 0xfff = none)
#endif
#ifndef ALN_CAP
#define ALN_CAP 16    // hit intervals per read
#endif
#ifndef MAX_BUCKETS
#define MAX_BUCKETS 128  // score buckets
#endif

#if MAX_LEN > 511 || STACK_CAP > 4095
#error "MAX_LEN <= 511 and STACK_CAP <= 4095 (packed stack entries)"
#endif

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;
typedef unsigned char u8;

struct bwt_consts {  // as the exact kernel's
  u64 primary, seq_len;
  u64 L2[5];
};

struct aln_params {  // bwa aln's options (gap_opt_t), max_gapo already limited for the batch
  int s_mm, s_gapo, s_gape;
  int max_gapo, max_gape, gape_counts;
  int indel_end_skip, max_del_occ, max_entries;
  int seed_len, max_seed_diff, max_top2;
  int log_gap, non_stop;
};

#define NIL 0xfffu
#define HANDED_BACK 0xffffffffu

struct entry {
  u64 k, l;
  int i, last_diff;
  u32 n_mm, n_gapo, n_gape, n_ins, state;
};

__device__ __forceinline__ uint4 ldg4(const u32* __restrict__ p) { return __ldg(reinterpret_cast<const uint4*>(p)); }

__device__ __forceinline__ u32 count_base(u32 w, u32 c) {
  const u32 x = w ^ (c * 0x55555555u);
  return __popc(~(x | (x >> 1)) & 0x55555555u);
}

//@gi begin
// bwa's bwt_occ4: occurrences of the four bases in BWT rows [0, k] (k == ~0: none).
__device__ void occ4(const u32* __restrict__ bwt, const bwt_consts& bc, u64 k, u64 cnt[4]) {
  if (k == ~0ull) {
    cnt[0] = cnt[1] = cnt[2] = cnt[3] = 0;
    return;
  }
  if (k >= bc.primary) k--;
  const u32* p = bwt + (k >> 7) * 16;
  const uint4 c01 = ldg4(p), c23 = ldg4(p + 4), w03 = ldg4(p + 8), w47 = ldg4(p + 12);
  cnt[0] = (static_cast<u64>(c01.y) << 32) | c01.x;
  cnt[1] = (static_cast<u64>(c01.w) << 32) | c01.z;
  cnt[2] = (static_cast<u64>(c23.y) << 32) | c23.x;
  cnt[3] = (static_cast<u64>(c23.w) << 32) | c23.z;
  const u32 words[8] = {w03.x, w03.y, w03.z, w03.w, w47.x, w47.y, w47.z, w47.w};
  const int full = static_cast<int>((k & 127) >> 4);
  const int r = static_cast<int>(~k & 15);
  u32 n0 = 0, n1 = 0, n2 = 0, n3 = 0;
  for (int w = 0; w < full; w++) {
    n0 += count_base(words[w], 0);
    n1 += count_base(words[w], 1);
    n2 += count_base(words[w], 2);
    n3 += count_base(words[w], 3);
  }
  const u32 last = words[full] & ~((1u << (r << 1)) - 1u);
  n0 += count_base(last, 0) - static_cast<u32>(r);  // the masked-off fields read as A
  n1 += count_base(last, 1);
  n2 += count_base(last, 2);
  n3 += count_base(last, 3);
  cnt[0] += n0;
  cnt[1] += n1;
  cnt[2] += n2;
  cnt[3] += n3;
}

// bwa's bwt_occ: occurrences of base c in rows [0, k].
__device__ u64 occ1(const u32* __restrict__ bwt, const bwt_consts& bc, u64 k, u32 c) {
  if (k == bc.seq_len) return bc.L2[c + 1] - bc.L2[c];
  if (k == ~0ull) return 0;
  if (k >= bc.primary) k--;
  const u32* p = bwt + (k >> 7) * 16;
  u64 n = (static_cast<u64>(__ldg(p + 2 * c + 1)) << 32) | __ldg(p + 2 * c);
  const int full = static_cast<int>((k & 127) >> 4);
  const int r = static_cast<int>(~k & 15);
  u32 m = 0;
  for (int w = 0; w < full; w++) m += count_base(__ldg(p + 8 + w), c);
  m += count_base(__ldg(p + 8 + full) & ~((1u << (r << 1)) - 1u), c);
  if (c == 0) m -= static_cast<u32>(r);
  return n + m;
}

__device__ __forceinline__ u32 read_base(const u32* __restrict__ seqs, u32 base, int j) {
  return (__ldg(seqs + base + static_cast<u32>(j >> 3) * 32) >> ((j & 7) * 4)) & 15;
}

// bwt_cal_width over str[0..len) where str[j] = the read's base len-1-j (bwa computes it on the
// reversed read), i.e. positions from..from+len of the reversed read.
__device__ void cal_width(const u32* __restrict__ bwt, const bwt_consts& bc, const u32* __restrict__ seqs, u32 base,
                          int read_len, int from, int len, u64* ww, u16* wb) {
  u64 k = 0, l = bc.seq_len;
  int bid = 0;
  for (int i = 0; i < len; i++) {
    const u32 c = read_base(seqs, base, read_len - 1 - (from + i));
    if (c < 4) {
      const u64 ok = occ1(bwt, bc, k - 1, c), ol = occ1(bwt, bc, l, c);
      k = bc.L2[c] + ok + 1;
      l = bc.L2[c] + ol;
    }
    if (k > l || c > 3) {
      k = 0;
      l = bc.seq_len;
      bid++;
    }
    ww[i] = l - k + 1;
    wb[i] = static_cast<u16>(bid);
  }
  ww[len] = 0;
  wb[len] = static_cast<u16>(bid + 1);
}

__device__ __forceinline__ uint4 pack_entry(const entry& e, u32 link) {
  uint4 v = {};
  v.x = static_cast<u32>(e.k);
  v.y = static_cast<u32>(e.l);
  v.z = static_cast<u32>(e.k >> 32 & 15) | static_cast<u32>(e.l >> 32 & 15) << 4 | static_cast<u32>(e.i) << 8 |
        static_cast<u32>(e.last_diff) << 17 | e.n_mm << 26;
  v.w = e.n_gapo | e.n_gape << 4 | e.n_ins << 10 | e.state << 16 | link << 18;
  return v;
}
__device__ __forceinline__ void unpack_entry(const uint4& v, entry& e, u32& link) {
  e.k = static_cast<u64>(v.z & 15) << 32 | v.x;
  e.l = static_cast<u64>(v.z >> 4 & 15) << 32 | v.y;
  e.i = static_cast<int>(v.z >> 8 & 511);
  e.last_diff = static_cast<int>(v.z >> 17 & 511);
  e.n_mm = v.z >> 26;
  e.n_gapo = v.w & 15;
  e.n_gape = v.w >> 4 & 63;
  e.n_ins = v.w >> 10 & 63;
  e.state = v.w >> 16 & 3;
  link = v.w >> 18 & 0xfff;
}

struct gstack {
  uint4* pool;       // this thread's entries, stride n_threads
  u32 stride;
  u16 head[MAX_BUCKETS];
  u32 free_head, bump, stored;
  u64 n_entries;     // bwa's count (stored + not stored)
  int best, dead_above, overflow;
};

__device__ void st_push(gstack& s, const aln_params& p, int i, u64 k, u64 l, u32 n_mm, u32 n_gapo, u32 n_gape, u32 n_ins,
                        u32 state, int is_diff) {
  const int score = static_cast<int>(n_mm) * p.s_mm + static_cast<int>(n_gapo) * p.s_gapo + static_cast<int>(n_gape) * p.s_gape;
  s.n_entries++;
  if (score > s.dead_above) return;  // could only end the search: counted, not stored
  if (score >= MAX_BUCKETS) {
    s.overflow = 1;
    return;
  }
  u32 slot;
  if (s.free_head != NIL) {
    slot = s.free_head;
    entry tmp = {};
    u32 link;
    unpack_entry(s.pool[static_cast<u64>(slot) * s.stride], tmp, link);
    s.free_head = link;
  } else if (s.bump < STACK_CAP) {
    slot = s.bump++;
  } else {
    s.overflow = 1;
    return;
  }
  entry e = {};  // value-initialised, as every entry, the stack, the read, the hits and the counts: reads zeros if an edit skips a field
  e.k = k;
  e.l = l;
  e.i = i;
  e.last_diff = is_diff ? i : 0;
  e.n_mm = n_mm;
  e.n_gapo = n_gapo;
  e.n_gape = n_gape;
  e.n_ins = n_ins;
  e.state = state;
  s.pool[static_cast<u64>(slot) * s.stride] = pack_entry(e, s.head[score]);
  s.head[score] = static_cast<u16>(slot);
  s.stored++;
  if (s.best > score) s.best = score;
}

__device__ void st_pop(gstack& s, entry& e) {
  const u32 slot = s.head[s.best];
  u32 link;
  unpack_entry(s.pool[static_cast<u64>(slot) * s.stride], e, link);
  s.head[s.best] = static_cast<u16>(link);
  entry f = e;
  s.pool[static_cast<u64>(slot) * s.stride] = pack_entry(f, s.free_head);
  s.free_head = slot;
  s.stored--;
  s.n_entries--;
  if (s.head[s.best] == NIL) {
    int b = s.best + 1;
    while (b < MAX_BUCKETS && s.head[b] == NIL) b++;
    s.best = b;
  }
}

// Releases the stored entries of the buckets above `above` (they could only end the search).
__device__ void st_release_above(gstack& s, int above) {
  for (int b = above + 1; b < MAX_BUCKETS; b++) {
    u32 slot = s.head[b];
    while (slot != NIL) {
      entry e = {};
      u32 link;
      unpack_entry(s.pool[static_cast<u64>(slot) * s.stride], e, link);
      s.pool[static_cast<u64>(slot) * s.stride] = pack_entry(e, s.free_head);
      s.free_head = slot;
      s.stored--;
      slot = link;
    }
    s.head[b] = static_cast<u16>(NIL);
  }
  while (s.best < MAX_BUCKETS && s.head[s.best] == NIL) s.best++;
}

__device__ int int_log2(u32 v) {
  int c = 0;
  if (v & 0xffff0000u) {
    v >>= 16;
    c |= 16;
  }
  if (v & 0xff00) {
    v >>= 8;
    c |= 8;
  }
  if (v & 0xf0) {
    v >>= 4;
    c |= 4;
  }
  if (v & 0xc) {
    v >>= 2;
    c |= 2;
  }
  if (v & 0x2) c |= 1;
  return c;
}

// The search of one read; returns the number of intervals written, or HANDED_BACK.
__device__ u32 search_read(const u32* __restrict__ bwt, const bwt_consts& bc, const aln_params& p, int opt_max_diff,
                           const u32* __restrict__ seqs, u32 base, int len, gstack& s, u64* __restrict__ out) {
  u8 seq[MAX_LEN] = {};  // value-initialised, as the hits and counts; the width arrays ww, sw, wb, sb are not (see the end of the file)
  u64 ww[MAX_LEN + 1], sw[MAX_LEN + 1];
  u16 wb[MAX_LEN + 1], sb[MAX_LEN + 1];
  u64 found_k[ALN_CAP] = {}, found_l[ALN_CAP] = {};
  cal_width(bwt, bc, seqs, base, len, 0, len, ww, wb);
  const int use_seed = len > p.seed_len;
  const long long seed_len = p.seed_len < len ? p.seed_len : 0x7fffffff;
  if (use_seed) cal_width(bwt, bc, seqs, base, len, len - p.seed_len, p.seed_len, sw, sb);
  int n_n = 0;
  for (int j = 0; j < len; j++) {  // the reverse complement: seq[j] = complement of base len-1-j
    const u32 c = read_base(seqs, base, len - 1 - j);
    seq[j] = static_cast<u8>(c > 3 ? 4 : 3 - c);
    n_n += c > 3;
  }
  int max_diff = opt_max_diff;
  if (n_n > max_diff) return 0;
  int best_score = (opt_max_diff + 1) * p.s_mm + (p.max_gapo + 1) * p.s_gapo + (p.max_gape + 1) * p.s_gape;
  u64 best_cnt = 0;
  u32 n_aln = 0;
  for (int b = 0; b < MAX_BUCKETS; b++) s.head[b] = static_cast<u16>(NIL);
  s.free_head = NIL;
  s.bump = 0;
  s.stored = 0;
  s.n_entries = 0;
  s.best = MAX_BUCKETS;
  s.dead_above = 0x7fffffff;
  s.overflow = 0;
  st_push(s, p, len, 0, bc.seq_len, 0, 0, 0, 0, 0, 0);
  u64 cnt_k[4] = {}, cnt_l[4] = {};
  while (s.n_entries) {
    if (s.overflow) return HANDED_BACK;
    if (s.n_entries > static_cast<u64>(p.max_entries)) break;
    if (s.stored == 0) break;  // only entries that end the search are left
    entry e = {};
    st_pop(s, e);
    u64 k = e.k, l = e.l;
    int i = e.i;
    const int score_e = static_cast<int>(e.n_mm) * p.s_mm + static_cast<int>(e.n_gapo) * p.s_gapo + static_cast<int>(e.n_gape) * p.s_gape;
    if (!p.non_stop && score_e > best_score + p.s_mm) break;
    int m = max_diff - static_cast<int>(e.n_mm + e.n_gapo);
    if (p.gape_counts) m -= static_cast<int>(e.n_gape);
    if (m < 0) continue;
    int m_seed = 0;
    if (use_seed) {
      m_seed = p.max_seed_diff - static_cast<int>(e.n_mm + e.n_gapo);
      if (p.gape_counts) m_seed -= static_cast<int>(e.n_gape);
    }
    if (i > 0 && m < static_cast<int>(wb[i - 1])) continue;
    int hit = 0;
    if (i == 0) {
      hit = 1;
    } else if (m == 0 && (e.state == 0 || p.gape_counts || static_cast<int>(e.n_gape) == p.max_gape)) {
      int ok = 1;
      for (int j = i - 1; j >= 0; j--) {  // the rest exactly
        const u32 c = seq[j];
        if (c > 3) {
          ok = 0;
          break;
        }
        const u64 ok_ = occ1(bwt, bc, k - 1, c), ol = occ1(bwt, bc, l, c);
        k = bc.L2[c] + ok_ + 1;
        l = bc.L2[c] + ol;
        if (k > l) {
          ok = 0;
          break;
        }
      }
      if (!ok) continue;
      hit = 1;
    }
    if (hit) {
      const int score = score_e;
      if (n_aln == 0) {
        best_score = score;
        int best_diff = static_cast<int>(e.n_mm + e.n_gapo);
        if (p.gape_counts) best_diff += static_cast<int>(e.n_gape);
        if (!p.non_stop) {
          max_diff = best_diff + 1 > opt_max_diff ? opt_max_diff : best_diff + 1;
          s.dead_above = best_score + p.s_mm;
          st_release_above(s, s.dead_above);
        }
      }
      if (score == best_score) best_cnt += l - k + 1;
      else if (best_cnt > static_cast<u64>(p.max_top2)) break;
      int add = 1;
      if (e.n_gapo) {
        for (u32 j = 0; j < n_aln; j++)
          if (found_k[j] == k && found_l[j] == l) {
            add = 0;
            break;
          }
      }
      if (add) {
        if (n_aln == ALN_CAP) return HANDED_BACK;
        const u64 x = l - k + 1;
        u64 jj = 0;
        for (int t = 0; t < e.last_diff; t++) {  // shadow the interval found in the widths
          if (ww[t] > x) {
            ww[t] -= x;
          } else if (ww[t] == x) {
            wb[t] = 1;
            ww[t] = bc.seq_len - (++jj);
          }
        }
        const u32 n_del = e.n_gapo + e.n_gape - e.n_ins;
        found_k[n_aln] = k;
        found_l[n_aln] = l;
        out[3 * n_aln] = k;
        out[3 * n_aln + 1] = l;
        out[3 * n_aln + 2] = static_cast<u64>(e.n_mm) | static_cast<u64>(e.n_gapo) << 8 | static_cast<u64>(e.n_gape) << 16 |
                             static_cast<u64>(e.n_ins) << 24 | static_cast<u64>(n_del) << 34 | static_cast<u64>(score) << 44;
        n_aln++;
      }
      continue;
    }
    i--;
    occ4(bwt, bc, k - 1, cnt_k);
    occ4(bwt, bc, l, cnt_l);
    const u64 occ = l - k + 1;
    int allow_diff = 1, allow_m = 1;
    if (i > 0) {
      const long long ii = static_cast<long long>(i) - (static_cast<long long>(len) - seed_len);
      if (static_cast<int>(wb[i - 1]) > m - 1) allow_diff = 0;
      else if (static_cast<int>(wb[i - 1]) == m - 1 && static_cast<int>(wb[i]) == m - 1 && ww[i - 1] == ww[i]) allow_m = 0;
      if (use_seed && ii > 0) {
        if (static_cast<int>(sb[ii - 1]) > m_seed - 1) allow_diff = 0;
        else if (static_cast<int>(sb[ii - 1]) == m_seed - 1 && static_cast<int>(sb[ii]) == m_seed - 1 && sw[ii - 1] == sw[ii])
          allow_m = 0;
      }
    }
    const int tmp = p.log_gap ? int_log2(e.n_gape + e.n_gapo) / 2 + 1 : static_cast<int>(e.n_gapo + e.n_gape);
    if (allow_diff && i >= p.indel_end_skip + tmp && len - i >= p.indel_end_skip + tmp) {
      if (e.state == 0) {
        if (static_cast<int>(e.n_gapo) < p.max_gapo) {
          st_push(s, p, i, k, l, e.n_mm, e.n_gapo + 1, e.n_gape, e.n_ins + 1, 1, 1);
          for (u32 c = 0; c < 4; c++) {
            const u64 kk = bc.L2[c] + cnt_k[c] + 1, ll = bc.L2[c] + cnt_l[c];
            if (kk <= ll) st_push(s, p, i + 1, kk, ll, e.n_mm, e.n_gapo + 1, e.n_gape, e.n_ins, 2, 1);
          }
        }
      } else if (e.state == 1) {
        if (static_cast<int>(e.n_gape) < p.max_gape) st_push(s, p, i, k, l, e.n_mm, e.n_gapo, e.n_gape + 1, e.n_ins + 1, 1, 1);
      } else {
        if (static_cast<int>(e.n_gape) < p.max_gape &&
            (static_cast<int>(e.n_gape + e.n_gapo) < max_diff || occ < static_cast<u64>(p.max_del_occ))) {
          for (u32 c = 0; c < 4; c++) {
            const u64 kk = bc.L2[c] + cnt_k[c] + 1, ll = bc.L2[c] + cnt_l[c];
            if (kk <= ll) st_push(s, p, i + 1, kk, ll, e.n_mm, e.n_gapo, e.n_gape + 1, e.n_ins, 2, 1);
          }
        }
      }
    }
    if (allow_diff && allow_m) {
      for (u32 j = 1; j <= 4; j++) {
        const u32 c = (seq[i] + j) & 3;
        const u32 is_mm = j != 4 || seq[i] > 3;
        const u64 kk = bc.L2[c] + cnt_k[c] + 1, ll = bc.L2[c] + cnt_l[c];
        if (kk <= ll) st_push(s, p, i, kk, ll, e.n_mm + is_mm, e.n_gapo, e.n_gape, e.n_ins, 0, static_cast<int>(is_mm));
      }
    } else if (seq[i] < 4) {
      const u32 c = seq[i];
      const u64 kk = bc.L2[c] + cnt_k[c] + 1, ll = bc.L2[c] + cnt_l[c];
      if (kk <= ll) st_push(s, p, i, kk, ll, e.n_mm, e.n_gapo, e.n_gape, e.n_ins, 0, 0);
    }
  }
  if (s.overflow) return HANDED_BACK;
  return n_aln;
}

extern "C" __global__ void __launch_bounds__(BLOCK_W) cuda_inexact_match(
    const u32* __restrict__ bwt, const bwt_consts bc, const aln_params p, const int* __restrict__ max_diff,
    const u32* __restrict__ seqs, const u32* __restrict__ seq_lens, const u32 stride, const u32 n_seqs,
    u32* __restrict__ next_read, uint4* __restrict__ stack, const u32 n_threads, u32* __restrict__ n_out,
    u64* __restrict__ aln_out) {
  const u32 tid = blockIdx.x * BLOCK_W + threadIdx.x;
  if (tid >= n_threads) return;
  gstack s = {};
  s.pool = stack + tid;
  s.stride = n_threads;
  for (;;) {
    const u32 r = atomicAdd(next_read, 1u);
    if (r >= n_seqs) break;
    const int len = static_cast<int>(seq_lens[r]);
    u32 n = HANDED_BACK;
    if (len <= MAX_LEN) {
      const u32 base = (r >> 5) * stride * 32 + (r & 31);
      n = search_read(bwt, bc, p, max_diff[len], seqs, base, len, s, aln_out + static_cast<u64>(r) * ALN_CAP * 3);
    }
    n_out[r] = n;
  }
}
//@gi end

// Reads before writes (docs/GI.md). NVRTC's warning #549 (a refusal in nvrtc_compile) fires only for a
// scalar read in straight-line code before any assignment, never for an array or struct. So the read
// (seq), the hits (found_k, found_l), the occurrence counts (cnt_k, cnt_l), the stack (gstack: bucket
// heads and counters, once per thread) and every entry packed or unpacked (entry, uint4 v) are
// value-initialised: a GI edit that skips a fill reads zeros. Cost with ptxas 13.0: same registers and
// stack frame, 152 more instructions (3,728 -> 3,880), about 600 bytes of local stores per read.
// Left as they are, for cost: the width arrays ww, sw, wb, sb (5,140 bytes per read; zeroing them too
// would add 392 more instructions and about 320 16-byte local stores to every read), so an edit that
// skips a cal_width store still reads undefined values there. Also left: the global stack pool (a
// slot is read only after it was pushed) and the scalars (an initialiser would silence #549).
