#include "adna.hpp"

#include <algorithm>
#include <cmath>

#include "evk/error.hpp"
#include "seq_ops.hpp"
#include "sim_rng.hpp"

namespace evk::sim {

namespace {

double phi(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double phi_inverse(double p) {
  double lo = -40, hi = 40;
  for (int k = 0; k < 200; ++k) {
    const double mid = 0.5 * (lo + hi);
    (phi(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Median of round(exp(mu + sigma Z)) kept in [min_len, max_len] (continuous approximation).
double truncated_median(double mu, const AdnaOptions& o) {
  const double a = phi((std::log(o.min_len - 0.5) - mu) / o.sigma), b = phi((std::log(o.max_len + 0.5) - mu) / o.sigma);
  return std::exp(mu + o.sigma * phi_inverse(0.5 * (a + b)));
}

void bad(const std::string& what) { throw InputError(what); }

int draw_length(const AdnaPlan& p, SimRng& rng) {
  for (;;) {
    const double x = std::round(std::exp(p.mu + p.opt.sigma * rng.normal()));
    if (x >= p.opt.min_len && x <= p.opt.max_len) return static_cast<int>(x);
  }
}

void append_quals(std::string& out, const std::string& err, const AdnaPlan& p, SimRng& rng) {
  const double span = std::max(1, p.opt.max_len - 1);
  for (std::size_t i = 0; i < err.size(); ++i) {
    const int q = err[i] ? static_cast<int>(rng.range(10, 24))
                         : std::clamp(static_cast<int>(std::lround(40.0 - 12.0 * static_cast<double>(i) / span +
                                                                    rng.uniform(-3, 3))),
                                      25, 40);
    out += static_cast<char>(33 + q);
  }
}

}  // namespace

void adna_check(const AdnaOptions& o) {
  if (!(o.min_len >= 10 && o.min_len <= o.max_len && o.max_len <= 10000))
    bad("--min-len/--max-len: need 10 <= min <= max <= 10000");
  if (!(o.median >= o.min_len && o.median <= o.max_len)) bad("--median: must lie in --min-len .. --max-len");
  if (!(o.sigma > 0.01 && o.sigma <= 3)) bad("--sigma: must be in (0.01, 3]");
  if (!(o.deam >= 0 && o.interior >= 0 && o.deam + o.interior <= 1)) bad("--deam/--deam-interior: need 0 <= rates, sum <= 1");
  if (!(o.decay >= 0 && o.decay <= 100)) bad("--deam-decay: must be in 0 .. 100");
  if (!(o.error >= 0 && o.error <= 0.5)) bad("--error: must be in 0 .. 0.5");
  if (!(o.contam >= 0 && o.contam <= 1)) bad("--contam: must be in 0 .. 1");
}

double adna_deam_rate(const AdnaOptions& o, int i) { return o.deam * std::exp(-o.decay * i) + o.interior; }

AdnaPlan adna_plan(const AdnaOptions& opt) {
  adna_check(opt);
  AdnaPlan p;
  p.opt = opt;
  double lo = std::log(opt.min_len) - 10 * opt.sigma, hi = std::log(opt.max_len) + 10 * opt.sigma;
  for (int k = 0; k < 100; ++k) {  // truncated_median grows with mu
    const double mid = 0.5 * (lo + hi);
    (truncated_median(mid, opt) < opt.median ? lo : hi) = mid;
  }
  p.mu = 0.5 * (lo + hi);
  for (int i = 0; i < opt.max_len; ++i) p.deam.push_back(adna_deam_rate(opt, i));
  return p;
}

void adna_ref_index(AdnaRef& ref, int min_len, const std::string& path) {
  ref.runs.clear();
  ref.cum.clear();
  ref.total = 0;
  for (std::uint32_t c = 0; c < ref.seqs.size(); ++c) {
    std::string& s = ref.seqs[c];
    std::uint64_t start = 0;
    for (std::uint64_t i = 0; i <= s.size(); ++i) {
      char ch = 'N';
      if (i < s.size()) ch = s[i] = static_cast<char>(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
      if (ch == 'A' || ch == 'C' || ch == 'G' || ch == 'T') continue;
      if (i - start >= static_cast<std::uint64_t>(min_len)) {
        ref.runs.push_back({c, start, i - start});
        ref.cum.push_back(ref.total);
        ref.total += i - start;
      }
      start = i + 1;
    }
  }
  if (ref.runs.empty()) bad(path + ": no run of " + std::to_string(min_len) + " ACGT bases");
}

void adna_chunk(const AdnaRef& ref, const AdnaPlan& p, std::uint64_t first, std::size_t n, std::string& out) {
  SimRng rng(sim_seed(p.opt.seed, first / kAdnaChunk));
  std::string s, err;
  out.clear();
  for (std::uint64_t k = first; k < first + n; ++k) {
    int len = draw_length(p, rng);
    std::string name = "@adna" + std::to_string(k) + ":";
    s.clear();
    int nd = 0, ne = 0;
    const bool contaminant = rng.uniform() < p.opt.contam;
    if (contaminant) {
      for (int i = 0; i < len; ++i) s += "ACGT"[rng.below(4)];
      name += "*:0:+";
    } else {
      const AdnaRef::Run* run = nullptr;
      std::uint64_t off = 0;
      for (int tries = 0;; ++tries) {  // a start uniform over the runs; the fragment must fit its run
        const std::uint64_t u = rng.below(ref.total);
        const std::size_t r = static_cast<std::size_t>(std::upper_bound(ref.cum.begin(), ref.cum.end(), u) - ref.cum.begin()) - 1;
        run = &ref.runs[r];
        off = u - ref.cum[r];
        if (off + static_cast<std::uint64_t>(len) <= run->len) break;
        if (tries > 10000) bad("reference: too few ACGT runs of " + std::to_string(len) + " bases");
        len = draw_length(p, rng);
      }
      s.assign(ref.seqs[run->contig], run->start + off, static_cast<std::size_t>(len));
      const bool minus = rng.next() & 1;
      if (minus) seq_revcomp(s);
      for (int i = 0; i < len; ++i) {  // deamination on the molecule: C->T from 5', G->A from 3'
        char& c = s[static_cast<std::size_t>(i)];
        if (c == 'C' && rng.uniform() < p.deam[static_cast<std::size_t>(i)]) c = 'T', ++nd;
        else if (c == 'G' && rng.uniform() < p.deam[static_cast<std::size_t>(len - 1 - i)]) c = 'A', ++nd;
      }
      name += ref.names[run->contig] + ":" + std::to_string(run->start + off + 1) + (minus ? ":-" : ":+");
    }
    err.assign(static_cast<std::size_t>(len), 0);
    if (!contaminant)
      for (int i = 0; i < len; ++i) {
        if (rng.uniform() >= p.opt.error) continue;
        char& c = s[static_cast<std::size_t>(i)];
        static const char kNext[4][3] = {{'C', 'G', 'T'}, {'A', 'G', 'T'}, {'A', 'C', 'T'}, {'A', 'C', 'G'}};
        const int b = c == 'A' ? 0 : c == 'C' ? 1 : c == 'G' ? 2 : 3;
        c = kNext[b][rng.below(3)];
        err[static_cast<std::size_t>(i)] = 1;
        ++ne;
      }
    out += name + ":" + std::to_string(nd) + ":" + std::to_string(ne) + "\n" + s + "\n+\n";
    append_quals(out, err, p, rng);
    out += '\n';
  }
}

}  // namespace evk::sim
