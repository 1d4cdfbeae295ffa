// Repeat families made from the seed: master consensus sequences of the kinds' composition, and
// subfamilies a few per cent apart from their master (as AluJ/S/Y or L1PA/L1M are), each with the
// divergence range of its copies. family_copy cuts, tails and mutates one copy.
#include <algorithm>
#include <cmath>

#include "genome_model.hpp"
#include "seq_ops.hpp"

namespace evk::sim {

namespace {

std::string random_seq(std::size_t n, double a, double c, double g, double t, SimRng& rng) {
  const double comp[4] = {a, c, g, t};
  std::string s;
  s.reserve(n);
  seq_random(s, n, comp, rng);
  return s;
}

// Subfamilies of one master: n of them, each `sub_lo`..`sub_hi` substituted from the master.
void add_subfamilies(Families& fs, Kind kind, const std::string& prefix, const std::string& master, int n,
                     double sub_lo, double sub_hi, double div_lo, double div_hi, double weight, SimRng& rng) {
  for (int k = 0; k < n; ++k) {
    Family f;
    f.kind = kind;
    f.name = prefix + std::to_string(k + 1);
    f.consensus = master;
    seq_substitute(f.consensus, rng.uniform(sub_lo, sub_hi), rng);
    f.div_lo = div_lo;
    f.div_hi = div_hi;
    f.weight = weight / n;
    fs.of_kind[kind].push_back(static_cast<int>(fs.family.size()));
    fs.family.push_back(std::move(f));
  }
}

// Alu-like: a dimer of 7SL-like monomers (the right one carries a 31 bp insertion) joined by an
// A-rich linker, GC-rich, ~280 bp; J (old), S, Y (young) subfamily groups.
void make_alu(Families& fs, SimRng& rng) {
  const std::string left = random_seq(118, 0.22, 0.28, 0.30, 0.20, rng);
  std::string right = left;
  seq_substitute(right, 0.15, rng);
  right.insert(60, random_seq(31, 0.22, 0.28, 0.30, 0.20, rng));
  const std::string master = left + "AAAAATACAAAAAA" + right;
  add_subfamilies(fs, kAlu, "AluJ", master, 3, 0.04, 0.06, 0.14, 0.20, 0.25, rng);
  add_subfamilies(fs, kAlu, "AluS", master, 6, 0.02, 0.04, 0.08, 0.14, 0.60, rng);
  add_subfamilies(fs, kAlu, "AluY", master, 3, 0.01, 0.02, 0.05, 0.08, 0.15, rng);
}

// L1-like: 6 kb (GC-rich 5' UTR, A-rich ORFs on the sense strand, AT-rich 3' UTR); young, middle
// and old subfamilies. L2-like: 3.3 kb, old.
void make_lines(Families& fs, SimRng& rng) {
  const std::string l1 = random_seq(900, 0.22, 0.28, 0.27, 0.23, rng) + random_seq(4900, 0.40, 0.17, 0.21, 0.22, rng) +
                         random_seq(200, 0.38, 0.15, 0.17, 0.30, rng);
  add_subfamilies(fs, kL1, "L1PA_young", l1, 2, 0.01, 0.02, 0.01, 0.05, 0.10, rng);
  add_subfamilies(fs, kL1, "L1PA", l1, 3, 0.03, 0.06, 0.05, 0.12, 0.35, rng);
  add_subfamilies(fs, kL1, "L1M", l1, 3, 0.06, 0.10, 0.12, 0.22, 0.55, rng);
  add_subfamilies(fs, kL2, "L2", random_seq(3300, 0.30, 0.21, 0.22, 0.27, rng), 2, 0.03, 0.05, 0.25, 0.35, 1, rng);
  add_subfamilies(fs, kMir, "MIR", random_seq(262, 0.27, 0.23, 0.25, 0.25, rng), 3, 0.02, 0.05, 0.25, 0.32, 1, rng);
}

// LTR-like: 8 families, LTR 300-700 bp and a 4-6.5 kb internal region, divergence 5-30%.
// DNA-transposon-like: 6 families, 180-2400 bp between terminal inverted repeats, 15-30%.
void make_ltr_dna(Families& fs, SimRng& rng) {
  for (int k = 0; k < 8; ++k) {
    Family f;
    f.kind = kLtr;
    f.name = "LTR" + std::to_string(k + 1);
    f.consensus = random_seq(static_cast<std::size_t>(rng.range(300, 700)), 0.28, 0.22, 0.22, 0.28, rng);
    f.inner = random_seq(static_cast<std::size_t>(rng.range(4000, 6500)), 0.27, 0.23, 0.24, 0.26, rng);
    f.div_lo = 0.05 + 0.025 * k;
    f.div_hi = f.div_lo + 0.05;
    fs.of_kind[kLtr].push_back(static_cast<int>(fs.family.size()));
    fs.family.push_back(std::move(f));
  }
  for (int k = 0; k < 6; ++k) {
    Family f;
    f.kind = kDna;
    f.name = "DNA" + std::to_string(k + 1);
    std::string tir = random_seq(static_cast<std::size_t>(rng.range(15, 30)), 0.3, 0.2, 0.2, 0.3, rng), rc = tir;
    seq_revcomp(rc);
    f.consensus = tir + random_seq(static_cast<std::size_t>(rng.log_uniform(150, 2400)), 0.3, 0.2, 0.2, 0.3, rng) + rc;
    f.div_lo = 0.15;
    f.div_hi = 0.30;
    fs.of_kind[kDna].push_back(static_cast<int>(fs.family.size()));
    fs.family.push_back(std::move(f));
  }
}

std::string poly_a(SimRng& rng, int lo, int hi) { return std::string(static_cast<std::size_t>(rng.range(lo, hi)), 'A'); }

}  // namespace

void family_copy(const Family& f, SimRng& rng, std::string& out) {
  const std::string& c = f.consensus;
  const std::size_t n = c.size();
  switch (f.kind) {
    case kAlu:  // 70% full length, else 5'-truncated; poly-A tail
      out = rng.uniform() < 0.7 ? c : c.substr(n - static_cast<std::size_t>(rng.range(40, static_cast<std::int64_t>(n))));
      out += poly_a(rng, 8, 35);
      break;
    case kL1: {  // 3% full length, else 5'-truncated to ~100 + Exp(700) bases; poly-A tail
      const double keep = rng.uniform() < 0.03 ? static_cast<double>(n) : 100.0 + rng.exponential(700.0);
      out = c.substr(n - std::min(n, static_cast<std::size_t>(keep)));
      out += poly_a(rng, 10, 40);
      break;
    }
    case kL2: {
      const double keep = 50.0 + rng.exponential(250.0);
      out = c.substr(n - std::min(n, static_cast<std::size_t>(keep)));
      break;
    }
    case kLtr:  // 4% full proviruses, else solo LTRs (a fifth of them truncated)
      if (rng.uniform() < 0.04) {
        out = c + f.inner + c;
      } else {
        out = c;
        if (rng.uniform() < 0.2) out = c.substr(0, static_cast<std::size_t>(rng.range(60, static_cast<std::int64_t>(n))));
      }
      break;
    default: {  // MIR, DNA: 30% / 50% whole, else a fragment of 40..n bases
      const double whole = f.kind == kMir ? 0.3 : 0.5;
      if (rng.uniform() < whole) {
        out = c;
      } else {
        const std::size_t len = static_cast<std::size_t>(rng.range(40, static_cast<std::int64_t>(n)));
        out = c.substr(rng.below(n - len + 1), len);
      }
    }
  }
  const double div = rng.uniform(f.div_lo, f.div_hi);
  seq_mutate(out, div, rng);
  seq_cpg_decay(out.data(), out.size(), std::min(0.9, 6 * div), rng);  // CpGs decay ~6x faster
}

Families families_make(std::uint64_t seed) {
  SimRng rng(sim_seed(seed, 0xFA111E5ull));
  Families fs;
  make_alu(fs, rng);
  make_lines(fs, rng);
  make_ltr_dna(fs, rng);
  fs.alpha = random_seq(171, 0.32, 0.19, 0.19, 0.30, rng);
  fs.beta = random_seq(68, 0.25, 0.25, 0.26, 0.24, rng);
  return fs;
}

}  // namespace evk::sim
