#include "bench_common.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "io/sequences.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;

namespace bcb {

fs::path data_dir() {
  if (const char* d = std::getenv("EVK_DATA_DIR")) return d;
  return fs::path(EVK_SOURCE_DIR) / "data";
}

double max_rss_gib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);
}

namespace {
std::map<std::string, std::unique_ptr<Genome>>& genomes() {
  static std::map<std::string, std::unique_ptr<Genome>> g;
  return g;
}
}  // namespace

Genome* get_genome(const std::string& name) {
  auto& g = genomes();
  if (auto it = g.find(name); it != g.end()) return it->second.get();
  auto G = std::make_unique<Genome>();
  G->name = name;
  std::vector<bc::RefSeq> ref;
  if (name == "ecoli") {
    const fs::path p = data_dir() / "genomes" / "NC_008253.fna.gz";
    if (!fs::exists(p)) return nullptr;
    ref = bc::read_reference(p.string());
  } else {
    const long mbp = std::atol(name.c_str() + 6);  // "random<N>"
    std::mt19937_64 rng(500);
    ref.resize(1);
    ref[0].name = name;
    ref[0].seq.resize(static_cast<std::size_t>(mbp) * 1000000);
    for (std::size_t i = 0; i < ref[0].seq.size(); i += 32) {
      std::uint64_t r = rng();
      for (std::size_t j = i; j < std::min(ref[0].seq.size(), i + 32); ++j, r >>= 2) ref[0].seq[j] = "ACGT"[r & 3];
    }
  }
  const auto t = std::chrono::steady_clock::now();
  G->idx = bc::build_index(ref);
  G->build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  G->rss_gib = max_rss_gib();
  G->fwd.reserve(static_cast<std::size_t>(G->idx.l_pac));
  for (std::int64_t i = 0; i < G->idx.l_pac; ++i) G->fwd += "ACGT"[G->idx.pac_base(i)];
  return (g[name] = std::move(G)).get();
}

std::string fastq_chunk(const Genome& g, std::size_t first, std::size_t n) {
  std::mt19937_64 rng(0x5eed0000u + first);
  std::string t, s(100, 'A'), q(100, 'F');
  t.reserve(n * 230);
  for (std::size_t i = first; i < first + n; ++i) {
    const std::size_t p = rng() % (g.fwd.size() - 100);
    if (rng() & 1) {
      for (std::size_t j = 0; j < 100; ++j) s[j] = g.fwd[p + j];
    } else {  // reverse complement
      for (std::size_t j = 0; j < 100; ++j) {
        const char c = g.fwd[p + 99 - j];
        s[j] = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : 'A';
      }
    }
    if (rng() % 100 < 15) s[rng() % 100] = "ACGT"[rng() & 3];
    for (auto& c : q) {  // NovaSeq-like binned qualities
      const unsigned r = static_cast<unsigned>(rng() % 100);
      c = r < 85 ? 'F' : r < 93 ? ':' : r < 98 ? ',' : '#';
    }
    t += '@';
    t += 'r';
    t += std::to_string(i);
    t += '\n';
    t += s;
    t += "\n+\n";
    t += q;
    t += '\n';
  }
  return t;
}

}  // namespace bcb
