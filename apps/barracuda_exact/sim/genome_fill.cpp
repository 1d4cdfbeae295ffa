#include "genome_fill.hpp"

#include <algorithm>
#include <cmath>

#include "seq_ops.hpp"

namespace evk::sim {

namespace {

constexpr double kCpgDecay = 0.85;

bool from_family(Kind k) { return k <= kDna; }

// A new isochore: 100 kb - 1 Mb (log-uniform) of GC 35% + 20% * Beta(2, 5) (mean 40.7%); Alu-like
// copies are denser in GC-rich isochores and L1-like ones in AT-rich ones, the interspersed total
// staying at its share.
void isochore_new(Fill& f) {
  double u[6];
  for (double& x : u) x = f.rng.uniform();
  std::sort(u, u + 6);
  f.gc = 0.35 + 0.20 * u[1];  // 2nd smallest of 6 uniforms: Beta(2, 5)
  f.iso_left = static_cast<std::uint64_t>(f.rng.log_uniform(1e5, 1e6));
  // the CpG decay takes kCpgDecay * (gc / 2)^2 of the bases out of G+C: draw more so gc remains
  const double a = kCpgDecay / 4;
  f.gc_drawn = (1 - std::sqrt(1 - 4 * a * f.gc)) / (2 * a);
  double share[kKinds];
  std::copy(kKindShare, kKindShare + kKinds, share);
  if (f.pool) share[kSegDup] = share[kGap] = 0;
  share[kAlu] *= std::clamp((f.gc - 0.30) / 0.107, 0.2, 3.0);
  share[kL1] *= std::clamp((0.60 - f.gc) / 0.193, 0.2, 3.0);
  double before = 0, after = 0;
  for (int k = kAlu; k <= kDna; ++k) before += kKindShare[k], after += share[k];
  for (int k = kAlu; k <= kDna; ++k) share[k] *= before / after;
  double rate = 0, covered = 0;  // elements per base of a cycle (background + element)
  for (int k = 0; k < kKinds; ++k) rate += share[k] / f.m.fam.mean_len[static_cast<std::size_t>(k)], covered += share[k];
  const double cycle = 1.0 / rate;
  for (int k = 0; k < kKinds; ++k) f.prob[k] = share[k] * cycle / f.m.fam.mean_len[static_cast<std::size_t>(k)];
  f.bg_mean = cycle * (1.0 - covered);
}

Kind kind_pick(Fill& f) {
  double u = f.rng.uniform();
  for (int k = 0; k < kKinds - 1; ++k) {
    if (u < f.prob[k]) return static_cast<Kind>(k);
    u -= f.prob[k];
  }
  return static_cast<Kind>(kKinds - 1);
}

const Family& family_pick(Fill& f, Kind k) {
  const auto& ids = f.m.fam.of_kind[k];
  double total = 0;
  for (int id : ids) total += f.m.fam.family[static_cast<std::size_t>(id)].weight;
  double u = f.rng.uniform() * total;
  for (int id : ids) {
    const Family& fam = f.m.fam.family[static_cast<std::size_t>(id)];
    if (u < fam.weight) return fam;
    u -= fam.weight;
  }
  return f.m.fam.family[static_cast<std::size_t>(ids.back())];
}

// Microsatellites: units of 1-6 bases (mono 20%, di 30%, tri 10%, tetra 25%, penta 10%, hexa 5%),
// copies 0-8% mutated. Low complexity: two-letter runs of biased composition.
void tandem_or_low(Fill& f, Kind k, std::size_t len, std::string& e) {
  SimRng& r = f.rng;
  if (k == kSimple) {
    const double u = r.uniform();
    const int unit_len = u < 0.2 ? 1 : u < 0.5 ? 2 : u < 0.6 ? 3 : u < 0.85 ? 4 : u < 0.95 ? 5 : 6;
    std::string unit;
    for (int i = 0; i < unit_len; ++i) unit += "ACGT"[r.below(4)];
    seq_tandem(e, unit, len, r.uniform(0, 0.08), r);
    return;
  }
  static const char kPairs[4][2] = {{'A', 'T'}, {'A', 'G'}, {'C', 'T'}, {'G', 'C'}};
  const auto& pair = kPairs[r.below(4)];
  const double first = r.uniform(0.5, 0.9);
  for (std::size_t i = 0; i < len; ++i) e += r.uniform() < 0.05 ? "ACGT"[r.below(4)] : pair[r.uniform() < first ? 0 : 1];
}

// Satellite arrays outside the centromeres: alpha HORs of 2-8 monomers, beta (68 bp) or
// HSat3-like (ATTCC)n arrays.
void satellite(Fill& f, std::size_t len, std::string& e) {
  SimRng& r = f.rng;
  const double u = r.uniform();
  std::string unit;
  if (u < 0.5) {
    for (std::int64_t k = r.range(2, 8); k > 0; --k) {
      std::string mono = f.m.fam.alpha;
      seq_substitute(mono, r.uniform(0.15, 0.25), r);
      unit += mono;
    }
    seq_tandem(e, unit, len, r.uniform(0.02, 0.08), r);
  } else if (u < 0.75) {
    seq_tandem(e, f.m.fam.beta, len, r.uniform(0.10, 0.20), r);
  } else {
    for (std::int64_t k = r.range(4, 12); k > 0; --k) unit += "ATTCC";
    seq_substitute(unit, 0.1, r);
    seq_tandem(e, unit, len, 0.05, r);
  }
}

// A segmental duplication: half from earlier in this contig (when there is enough N-free
// sequence), else from the shared pool (inter-chromosomal); 1-5% diverged.
void segdup(Fill& f, std::size_t len, std::string& e) {
  SimRng& r = f.rng;
  bool done = false;
  if (r.uniform() < 0.5 && f.seq.size() >= 2 * len) {
    e.assign(f.seq, r.below(f.seq.size() - len + 1), len);
    done = e.find_first_of("Nn") == std::string::npos;
  }
  if (!done) {
    len = std::min(len, f.m.pool.size());
    e.assign(f.m.pool, r.below(f.m.pool.size() - len + 1), len);
  }
  seq_mutate(e, r.uniform(0.01, 0.05), r);
}

void element(Fill& f, Kind k) {
  std::string& e = f.tmp;
  e.clear();
  if (from_family(k)) family_copy(family_pick(f, k), f.rng, e);
  else {
    const std::size_t len = kind_length(k, f.rng, f.contig_len);
    if (k == kSimple || k == kLowComplexity) tandem_or_low(f, k, len, e);
    else if (k == kSatellite) satellite(f, len, e);
    else if (k == kCpgIsland) seq_background(e, len, 0.65, f.rng);
    else if (k == kSegDup) segdup(f, len, e);
    else e.assign(len, 'N');
  }
  if (k != kGap && k != kCpgIsland && (f.rng.next() & 1)) seq_revcomp(e);  // either strand
  if (f.m.opt.soft_mask && k != kGap && k != kCpgIsland && k != kSegDup)
    for (char& c : e) c = static_cast<char>(c | 0x20);
  const std::size_t site = f.seq.size();
  f.seq += e;
  if ((k == kAlu || k == kL1) && site >= 20) {  // target-site duplication of 7-20 bases
    const std::size_t tsd = static_cast<std::size_t>(f.rng.range(7, 20));
    const std::string dup = f.seq.substr(site - tsd, tsd);
    f.seq += dup;
  }
  ++f.st.copies[k];
  f.st.bases[k] += e.size();
}

}  // namespace

std::size_t kind_length(Kind k, SimRng& rng, std::uint64_t contig_len) {
  const double cl = static_cast<double>(contig_len);
  double len = 0;
  switch (k) {
    case kSimple: len = std::clamp(std::exp(std::log(40.0) + 0.6 * rng.normal()), 12.0, 600.0); break;
    case kLowComplexity: len = rng.log_uniform(30, 400); break;
    case kSatellite: len = std::min(rng.log_uniform(2000, 40000), cl / 50); break;
    case kCpgIsland: len = rng.log_uniform(400, 2000); break;
    case kSegDup: len = std::min(rng.log_uniform(1000, 100000), cl / 20); break;
    default: len = std::min(rng.log_uniform(100, 100000), cl / 100); break;  // gap
  }
  return std::max<std::size_t>(1, static_cast<std::size_t>(len));
}

void fill_euchromatin(Fill& f, std::uint64_t len) {
  const std::uint64_t end = f.seq.size() + len;
  while (f.seq.size() < end) {
    if (f.iso_left == 0) isochore_new(f);
    const std::uint64_t bg = std::min({static_cast<std::uint64_t>(f.rng.exponential(f.bg_mean)), f.iso_left,
                                       end - f.seq.size()});
    const std::size_t at = f.seq.size();
    seq_background(f.seq, bg, f.gc_drawn, f.rng);
    seq_cpg_decay(f.seq.data() + at, bg, kCpgDecay, f.rng);  // CpG at ~1/4 of its expected frequency
    f.iso_left -= bg;
    if (f.seq.size() >= end) break;
    const std::size_t before = f.seq.size();
    element(f, kind_pick(f));
    f.iso_left -= std::min<std::uint64_t>(f.iso_left, f.seq.size() - before);
  }
  f.seq.resize(end);
}

void fill_n(Fill& f, std::uint64_t len) { f.seq.append(len, 'N'); }

// A centromere: one HOR of 4-16 alpha monomers (each 20-30% from the monomer consensus), repeated
// with 0.5-3% between copies.
void fill_alpha_hor(Fill& f, std::uint64_t len) {
  std::string unit;
  for (std::int64_t k = f.rng.range(4, 16); k > 0; --k) {
    std::string mono = f.m.fam.alpha;
    seq_substitute(mono, f.rng.uniform(0.20, 0.30), f.rng);
    unit += mono;
  }
  const std::size_t at = f.seq.size();
  seq_tandem(f.seq, unit, len, f.rng.uniform(0.005, 0.03), f.rng);
  if (f.m.opt.soft_mask)
    for (std::size_t i = at; i < f.seq.size(); ++i) f.seq[i] = static_cast<char>(f.seq[i] | 0x20);
  f.st.alpha += len;
}

}  // namespace evk::sim
