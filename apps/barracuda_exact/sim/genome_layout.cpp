// The chromosomes' layout (GRCh38 lengths, centromere positions, the large N blocks) and the
// model shared by all contigs: families, mean element lengths, duplication pool.
#include <algorithm>
#include <cmath>

#include "evk/error.hpp"
#include "genome_fill.hpp"

namespace evk::sim {

const char* const kKindNames[kKinds] = {"SINE/Alu", "SINE/MIR",     "LINE/L1",  "LINE/L2",     "LTR",    "DNA",
                                        "Simple",   "Low_complexity", "Satellite", "CpG_island", "SegDup", "Gap"};
// Alu 10.6%, MIR 2.5%, L1 16.9%, L2 3.2%, LTR 8.3%, DNA 2.8% (Lander et al. 2001, Table 11);
// simple repeats 1.5% and low complexity 0.5% (RepeatMasker-like); satellites outside the
// centromeres 0.5%; CpG islands 0.7% (~28,000 of ~1 kb); segmental duplications 5% (Bailey et al.
// 2002); scattered gaps 0.38% (~0.26 per Mb of 100 bp - 100 kb).
const double kKindShare[kKinds] = {0.106, 0.025, 0.169, 0.032, 0.083, 0.028, 0.015, 0.005, 0.005, 0.007, 0.05, 0.0038};

namespace {

struct ContigSpec {
  const char* name;
  std::uint64_t len;
  double cen_mb;     // centromere midpoint
  double acro_n_mb;  // acrocentric short arm: N from the telomere on
  double het_n_mb;   // heterochromatin N after the centromere (chrY: Yq12, before the q telomere)
};

// GRCh38 primary chromosomes; centromere midpoints and large gaps approximately as in GRCh38.
const ContigSpec kSpec[kContigs] = {
    {"chr1", 248956422, 123.4, 0, 18},    {"chr2", 242193529, 93.9, 0, 0},    {"chr3", 198295559, 90.9, 0, 0},
    {"chr4", 190214555, 50.0, 0, 0},      {"chr5", 181538259, 48.8, 0, 0},    {"chr6", 170805979, 59.8, 0, 0},
    {"chr7", 159345973, 60.1, 0, 0},      {"chr8", 145138636, 45.2, 0, 0},    {"chr9", 138394717, 43.0, 0, 17},
    {"chr10", 133797422, 39.8, 0, 0},     {"chr11", 135086622, 53.4, 0, 0},   {"chr12", 133275309, 35.5, 0, 0},
    {"chr13", 114364328, 17.7, 16.0, 0},  {"chr14", 107043718, 17.2, 16.0, 0}, {"chr15", 101991189, 19.0, 17.0, 0},
    {"chr16", 90338345, 36.8, 0, 8},      {"chr17", 83257441, 25.1, 0, 0},    {"chr18", 80373285, 18.5, 0, 0},
    {"chr19", 58617616, 26.2, 0, 0},      {"chr20", 64444167, 28.1, 0, 0},    {"chr21", 46709983, 12.0, 5.0, 0},
    {"chr22", 50818468, 15.0, 10.5, 0},   {"chrX", 156040895, 60.6, 0, 0},    {"chrY", 57227415, 10.4, 0, 30}};

constexpr double kTelomere = 10000, kCenFlank = 50000, kAlpha = 2.5e6, kAlphaY = 0.5e6;

// Mean element length per kind, from 3,000 draws of a fixed stream (the same for every seed's
// families up to their consensus lengths).
void mean_lengths(Families& fs) {
  SimRng rng(0x5EED5EEDull);
  std::string e;
  for (int k = 0; k < kKinds; ++k) {
    double sum = 0;
    const int n = 3000;
    for (int i = 0; i < n; ++i) {
      if (k <= kDna) {
        const auto& ids = fs.of_kind[static_cast<std::size_t>(k)];
        family_copy(fs.family[static_cast<std::size_t>(ids[rng.below(ids.size())])], rng, e);
        sum += static_cast<double>(e.size());
      } else {
        sum += static_cast<double>(kind_length(static_cast<Kind>(k), rng, kSpec[0].len));
      }
    }
    fs.mean_len[static_cast<std::size_t>(k)] = sum / n;
  }
}

}  // namespace

void ContigStats::add(const ContigStats& o) {
  for (int k = 0; k < kKinds; ++k) copies[k] += o.copies[k], bases[k] += o.bases[k];
  length += o.length;
  n += o.n;
  gc += o.gc;
  alpha += o.alpha;
}

std::string genome_contig_name(int i) { return kSpec[i].name; }

GenomeModel genome_model_make(const GenomeOptions& opt) {
  if (opt.size != 0 && (opt.size < 1000000ull || opt.size > 100000000000ull))
    throw InputError("--size: " + std::to_string(opt.size) + " is outside 1 Mbp .. 100 Gbp");
  GenomeModel m;
  m.opt = opt;
  m.scale = opt.size ? static_cast<double>(opt.size) / static_cast<double>(kGrch38Length) : 1.0;
  for (const auto& c : kSpec) m.len.push_back(static_cast<std::uint64_t>(std::llround(static_cast<double>(c.len) * m.scale)));
  m.fam = families_make(opt.seed);
  mean_lengths(m.fam);
  // the pool of inter-chromosomal duplicons: 0.3% of the genome, 200 kb .. 20 Mb, no N
  const double total = static_cast<double>(opt.size ? opt.size : kGrch38Length);
  const auto pool_len = static_cast<std::uint64_t>(std::clamp(total * 0.003, 2e5, 2e7));
  ContigStats unused;
  Fill f(m, sim_seed(opt.seed, 1000), m.pool, unused, pool_len, true);
  m.pool.reserve(pool_len + 100000);
  fill_euchromatin(f, pool_len);
  return m;
}

void genome_contig_build(const GenomeModel& m, int i, std::string& seq, ContigStats& st) {
  const ContigSpec& c = kSpec[i];
  const double s = m.scale;
  const std::uint64_t len = m.len[static_cast<std::size_t>(i)];
  auto scaled = [&](double bases) { return static_cast<std::uint64_t>(std::llround(bases * s)); };
  const std::uint64_t tel = scaled(kTelomere), flank = scaled(kCenFlank), acro = scaled(c.acro_n_mb * 1e6),
                      het = scaled(c.het_n_mb * 1e6), alpha = scaled(i == kContigs - 1 ? kAlphaY : kAlpha);
  const std::uint64_t cen_start = scaled(c.cen_mb * 1e6) - alpha / 2 - flank;
  const bool y_het = i == kContigs - 1;
  seq.clear();
  seq.reserve(len + 2000000);
  st = ContigStats{};
  Fill f(m, sim_seed(m.opt.seed, static_cast<std::uint64_t>(i) + 1), seq, st, len, false);
  auto fill_to = [&](std::uint64_t pos) {
    if (pos > seq.size()) fill_euchromatin(f, pos - seq.size());
  };
  fill_n(f, tel + acro);
  fill_to(cen_start);
  fill_n(f, flank);
  fill_alpha_hor(f, alpha);
  fill_n(f, flank + (y_het ? 0 : het));
  fill_to(len - tel - (y_het ? het : 0));
  if (y_het) fill_n(f, het);
  fill_n(f, len - std::min<std::uint64_t>(len, seq.size()));
  seq.resize(len);
  st.length = len;
  for (char ch : seq) {
    const char u = static_cast<char>(ch & ~0x20);
    st.n += u == 'N';
    st.gc += u == 'C' || u == 'G';
  }
}

}  // namespace evk::sim
