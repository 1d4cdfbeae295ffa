// bc_simreads: fast simulated reads for the device benchmarks (pipeline_10m.sh), written as gzip
// FASTQ (libdeflate, one member per 65,536 reads, compressed in parallel) the way a sequencer's
// FASTQ.gz arrives. Reads of LEN bases from the reference's contigs (ACGT windows only), both
// strands; per read: 50% exact, else 1-4 substitutions, and in 2% of reads a 1-3 base insertion or
// deletion (work for bwa aln's gapped search); NovaSeq-like binned qualities.
// Pairs (--pairs OUT2.fq.gz): fragments of normally distributed length (--insert 300, --insert-sd
// 30; within LEN + 3 .. insert + 4 sd), read 1 from one end and read 2 from the other on the
// opposite strand (read 1 forward or reverse at random), each end with the same error model; names
// simI/1 and simI/2.
// Deterministic: read (pair) i depends only on SEED and i (so the first N reads of a larger run are
// the reads of a smaller one).
// Usage: bc_simreads [--pairs OUT2.fq.gz [--insert 300] [--insert-sd 30]] REF.fa[.gz] N OUT.fq.gz
//        [LEN=100] [SEED=1] [THREADS=0]
#include <libdeflate.h>

#include <algorithm>
#include <cmath>
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

struct Pairs {
  double insert = 300, sd = 30;
  std::size_t max_frag = 0;  // longest fragment (the windows' length less 3)
};

char complement(char c) { return c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A'; }

// The error model on s (LEN + 3 bases, read from its start): an indel in 2% of reads, 1-4
// substitutions in half of them; s is cut to LEN.
void mutate(std::string& s, std::mt19937_64& rng, std::size_t L) {
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
}

void revcomp(std::string& s) {
  std::reverse(s.begin(), s.end());
  for (auto& c : s) c = complement(c);
}

void append_record(std::string& t, std::size_t i, const char* suffix, const std::string& s, std::string& q,
                   std::mt19937_64& rng) {
  for (auto& c : q) {
    const unsigned r = static_cast<unsigned>(rng() % 100);
    c = r < 85 ? 'F' : r < 93 ? ':' : r < 98 ? ',' : '#';
  }
  t += "@sim";
  t += std::to_string(i);
  t += suffix;
  t += '\n';
  t += s;
  t += "\n+\n";
  t += q;
  t += '\n';
}

// Reads (pairs: read 1s in t, read 2s in t2) first .. first + n - 1.
void chunk_text(const Ref& ref, std::size_t first, std::size_t n, int len, std::uint64_t seed, const Pairs* pairs,
                std::string& t, std::string& t2) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + first);
  std::string s, s2, q(static_cast<std::size_t>(len), 'F');
  const std::size_t L = static_cast<std::size_t>(len);
  t.clear();
  t2.clear();
  t.reserve(n * (2 * L + 24));
  if (pairs) t2.reserve(n * (2 * L + 24));
  std::normal_distribution<double> frag(pairs ? pairs->insert : 0.0, pairs ? pairs->sd : 1.0);
  for (std::size_t i = first; i < first + n; ++i) {
    const std::size_t p = ref.starts[rng() % ref.starts.size()];
    if (!pairs) {
      s.assign(ref.fwd, p, L + 3);  // 3 spare bases for a deletion
      mutate(s, rng, L);
      if (rng() & 1) revcomp(s);  // reverse strand
      append_record(t, i, "", s, q, rng);
      continue;
    }
    const double f = std::round(frag(rng));
    const std::size_t fl = static_cast<std::size_t>(std::clamp(f, static_cast<double>(L + 3), static_cast<double>(pairs->max_frag)));
    s.assign(ref.fwd, p, L + 3);              // the fragment's start, forward
    s2.assign(ref.fwd, p + fl - L - 3, L + 3);  // its end, read on the reverse strand
    revcomp(s2);
    mutate(s, rng, L);
    mutate(s2, rng, L);
    if (rng() & 1) std::swap(s, s2);  // read 1 on either strand
    append_record(t, i, "/1", s, q, rng);
    append_record(t2, i, "/2", s2, q, rng);
  }
}

std::string gzip_member(const std::string& t) {
  libdeflate_compressor* z = libdeflate_alloc_compressor(6);
  std::string m(libdeflate_gzip_compress_bound(z, t.size()), '\0');
  m.resize(libdeflate_gzip_compress(z, t.data(), t.size(), m.data(), m.size()));
  libdeflate_free_compressor(z);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage =
      "usage: bc_simreads [--pairs OUT2.fq.gz [--insert 300] [--insert-sd 30]] REF.fa[.gz] N OUT.fq.gz [LEN=100] "
      "[SEED=1] [THREADS=0]\n";
  std::vector<std::string> args;
  std::string out2;
  Pairs pe;
  for (int a = 1; a < argc; ++a) {
    const std::string x = argv[a];
    if ((x == "--pairs" || x == "--insert" || x == "--insert-sd") && a + 1 < argc) {
      const std::string v = argv[++a];
      if (x == "--pairs") out2 = v;
      else (x == "--insert" ? pe.insert : pe.sd) = std::strtod(v.c_str(), nullptr);
    } else {
      args.push_back(x);
    }
  }
  if (args.size() < 3) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  try {
    const std::size_t n = std::strtoull(args[1].c_str(), nullptr, 10);
    const int len = args.size() > 3 ? std::atoi(args[3].c_str()) : 100;
    const std::uint64_t seed = args.size() > 4 ? std::strtoull(args[4].c_str(), nullptr, 10) : 1;
    int threads = args.size() > 5 ? std::atoi(args[5].c_str()) : 0;
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (n == 0 || len < 30 || len > 1000) {
      std::fprintf(stderr, "bc_simreads: N must be > 0 and LEN in 30..1000\n");
      return 2;
    }
    const bool paired = !out2.empty();
    if (paired && !(pe.insert >= len + 3 && pe.sd >= 0 && pe.insert < 100000)) {
      std::fprintf(stderr, "bc_simreads: --insert must be in LEN + 3 .. 100000 and --insert-sd >= 0\n");
      return 2;
    }
    pe.max_frag = paired ? static_cast<std::size_t>(pe.insert + 4 * pe.sd) : static_cast<std::size_t>(len);
    Ref ref;
    const std::size_t need = (paired ? pe.max_frag : static_cast<std::size_t>(len)) + 3;
    for (const auto& c : bc::read_reference(args[0])) {
      const std::size_t base = ref.fwd.size();
      for (char ch : c.seq) ref.fwd += static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
      std::size_t bad = 0;  // bases since the last non-ACGT
      for (std::size_t i = 0; i < c.seq.size(); ++i) {
        const char ch = ref.fwd[base + i];
        bad = (ch == 'A' || ch == 'C' || ch == 'G' || ch == 'T') ? bad + 1 : 0;
        if (bad >= need) ref.starts.push_back(base + i + 1 - need);
      }
    }
    if (ref.starts.empty()) {
      std::fprintf(stderr, "bc_simreads: %s: no window of %zu ACGT bases\n", args[0].c_str(), need);
      return 2;
    }
    std::ofstream out(args[2], std::ios::binary), out_2;
    if (!out) {
      std::fprintf(stderr, "bc_simreads: %s: cannot open for writing\n", args[2].c_str());
      return 2;
    }
    if (paired) {
      out_2.open(out2, std::ios::binary);
      if (!out_2) {
        std::fprintf(stderr, "bc_simreads: %s: cannot open for writing\n", out2.c_str());
        return 2;
      }
    }
    const std::size_t chunks = (n + kChunk - 1) / kChunk;
    for (std::size_t c0 = 0; c0 < chunks; c0 += static_cast<std::size_t>(threads)) {
      const std::size_t c1 = std::min(chunks, c0 + static_cast<std::size_t>(threads));
      std::vector<std::string> member(c1 - c0), member2(c1 - c0);
      std::vector<std::thread> ts;
      for (std::size_t c = c0; c < c1; ++c)
        ts.emplace_back([&, c] {
          const std::size_t first = c * kChunk;
          std::string t, t2;
          chunk_text(ref, first, std::min(kChunk, n - first), len, seed, paired ? &pe : nullptr, t, t2);
          member[c - c0] = gzip_member(t);
          if (paired) member2[c - c0] = gzip_member(t2);
        });
      for (auto& t : ts) t.join();
      for (const auto& m : member) out.write(m.data(), static_cast<std::streamsize>(m.size()));
      if (paired)
        for (const auto& m : member2) out_2.write(m.data(), static_cast<std::streamsize>(m.size()));
    }
    out.close();
    if (paired) out_2.close();
    if (!out || (paired && !out_2)) {
      std::fprintf(stderr, "bc_simreads: write failed\n");
      return 2;
    }
    return 0;
  } catch (const evk::InputError& e) {
    std::fprintf(stderr, "bc_simreads: %s\n", e.what());
    return 2;
  }
}
