// bc_simreads: fast simulated single-end reads for the device benchmarks (pipeline_10m.sh), written
// as gzip FASTQ (libdeflate, one member per 65,536 reads, compressed in parallel) the way a
// sequencer's FASTQ.gz arrives. Reads of LEN bases from the reference's contigs (ACGT windows only),
// both strands; per read: 50% exact, else 1-4 substitutions, and in 2% of reads a 1-3 base
// insertion or deletion (work for bwa aln's gapped search); NovaSeq-like binned qualities.
// Deterministic: read i depends only on SEED and i (so the first N reads of a larger run are the
// reads of a smaller one). Usage: bc_simreads REF.fa[.gz] N OUT.fq.gz [LEN=100] [SEED=1] [THREADS=0]
#include <libdeflate.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "evk/error.hpp"
#include "io/sequences.hpp"

namespace bc = evk::barracuda_exact;

namespace {

constexpr std::size_t kChunk = 65536;

struct Ref {
  std::string fwd;                  // the contigs concatenated, upper case
  std::vector<std::size_t> starts;  // window starts without non-ACGT bases or contig ends
};

std::string chunk_text(const Ref& ref, std::size_t first, std::size_t n, int len, std::uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + first);
  std::string t, s, q(static_cast<std::size_t>(len), 'F');
  t.reserve(n * (2 * static_cast<std::size_t>(len) + 24));
  const std::size_t L = static_cast<std::size_t>(len);
  for (std::size_t i = first; i < first + n; ++i) {
    const std::size_t p = ref.starts[rng() % ref.starts.size()];
    s.assign(ref.fwd, p, L + 3);  // 3 spare bases for a deletion
    const unsigned kind = static_cast<unsigned>(rng() % 100);
    if (kind < 2) {  // an indel of 1-3 bases away from the ends
      const std::size_t at = 10 + rng() % (L - 20), k = 1 + rng() % 3;
      if (rng() & 1) s.erase(at, k);
      else s.insert(at, k, "ACGT"[rng() & 3]);
    }
    s.resize(L);
    if (kind >= 50) {
      const unsigned subs = 1 + static_cast<unsigned>(rng() % 4);
      for (unsigned k = 0; k < subs; ++k) {
        char& c = s[rng() % L];
        c = "ACGT"[(std::string("ACGT").find(c) + 1 + rng() % 3) & 3];
      }
    }
    if (rng() & 1) {  // reverse strand
      std::reverse(s.begin(), s.end());
      for (auto& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
    }
    for (auto& c : q) {
      const unsigned r = static_cast<unsigned>(rng() % 100);
      c = r < 85 ? 'F' : r < 93 ? ':' : r < 98 ? ',' : '#';
    }
    t += "@sim";
    t += std::to_string(i);
    t += '\n';
    t += s;
    t += "\n+\n";
    t += q;
    t += '\n';
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: bc_simreads REF.fa[.gz] N OUT.fq.gz [LEN=100] [SEED=1] [THREADS=0]\n");
    return 2;
  }
  try {
    const std::size_t n = std::strtoull(argv[2], nullptr, 10);
    const int len = argc > 4 ? std::atoi(argv[4]) : 100;
    const std::uint64_t seed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 1;
    int threads = argc > 6 ? std::atoi(argv[6]) : 0;
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (n == 0 || len < 30 || len > 1000) {
      std::fprintf(stderr, "bc_simreads: N must be > 0 and LEN in 30..1000\n");
      return 2;
    }
    Ref ref;
    for (const auto& c : bc::read_reference(argv[1])) {
      const std::size_t base = ref.fwd.size();
      for (char ch : c.seq) ref.fwd += static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
      std::size_t bad = 0;  // bases since the last non-ACGT
      const std::size_t need = static_cast<std::size_t>(len) + 3;
      for (std::size_t i = 0; i < c.seq.size(); ++i) {
        const char ch = ref.fwd[base + i];
        bad = (ch == 'A' || ch == 'C' || ch == 'G' || ch == 'T') ? bad + 1 : 0;
        if (bad >= need) ref.starts.push_back(base + i + 1 - need);
      }
    }
    if (ref.starts.empty()) {
      std::fprintf(stderr, "bc_simreads: %s: no window of %d ACGT bases\n", argv[1], len + 3);
      return 2;
    }
    std::ofstream out(argv[3], std::ios::binary);
    if (!out) {
      std::fprintf(stderr, "bc_simreads: %s: cannot open for writing\n", argv[3]);
      return 2;
    }
    const std::size_t chunks = (n + kChunk - 1) / kChunk;
    for (std::size_t c0 = 0; c0 < chunks; c0 += static_cast<std::size_t>(threads)) {
      const std::size_t c1 = std::min(chunks, c0 + static_cast<std::size_t>(threads));
      std::vector<std::string> member(c1 - c0);
      std::vector<std::thread> ts;
      for (std::size_t c = c0; c < c1; ++c)
        ts.emplace_back([&, c] {
          const std::size_t first = c * kChunk;
          const std::string t = chunk_text(ref, first, std::min(kChunk, n - first), len, seed);
          libdeflate_compressor* z = libdeflate_alloc_compressor(6);
          std::string& m = member[c - c0];
          m.resize(libdeflate_gzip_compress_bound(z, t.size()));
          m.resize(libdeflate_gzip_compress(z, t.data(), t.size(), m.data(), m.size()));
          libdeflate_free_compressor(z);
        });
      for (auto& t : ts) t.join();
      for (const auto& m : member) out.write(m.data(), static_cast<std::streamsize>(m.size()));
    }
    out.close();
    if (!out) {
      std::fprintf(stderr, "bc_simreads: %s: write failed\n", argv[3]);
      return 2;
    }
    return 0;
  } catch (const evk::InputError& e) {
    std::fprintf(stderr, "bc_simreads: %s\n", e.what());
    return 2;
  }
}
