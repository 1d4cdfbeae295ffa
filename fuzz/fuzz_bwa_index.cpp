// The bwa 0.7 index readers (.bwt, .sa, .pac, .ann, .amb): a small valid index is written once;
// each input replaces one of its five files (the first byte says which, the rest is the file).
// Bad files must end in InputError. An accepted index is searched with a few reads (exact match,
// SA walk, contig and ambiguity look-ups), which must stay inside its arrays (ASan checks).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "core/hits.hpp"
#include "core/index.hpp"
#include "core/match.hpp"
#include "evk/error.hpp"
#include "fuzz_util.hpp"
#include "io/index_files.hpp"

namespace bc = evk::barracuda_exact;

namespace {
const char* const kExt[5] = {".bwt", ".sa", ".pac", ".ann", ".amb"};

struct Pristine {
  std::string prefix;
  std::string bytes[5];
  std::vector<std::string> reads;
  Pristine() {
    std::mt19937_64 rng(7);
    auto dna = [&](std::size_t n) {
      std::string s(n, 'A');
      for (auto& c : s) c = "ACGT"[rng() & 3];
      return s;
    };
    std::string c1 = dna(300), c2 = dna(180);
    c2.replace(40, 6, "NNNNNN");
    const std::vector<bc::RefSeq> ref = {{"c1", "", c1}, {"c2", "x", c2}};
    prefix = (evk::fuzz::scratch() / "ref.fa").string();
    bc::write_index(bc::build_index(ref), prefix);
    for (int k = 0; k < 5; ++k) {
      std::ifstream in(prefix + kExt[k], std::ios::binary);
      bytes[k].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    for (int i = 0; i < 12; ++i) reads.push_back((i % 2 ? c1 : c2).substr(static_cast<std::size_t>(i) * 11, 20 + i));
    reads.push_back("ACGTACGTAC");
    reads.push_back("A");
  }
};
}  // namespace

// With $EVK_FUZZ_WRITE_SEEDS set: writes the seed corpus (each pristine file with its selector
// byte) into that directory and exits (fuzz/make_seeds.sh).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("EVK_FUZZ_WRITE_SEEDS")) {
    Pristine p;
    for (int k = 0; k < 5; ++k) {
      std::ofstream o(std::string(dir) + "/ref" + kExt[k], std::ios::binary);
      o << static_cast<char>(k) << p.bytes[k];
    }
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Pristine p;
  static int last = -1;
  if (size < 1) return 0;
  const int k = data[0] % 5;
  if (last >= 0 && last != k) evk::fuzz::put("ref.fa" + std::string(kExt[last]), p.bytes[last]);
  evk::fuzz::put("ref.fa" + std::string(kExt[k]), evk::fuzz::view(data + 1, size - 1));
  last = k;
  try {
    const bc::BwtIndex idx = bc::read_index(p.prefix);
    bc::ReadCodes codes;
    for (const auto& r : p.reads) codes.add(r.data(), r.size());
    const auto kl = bc::match_cpu(idx, codes, 1);
    const auto hits = bc::resolve_hits(idx, kl, codes.len, 1);
    if (hits.size() != p.reads.size()) __builtin_trap();
  } catch (const evk::InputError&) {
  }
  return 0;
}
