// bc_human_genome's model: a human-like genome of 24 contigs (chr1..22, X, Y at GRCh38's lengths,
// or scaled to --size) with isochores, N gaps, centromeric alpha-satellite HOR arrays, interspersed
// repeat families (Alu-, MIR-, L1-, L2-, LTR-, DNA-like), tandem repeats, low-complexity runs,
// CpG islands and segmental duplications. sim/README.md says which human figure each number follows.
// Deterministic: contig i depends only on (seed, i) and the shared tables made from the seed.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim_rng.hpp"

namespace evk::sim {

// What the euchromatin is made of, besides the isochore background.
enum Kind : int { kAlu, kMir, kL1, kL2, kLtr, kDna, kSimple, kLowComplexity, kSatellite, kCpgIsland, kSegDup, kGap, kKinds };
extern const char* const kKindNames[kKinds];
// Share of the euchromatin each kind covers (element bases / euchromatin bases).
extern const double kKindShare[kKinds];

constexpr std::uint64_t kGrch38Length = 3088269832ull;  // chr1..22, X, Y
constexpr int kContigs = 24;

struct GenomeOptions {
  std::uint64_t seed = 1;
  std::uint64_t size = 0;  // 0: GRCh38's lengths (3.09 Gbp); else the contigs scaled to this total
  bool soft_mask = false;  // repeat copies in lower case (as UCSC's and Ensembl's soft-masked FASTA)
};

// One repeat (sub)family: its consensus and the divergence of its copies.
struct Family {
  Kind kind = kAlu;
  std::string name, consensus;
  std::string inner;  // LTR families: the internal region of a full provirus (LTR-inner-LTR)
  double div_lo = 0, div_hi = 0, weight = 1;
};

struct Families {
  std::vector<Family> family;
  std::array<std::vector<int>, kKinds> of_kind;  // family indices per kind
  std::string alpha, beta;                       // 171 bp alpha and 68 bp beta satellite monomers
  std::array<double, kKinds> mean_len{};         // mean element length per kind (for the event rates)
};

struct GenomeModel {
  GenomeOptions opt;
  double scale = 1;                // size / GRCh38's length
  std::vector<std::uint64_t> len;  // per contig
  Families fam;
  std::string pool;                // source of the inter-chromosomal segmental duplications
};

struct ContigStats {
  std::array<std::uint64_t, kKinds> copies{}, bases{};
  std::uint64_t length = 0, n = 0, gc = 0, alpha = 0;  // alpha: centromeric HOR array bases
  void add(const ContigStats& o);
};

// Throws InputError for a --size below 1 Mbp or above 100 Gbp.
GenomeModel genome_model_make(const GenomeOptions& opt);
std::string genome_contig_name(int i);
// Contig i (0..23) into seq (replaced).
void genome_contig_build(const GenomeModel& m, int i, std::string& seq, ContigStats& st);

// Families of repeats made from the seed (genome_families.cpp).
Families families_make(std::uint64_t seed);
// One copy of a family: truncated, tailed, mutated as its kind's copies are (forward strand).
void family_copy(const Family& f, SimRng& rng, std::string& out);

}  // namespace evk::sim
