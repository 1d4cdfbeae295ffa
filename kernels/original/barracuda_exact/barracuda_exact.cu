// BarraCUDA's exact-match kernel (cuda_find_exact_matches, Langdon et al., GECCO 2015), written
// for EvoKernels. Each query DNA sequence is searched backwards through bwa 0.7's FM-index exactly
// as `bwa aln` does for its exact branch: the search runs over the read's reverse complement, so the
// read is consumed from its first base, complemented. The result per read is the SA interval (k, l):
//   k > l  no hit;   k == 0  the read holds an ambiguous base (search stopped, the paper's k = 0).
//
// Data layout (prepared by the host, apps/barracuda_exact/core/pack.cpp):
//   bwt   bwa's .bwt body: per 128 BWT positions 4 uint64 counts + 8 uint32 words of 16 2-bit bases
//         (64 bytes, 16-byte aligned), padded by 16 words so a whole-block load never runs off;
//   seqs  reads packed 4 bits per base, 8 bases per uint32 (base j at bits 4*(j%8)), blocked by 32
//         reads: word w of read r is at ((r/32)*stride + w)*32 + r%32 ("sequence_stride");
//   seq_index[r] = offset of read r's word 0 (for direct_index off); seq_lens[r] = its length.
//
// The paper's 15 fixed parameters (Table 2) are the macros below; the host rejects illegal
// combinations before compiling (apps/barracuda_exact/core/kernel_config.cpp), the #errors repeat it.
#ifndef BLOCK_W
#define BLOCK_W 64            // threads per block: power of 2 up to 32, or a multiple of 32 up to 1024
#endif
#ifndef cache_threads
#define cache_threads 0       // threads per query loading the BWT cache (1,2,4,8,16,32); 0 = not used
#endif
#ifndef kl_par
#define kl_par 0              // compute the occurrences for k and l in two threads (2x threads/query)
#endif
#ifndef occ_par
#define occ_par 0             // count the occurrence words in parallel over the cache_threads
#endif
#ifndef many_blocks
#define many_blocks 0         // 2-D grid so more than 65535 blocks run in one launch
#endif
#ifndef direct_sequence
#define direct_sequence 1     // read bases straight from global memory (else buffer the query locally)
#endif
#ifndef direct_index
#define direct_index 1        // query offset = index * stride (all padded to one size); else seq_index[]
#endif
#ifndef sequence_global
#define sequence_global 1     // read queries from global memory (else through a texture object)
#endif
#ifndef sequence_shift81
#define sequence_shift81 1    // unpack bases with >> (off: no longer supported)
#endif
#ifndef sequence_stride
#define sequence_stride 1     // queries blocked by 32 (off: no longer supported)
#endif
#ifndef mycache4
#define mycache4 1            // load the BWT cache in 16-byte (4 int) units
#endif
#ifndef mycache2
#define mycache2 0            // load it in 8-byte units (only when mycache4 is off; neither: 1 int)
#endif
#ifndef direct_global_bwt
#define direct_global_bwt 0   // plain global loads of the BWT (else __ldg, the read-only path)
#endif
#ifndef cache_global_bwt
#define cache_global_bwt 1    // keep the current 128-base BWT block in a per-thread cache
#endif
#ifndef scache_global_bwt
#define scache_global_bwt 0   // hold that cache in 4 uint4 scalars (registers) rather than an array
#endif
#ifndef MAX_READ_WORDS
#define MAX_READ_WORDS 128    // longest query / 8 (1024 bases), for the local buffer
#endif

#if !sequence_shift81 || !sequence_stride
#error "sequence_shift81 and sequence_stride must be on (off is no longer supported)"
#endif
#if occ_par && !cache_threads
#error "occ_par needs cache_threads"
#endif
#if (cache_threads || scache_global_bwt) && !cache_global_bwt
#error "cache_threads and scache_global_bwt need cache_global_bwt"
#endif

#if cache_threads > 0
#define CT cache_threads
#else
#define CT 1
#endif
#if kl_par
#define TPS (2 * CT)
#else
#define TPS CT
#endif
#if mycache4
#define UNIT 4
#elif mycache2
#define UNIT 2
#else
#define UNIT 1
#endif

typedef unsigned int u32;
typedef unsigned long long u64;

struct bwt_consts {
  u64 primary, seq_len;
  u64 L2[5];
};

__device__ __forceinline__ u32 bwt_load1(const u32* __restrict__ p) {
#if direct_global_bwt
  return *p;
#else
  return __ldg(p);
#endif
}
__device__ __forceinline__ uint2 bwt_load2(const u32* __restrict__ p) {
#if direct_global_bwt
  return *reinterpret_cast<const uint2*>(p);
#else
  return __ldg(reinterpret_cast<const uint2*>(p));
#endif
}
__device__ __forceinline__ uint4 bwt_load4(const u32* __restrict__ p) {
#if direct_global_bwt
  return *reinterpret_cast<const uint4*>(p);
#else
  return __ldg(reinterpret_cast<const uint4*>(p));
#endif
}
__device__ __forceinline__ u32 seq_load(const u32* __restrict__ seqs, cudaTextureObject_t tex, u32 i) {
#if sequence_global
  return __ldg(seqs + i);
#else
  return tex1Dfetch<u32>(tex, static_cast<int>(i));
#endif
}
// Occurrences of base c among the 16 2-bit fields of w.
__device__ __forceinline__ u32 count_base(u32 w, u32 c) {
  const u32 x = w ^ (c * 0x55555555u);
  return __popc(~(x | (x >> 1)) & 0x55555555u);
}
__device__ __forceinline__ u32 uget(const uint4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }
__device__ __forceinline__ void uset(uint4& v, int i, u32 x) {
  if (i == 0) v.x = x;
  else if (i == 1) v.y = x;
  else if (i == 2) v.z = x;
  else v.w = x;
}

// The BWT block cache: 16 words of the current 128-base block, as an array or as 4 uint4 scalars.
struct bwt_cache {
#if scache_global_bwt
  uint4 s0, s1, s2, s3;
  __device__ __forceinline__ u32 get(int w) const {
    const uint4& v = w < 4 ? s0 : w < 8 ? s1 : w < 12 ? s2 : s3;
    return uget(v, w & 3);
  }
  __device__ __forceinline__ void set(int w, u32 x) {
    if (w < 4) uset(s0, w & 3, x);
    else if (w < 8) uset(s1, w & 3, x);
    else if (w < 12) uset(s2, w & 3, x);
    else uset(s3, w & 3, x);
  }
#else
  u32 a[16];
  __device__ __forceinline__ u32 get(int w) const { return a[w]; }
  __device__ __forceinline__ void set(int w, u32 x) { a[w] = x; }
#endif
};

//@gi begin
// Loads 128-base block `blk` into the cache, split over the query's cache_threads.
__device__ void load_block(bwt_cache& cache, const u32* __restrict__ bwt, u64 blk, int ct_lane, u32 gmask) {
  const u32* p = bwt + blk * 16;
#if UNIT == 4
  for (int u = ct_lane; u < 4; u += CT) {
    const uint4 v = bwt_load4(p + 4 * u);
    cache.set(4 * u, v.x);
    cache.set(4 * u + 1, v.y);
    cache.set(4 * u + 2, v.z);
    cache.set(4 * u + 3, v.w);
  }
#elif UNIT == 2
  for (int u = ct_lane; u < 8; u += CT) {
    const uint2 v = bwt_load2(p + 2 * u);
    cache.set(2 * u, v.x);
    cache.set(2 * u + 1, v.y);
  }
#else
  for (int u = ct_lane; u < 16; u += CT) {
    cache.set(u, bwt_load1(p + u));
  }
#endif
#if CT > 1
  for (int w = 0; w < 16; w++) {
    cache.set(w, __shfl_sync(gmask, cache.get(w), (w / UNIT) % CT, CT));
  }
#endif
}

// bwa's bwt_occ: occurrences of base c in BWT rows [0, pos] ('$' excluded).
__device__ u64 occ(const bwt_consts& bc, const u32* __restrict__ bwt, bwt_cache& cache, u64& tag, u64 pos, u32 c,
                   int ct_lane, u32 gmask) {
  if (pos == bc.seq_len) return bc.L2[c + 1] - bc.L2[c];
  if (pos == ~0ull) return 0;
  if (pos >= bc.primary) pos--;
  const u64 blk = pos >> 7;
  const int r = static_cast<int>(pos & 127);
  const int last = r >> 4;
  const u32 mask = ~((1u << ((15 - (r & 15)) << 1)) - 1u);
#if cache_global_bwt
  if (blk != tag) {
    tag = blk;
    load_block(cache, bwt, blk, ct_lane, gmask);
  }
  u64 n = (static_cast<u64>(cache.get(2 * c + 1)) << 32) | cache.get(2 * c);
#else
  const u32* p = bwt + blk * 16;
  u64 n = (static_cast<u64>(bwt_load1(p + 2 * c + 1)) << 32) | bwt_load1(p + 2 * c);
#endif
  u32 cnt = 0;
#if occ_par
  for (int w = ct_lane; w <= last; w += CT) {
    const u32 x = cache.get(8 + w);
    cnt += count_base(w == last ? x & mask : x, c);
  }
  for (int o = CT / 2; o > 0; o >>= 1) {
    cnt += __shfl_xor_sync(gmask, cnt, o, CT);
  }
#else
  for (int w = 0; w < last; w++) {
#if cache_global_bwt
    cnt += count_base(cache.get(8 + w), c);
#else
    cnt += count_base(bwt_load1(p + 8 + w), c);
#endif
  }
#if cache_global_bwt
  cnt += count_base(cache.get(8 + last) & mask, c);
#else
  cnt += count_base(bwt_load1(p + 8 + last) & mask, c);
#endif
#endif
  if (c == 0) cnt -= 15 - (r & 15);
  return n + cnt;
}

extern "C" __global__ void cuda_find_exact_matches(const u32* __restrict__ bwt, const bwt_consts bc,
                                                   const u32* __restrict__ seqs, const cudaTextureObject_t seqs_tex,
                                                   const u32* __restrict__ seq_index, const u32* __restrict__ seq_lens,
                                                   const u32 stride, const u32 n_seqs, const u32 first_seq,
                                                   u64* __restrict__ kl_out) {
#if many_blocks
  const u32 block = blockIdx.y * gridDim.x + blockIdx.x;
#else
  const u32 block = blockIdx.x;
#endif
  const u32 tid = block * BLOCK_W + threadIdx.x;
  const u32 seq = first_seq + tid / TPS;
  const int part = static_cast<int>(tid % TPS);
  if (seq >= n_seqs) return;
  const int ct_lane = part % CT;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const u32 gmask = CT == 32 ? 0xffffffffu : ((1u << (CT & 31)) - 1u) << (lane & ~(CT - 1));
#if kl_par
  const int half = part / CT;
  const u32 smask = TPS == 32 ? 0xffffffffu : ((1u << (TPS & 31)) - 1u) << (lane & ~(TPS - 1));
#endif
#if direct_index
  const u32 base = (seq >> 5) * stride * 32 + (seq & 31);
#else
  const u32 base = seq_index[seq];
#endif
  const u32 len = seq_lens[seq];
#if !direct_sequence
  u32 qbuf[MAX_READ_WORDS] = {};  // value-initialised (as the cache below): an edit that skips its fill reads zeros
  for (u32 w = 0; w < (len + 7) / 8; w++) {
    qbuf[w] = seq_load(seqs, seqs_tex, base + w * 32);
  }
#endif
  bwt_cache cache{};  // value-initialised: a GI edit that reads it unloaded reads zeros, not undefined values
  u64 tag = ~0ull;
  u64 k = 0;
  u64 l = bc.seq_len;
  u32 word = 0;
  for (u32 j = 0; j < len; j++) {
#if direct_sequence
    if ((j & 7) == 0) word = seq_load(seqs, seqs_tex, base + (j >> 3) * 32);
#else
    if ((j & 7) == 0) word = qbuf[j >> 3];
#endif
    const u32 b = (word >> ((j & 7) * 4)) & 15;
    if (b > 3) {
      k = 0;
      l = 0;
      break;
    }
    const u32 c = 3 - b;
#if kl_par
    const u64 mine = occ(bc, bwt, cache, tag, half == 0 ? k - 1 : l, c, ct_lane, gmask);
    const u64 ok = __shfl_sync(smask, mine, 0, TPS);
    const u64 ol = __shfl_sync(smask, mine, CT, TPS);
#else
    const u64 ok = occ(bc, bwt, cache, tag, k - 1, c, ct_lane, gmask);
    const u64 ol = occ(bc, bwt, cache, tag, l, c, ct_lane, gmask);
#endif
    k = bc.L2[c] + ok + 1;
    l = bc.L2[c] + ol;
    if (k > l) break;
  }
  if (part == 0) {
    kl_out[2 * static_cast<u64>(seq)] = k;
    kl_out[2 * static_cast<u64>(seq) + 1] = l;
  }
}
//@gi end

// Reads before writes (docs/GI.md). NVRTC's warning #549 (a refusal in nvrtc_compile) fires only for a
// scalar read in straight-line code before any assignment, never for an array or struct. So the
// per-thread query buffer qbuf (direct_sequence off) and the BWT block cache are value-initialised: a
// GI edit that skips their load reads zeros (wrong intervals, penalised). Default configuration:
// byte-identical cubin; direct_sequence off: 32 more instructions (the 512-byte buffer zeroed once per
// thread).
