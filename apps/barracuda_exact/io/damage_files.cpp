#include "io/damage_files.hpp"

#include <htslib/sam.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <cstdio>
#include <memory>
#include <numeric>
#include <unordered_map>

#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/sequences.hpp"

namespace evk::barracuda_exact {
namespace {

struct HtsCloser {
  void operator()(samFile* f) const { sam_close(f); }
  void operator()(sam_hdr_t* h) const { sam_hdr_destroy(h); }
  void operator()(bam1_t* b) const { bam_destroy1(b); }
};

std::unique_ptr<std::FILE, int (*)(std::FILE*)> open_out(const AtomicOutput& o) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(o.temp_path().c_str(), "w"), &std::fclose);
  if (!f) input_error(o.target().string(), "cannot write");
  return f;
}

void finish(std::unique_ptr<std::FILE, int (*)(std::FILE*)>& f, AtomicOutput& o) {
  if (std::fclose(f.release()) != 0) input_error(o.target().string(), "write failed (disk full?)");
  o.commit();
}

int column_of(const char* name) {
  for (std::size_t k = 0; k < kDamageMutations.size(); ++k)
    if (std::string(kDamageMutations[k]) == name) return 4 + static_cast<int>(k);
  return -1;
}

double end_frequency(const DamageProfile& p, int end, int base, const char* mutation, int i) {
  if (i < 0 || i >= p.options().length) return 0;
  const int k = column_of(mutation);
  std::uint64_t n = 0, m = 0;
  for (std::size_t c = 0; c < p.contigs().size(); ++c)
    for (int s = 0; s < 2; ++s) {
      n += p.count(static_cast<int>(c), end, s, i, base);
      m += p.count(static_cast<int>(c), end, s, i, k);
    }
  return n ? static_cast<double>(m) / static_cast<double>(n) : 0;
}

}  // namespace

bool damage_read(const bam1_t* b, DamageRead& rd) {
  const bam1_core_t& c = b->core;
  rd.flag = c.flag;
  rd.mapq = c.qual;
  if ((c.flag & 0x4) || c.tid < 0) return false;
  rd.contig = c.tid;
  rd.pos = c.pos;
  rd.cigar.clear();
  const std::uint32_t* cig = bam_get_cigar(b);
  for (std::uint32_t i = 0; i < c.n_cigar; ++i) rd.cigar.emplace_back(BAM_CIGAR_STR[bam_cigar_op(cig[i])], static_cast<int>(bam_cigar_oplen(cig[i])));
  rd.seq.resize(static_cast<std::size_t>(c.l_qseq));
  const std::uint8_t* s = bam_get_seq(b);
  for (int i = 0; i < c.l_qseq; ++i) rd.seq[static_cast<std::size_t>(i)] = seq_nt16_str[bam_seqi(s, i)];
  return true;
}

DamageProfile damage_profile(const BwtIndex& idx, const DamageOptions& opt) {
  std::vector<std::string> names;
  for (const Contig& c : idx.contigs) names.push_back(c.name);
  return DamageProfile(std::move(names), opt);
}

void damage_span(const BwtIndex& idx, int contig, std::int64_t pos, std::int64_t len, std::string& s) {
  const Contig& c = idx.contigs.at(static_cast<std::size_t>(contig));
  const std::int64_t from = c.offset + std::max<std::int64_t>(pos, 0);
  const std::int64_t to = std::min<std::int64_t>(c.offset + pos + len, c.offset + c.len);
  s.assign(static_cast<std::size_t>(std::max<std::int64_t>(to - from, 0)), 'N');
  for (std::int64_t p = from; p < to; ++p) s[static_cast<std::size_t>(p - from)] = "ACGT"[idx.pac_base(p)];
  // the holes (bwa's .amb: runs of one ambiguous character) that overlap [from, to)
  auto h = std::upper_bound(idx.holes.begin(), idx.holes.end(), from, [](std::int64_t v, const Hole& x) { return v < x.offset; });
  if (h != idx.holes.begin()) --h;
  for (; h != idx.holes.end() && h->offset < to; ++h)
    for (std::int64_t p = std::max(from, h->offset); p < std::min(to, h->offset + h->len); ++p)
      s[static_cast<std::size_t>(p - from)] = static_cast<char>(h->amb >= 'a' && h->amb <= 'z' ? h->amb - 32 : h->amb);
}

std::string damage_span(const BwtIndex& idx, int contig, std::int64_t pos, std::int64_t len) {
  std::string s;
  damage_span(idx, contig, pos, len, s);
  return s;
}

DamageProfile damage_from_bam(const std::string& bam, const std::string& fasta, const DamageOptions& opt) {
  const std::vector<RefSeq> ref = read_reference(fasta);
  std::unordered_map<std::string, const RefSeq*> by_name;
  for (const RefSeq& r : ref) by_name.emplace(r.name, &r);
  std::unique_ptr<samFile, HtsCloser> in(sam_open(bam.c_str(), "r"));
  if (!in) input_error(bam, "cannot open (not a SAM/BAM/CRAM file, or missing)");
  std::unique_ptr<sam_hdr_t, HtsCloser> hdr(sam_hdr_read(in.get()));
  if (!hdr) input_error(bam, "no SAM/BAM header");
  std::vector<std::string> names;
  std::vector<const RefSeq*> seqs;
  for (int t = 0; t < sam_hdr_nref(hdr.get()); ++t) {
    const std::string name = sam_hdr_tid2name(hdr.get(), t);
    const auto it = by_name.find(name);
    if (it == by_name.end()) input_error(bam, "contig " + name + " of the header is not in " + fasta);
    if (static_cast<std::int64_t>(it->second->seq.size()) != sam_hdr_tid2len(hdr.get(), t))
      input_error(bam, "contig " + name + " is " + std::to_string(sam_hdr_tid2len(hdr.get(), t)) + " bp in the header but " +
                           std::to_string(it->second->seq.size()) + " bp in " + fasta);
    names.push_back(name);
    seqs.push_back(it->second);
  }
  DamageProfile p(names, opt);
  std::unique_ptr<bam1_t, HtsCloser> b(bam_init1());
  DamageRead rd;
  int r = 0;
  std::uint64_t records = 0;
  while ((r = sam_read1(in.get(), hdr.get(), b.get())) >= 0) {
    ++records;
    if (damage_read(b.get(), rd)) p.add(rd, seqs[static_cast<std::size_t>(rd.contig)]->seq);
  }
  if (r < -1) input_error(bam, "truncated or corrupt at record " + std::to_string(records + 1));
  if (p.reads() == 0)
    input_error(bam, std::to_string(records) + " records, none mapped with MAPQ >= " + std::to_string(opt.min_mapq) +
                         " (unmapped, secondary, supplementary, duplicate and QC-failed records are left out)");
  return p;
}

void write_misincorporation(const DamageProfile& p, const std::string& path, const std::string& source) {
  AtomicOutput o(path);
  auto f = open_out(o);
  std::fprintf(f.get(), "# table produced by barracuda_exact damage, in mapDamage 2's layout\n# %s\n", source.c_str());
  std::fprintf(f.get(), "# Chr: reference from sam/bam header, End: from which termini of DNA sequences, Std: strand of reads\n");
  std::fprintf(f.get(), "Chr\tEnd\tStd\tPos\tA\tC\tG\tT\tTotal");
  for (const char* m : kDamageMutations) std::fprintf(f.get(), "\t%s", m);
  std::fprintf(f.get(), "\n");
  std::vector<int> order(p.contigs().size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return p.contigs()[static_cast<std::size_t>(a)] < p.contigs()[static_cast<std::size_t>(b)]; });
  for (const int c : order)
    for (const int e : {1, 0})      // 3p, 5p
      for (const int s : {0, 1})    // +, -
        for (int i = 0; i < p.options().length; ++i) {
          std::uint64_t total = 0;
          for (int k = 0; k < 4; ++k) total += p.count(c, e, s, i, k);
          std::fprintf(f.get(), "%s\t%s\t%c\t%d", p.contigs()[static_cast<std::size_t>(c)].c_str(), e ? "3p" : "5p", s ? '-' : '+', i + 1);
          for (int k = 0; k < 4; ++k) std::fprintf(f.get(), "\t%llu", static_cast<unsigned long long>(p.count(c, e, s, i, k)));
          std::fprintf(f.get(), "\t%llu", static_cast<unsigned long long>(total));
          for (int k = 4; k < kDamageColumns; ++k) std::fprintf(f.get(), "\t%llu", static_cast<unsigned long long>(p.count(c, e, s, i, k)));
          std::fprintf(f.get(), "\n");
        }
  finish(f, o);
}

void write_composition(const DamageProfile& p, const std::string& path, const std::string& source) {
  AtomicOutput o(path);
  auto f = open_out(o);
  std::fprintf(f.get(), "# table produced by barracuda_exact damage, in mapDamage 2's layout\n# %s\n", source.c_str());
  std::fprintf(f.get(), "# Chr: reference from sam/bam header, End: from which termini of DNA sequences, Std: strand of reads\n");
  std::fprintf(f.get(), "Chr\tEnd\tStd\tPos\tA\tC\tG\tT\tTotal\n");
  std::vector<int> order(p.contigs().size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return p.contigs()[static_cast<std::size_t>(a)] < p.contigs()[static_cast<std::size_t>(b)]; });
  const int L = p.options().length, A = p.options().around;
  for (const int c : order)
    for (const int e : {1, 0})
      for (const int s : {0, 1}) {
        std::vector<int> pos;
        for (int i = e ? -L : -A; i <= (e ? A : L); ++i)
          if (i != 0) pos.push_back(i);
        for (const int i : pos) {
          std::uint64_t total = 0;
          std::fprintf(f.get(), "%s\t%s\t%c\t%d", p.contigs()[static_cast<std::size_t>(c)].c_str(), e ? "3p" : "5p", s ? '-' : '+', i);
          for (int b = 0; b < 4; ++b) {
            const std::uint64_t v = p.composition(c, e, s, i, b);
            total += v;
            std::fprintf(f.get(), "\t%llu", static_cast<unsigned long long>(v));
          }
          std::fprintf(f.get(), "\t%llu\n", static_cast<unsigned long long>(total));
        }
      }
  finish(f, o);
}

void write_lengths(const DamageProfile& p, const std::string& path, const std::string& source) {
  AtomicOutput o(path);
  auto f = open_out(o);
  std::fprintf(f.get(), "# table produced by barracuda_exact damage, in mapDamage 2's layout\n# %s\n# Std: strand of reads\n",
               source.c_str());
  std::fprintf(f.get(), "Std\tLength\tOccurences \n");
  for (const int s : {0, 1})
    for (const auto& [len, n] : p.lengths(s)) std::fprintf(f.get(), "%c\t%lld\t%llu\n", s ? '-' : '+', static_cast<long long>(len), static_cast<unsigned long long>(n));
  finish(f, o);
}

void write_damage_svg(const DamageProfile& p, const std::string& path) {
  static const char* kSubs[] = {"C>T", "G>A", "A>G", "T>C", "A>C", "A>T", "C>G", "C>A", "T>G", "T>A", "G>C", "G>T"};
  const int L = p.options().length;
  const double W = 360, H = 240, left = 50, top = 20, gap = 30;  // two panels of W x H
  std::vector<std::vector<double>> f[2];
  double ymax = 0.05;
  for (int e = 0; e < 2; ++e)
    for (const char* m : kSubs) {
      const int base = m[0] == 'A' ? 0 : m[0] == 'C' ? 1 : m[0] == 'G' ? 2 : 3;
      std::vector<double> v(static_cast<std::size_t>(L));
      for (int i = 0; i < L; ++i) {
        v[static_cast<std::size_t>(i)] = end_frequency(p, e, base, m, i);
        ymax = std::max(ymax, v[static_cast<std::size_t>(i)]);
      }
      f[e].push_back(std::move(v));
    }
  ymax = std::ceil(ymax * 20) / 20;  // a multiple of 0.05
  AtomicOutput o(path);
  auto out = open_out(o);
  std::FILE* fp = out.get();
  std::fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
               left + 2 * W + gap + 20, top + H + 50);
  for (int e = 0; e < 2; ++e) {
    const double x0 = left + e * (W + gap);
    std::fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", x0, top, W, H);
    std::fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x0 + W / 2, top + H + 36,
                 e == 0 ? "position from the 5' end" : "position from the 3' end");
    for (int i = 0; i < L; i += std::max(1, L / 5)) {
      const double x = e == 0 ? x0 + W * (i + 0.5) / L : x0 + W * (L - i - 0.5) / L;
      std::fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", x, top + H + 14, e == 0 ? i + 1 : -(i + 1));
    }
    for (std::size_t k = 0; k < std::size(kSubs); ++k) {
      const std::size_t j = std::size(kSubs) - 1 - k;  // grey first, C>T and G>A on top
      const char* colour = j == 0 ? "#d62728" : j == 1 ? "#1f77b4" : "#b0b0b0";
      std::fprintf(fp, "<polyline data-sub=\"%s\" data-end=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" points=\"",
                   kSubs[j], e == 0 ? "5p" : "3p", colour, j < 2 ? "2" : "1");
      for (int i = 0; i < L; ++i) {
        const double x = e == 0 ? x0 + W * (i + 0.5) / L : x0 + W * (L - i - 0.5) / L;
        const double y = top + H * (1 - f[e][j][static_cast<std::size_t>(i)] / ymax);
        std::fprintf(fp, "%s%.2f,%.2f", i ? " " : "", x, y);
      }
      std::fprintf(fp, "\"/>\n");
    }
  }
  std::fprintf(fp, "<text x=\"12\" y=\"%.1f\" transform=\"rotate(-90 12 %.1f)\" text-anchor=\"middle\">frequency (0 to %.2f)</text>\n",
               top + H / 2, top + H / 2, ymax);
  std::fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#d62728\">C&gt;T</text><text x=\"%.1f\" y=\"%.1f\" fill=\"#1f77b4\">G&gt;A</text>"
               "<text x=\"%.1f\" y=\"%.1f\" fill=\"#808080\">other substitutions</text>\n",
               left + 8, top + 14, left + 48, top + 14, left + 88, top + 14);
  std::fprintf(fp, "</svg>\n");
  finish(out, o);
}

double damage_ct5(const DamageProfile& p, int i) { return end_frequency(p, 0, 1, "C>T", i); }
double damage_ga3(const DamageProfile& p, int i) { return end_frequency(p, 1, 2, "G>A", i); }

}  // namespace evk::barracuda_exact
