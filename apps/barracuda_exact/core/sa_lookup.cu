// Text positions of SA rows on the GPU: bwa's bwt_sa (LF-walk from a row to the nearest sampled
// row, then the sampled SA), exactly as BwtIndex::sa_at on the CPU (core/index.cpp), for the rows
// the SAM record of a read needs: row k of its interval (k, l) and, for 2..4 hits, rows k+1..l too
// (bwa's XA). A support kernel of the GPU backend (not evolved): 4 threads per read, thread j
// resolves row k + j when the read has more than j hits and at most 4 (1 row beyond that).
//
// occ: bwa's .bwt body (per 128 BWT positions four uint64 counts then eight uint32 words of 16 2-bit
// bases, '$' removed at row `primary`); sa: sa[j] = SA[j * sa_intv] (sa_intv a power of two);
// kl: (k, l) per read from the exact-match kernel; out: 4 positions per read (unused slots untouched).

struct SaConsts {
  unsigned long long primary, seq_len;
  unsigned long long L2[5];
  unsigned long long sa_intv;
};

__device__ __forceinline__ unsigned count_in_word(unsigned w, int c) {
  const unsigned x = w ^ (static_cast<unsigned>(c) * 0x55555555u);
  return __popc(~(x | (x >> 1)) & 0x55555555u);
}

// bwa's bwt_occ: occurrences of c in BWT rows [0, k] ('$' excluded); k == -1 gives 0.
__device__ unsigned long long occ_at(const unsigned* __restrict__ occ, const SaConsts& s, unsigned long long k, int c) {
  if (k == s.seq_len) return s.L2[c + 1] - s.L2[c];
  if (k == ~0ull) return 0;
  k -= (k >= s.primary);
  const unsigned* p = occ + (k >> 7 << 4);
  unsigned long long n = static_cast<unsigned long long>(p[2 * c]) | (static_cast<unsigned long long>(p[2 * c + 1]) << 32);
  p += 8;
  const unsigned last = static_cast<unsigned>((k & 127) >> 4), r = static_cast<unsigned>(k & 15);
  for (unsigned w = 0; w < last; ++w) n += count_in_word(p[w], c);
  const unsigned masked = p[last] & ~((1u << ((15 - r) << 1)) - 1u);
  n += count_in_word(masked, c);
  if (c == 0) n -= 15 - r;  // the masked-off fields read as A
  return n;
}

__device__ __forceinline__ int bwt_base(const unsigned* __restrict__ occ, unsigned long long i) {
  return static_cast<int>(occ[(i >> 7 << 4) + 8 + ((i & 127) >> 4)] >> ((~i & 15) << 1) & 3);
}

extern "C" __global__ void sa_lookup(const unsigned* __restrict__ occ, SaConsts s, const unsigned long long* __restrict__ sa,
                                     const unsigned long long* __restrict__ kl, unsigned n_reads,
                                     unsigned long long* __restrict__ out) {
  const unsigned long long t = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const unsigned long long i = t >> 2;
  const unsigned j = static_cast<unsigned>(t & 3);
  if (i >= n_reads) return;
  const unsigned long long k0 = kl[2 * i], l0 = kl[2 * i + 1];
  // Rows without a position (no hit, k = 0: an ambiguous base; beyond the rows looked up) hold ~0:
  // every output word is written, so the download never copies uninitialised memory (initcheck).
  const bool hit = !(k0 == 0 || k0 > l0);
  const unsigned long long count = hit ? l0 - k0 + 1 : 0;
  const unsigned long long rows = count <= 4 ? count : 1;
  if (j >= rows) {
    out[4 * i + j] = ~0ull;
    return;
  }
  unsigned long long k = k0 + j, steps = 0;
  const unsigned long long mask = s.sa_intv - 1;
  while (k & mask) {
    ++steps;
    if (k == s.primary) {
      k = 0;
    } else {
      const int c = k < s.primary ? bwt_base(occ, k) : bwt_base(occ, k - 1);
      k = s.L2[c] + occ_at(occ, s, k, c);
    }
  }
  out[4 * i + j] = steps + sa[k / s.sa_intv];  // sa[0] is (uint64)-1, as in bwa
}
