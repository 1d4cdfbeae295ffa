// bc_human_genome and bc_adna_reads (bench/barracuda_exact/sim, over apps/barracuda_exact/sim): run
// as executables; the outputs are measured here against the figures the programs are meant to follow
// (apps/barracuda_exact/sim/README.md), with
// expected values written out in this file, not taken from the programs.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "evk_testing.hpp"
#include "genome_model.hpp"
#include "io/sequences.hpp"

namespace {

using evk::testing::run;
using evk::testing::run_tool;
namespace bc = evk::barracuda_exact;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  return s;
}

std::string revcomp(std::string s) {
  std::reverse(s.begin(), s.end());
  for (char& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : c;
  return s;
}

// One genome of 2 Mbp (seed 7) and its reads, made once for the suite.
class Sim : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new evk::testing::TempDir;
    const auto r = run_tool("bc_human_genome", "--size 2M --seed 7 -t 2 -o '" + fa().string() + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::filesystem::path fa() { return *dir_ / "g.fa"; }
  static std::filesystem::path path(const std::string& name) { return *dir_ / name; }
  static evk::testing::TempDir* dir_;
};
evk::testing::TempDir* Sim::dir_ = nullptr;

TEST_F(Sim, GenomeIsDeterministicAndIndependentOfThreads) {
  const auto one = run_tool("bc_human_genome", "--size 2M --seed 7 -t 1");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(one.out == slurp(fa())) << "-t 1 to stdout differs from -t 2 to a file";
  const auto other = run_tool("bc_human_genome", "--size 2M --seed 8 -t 3");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(other.out.size(), one.out.size());
  EXPECT_FALSE(other.out == one.out) << "seed 8 gave seed 7's genome";
  // soft-masking lower-cases repeats and changes nothing else
  const auto soft = run_tool("bc_human_genome", "--size 2M --seed 7 --soft-mask");
  ASSERT_EQ(soft.exit_code, 0) << soft.err;
  EXPECT_TRUE(upper(soft.out) == upper(one.out));
  const auto lower = std::count_if(soft.out.begin(), soft.out.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  EXPECT_GT(lower, 800000) << "repeats + satellites are ~50% of the 1.9 Mbp of sequence";
  EXPECT_LT(lower, 1300000);
}

TEST_F(Sim, GenomeHasGrch38LikeContigsGcAndGaps) {
  static const std::uint64_t kGrch38[24] = {248956422, 242193529, 198295559, 190214555, 181538259, 170805979,
                                            159345973, 145138636, 138394717, 133797422, 135086622, 133275309,
                                            114364328, 107043718, 101991189, 90338345,  83257441,  80373285,
                                            58617616,  64444167,  46709983,  50818468,  156040895, 57227415};
  const auto ref = bc::read_reference(fa().string());
  ASSERT_EQ(ref.size(), 24u);
  std::uint64_t acgt = 0, gc = 0, n = 0, longest_n = 0, cpg = 0, c = 0, g = 0;
  for (std::size_t i = 0; i < 24; ++i) {
    EXPECT_EQ(ref[i].name, i < 22 ? "chr" + std::to_string(i + 1) : i == 22 ? "chrX" : "chrY");
    const double want = static_cast<double>(kGrch38[i]) * 2e6 / 3088269832.0;
    EXPECT_NEAR(static_cast<double>(ref[i].seq.size()), want, 1.0) << ref[i].name;
    std::uint64_t run_n = 0;
    const std::string& s = ref[i].seq;
    for (std::size_t k = 0; k < s.size(); ++k) {
      const char b = s[k];
      run_n = b == 'N' ? run_n + 1 : 0;
      longest_n = std::max(longest_n, run_n);
      n += b == 'N';
      acgt += b != 'N';
      gc += b == 'C' || b == 'G';
      c += b == 'C';
      g += b == 'G';
      cpg += b == 'C' && k + 1 < s.size() && s[k + 1] == 'G';
    }
  }
  const double gc_share = static_cast<double>(gc) / static_cast<double>(acgt);
  EXPECT_GT(gc_share, 0.39) << "GRCh38: 41% GC";
  EXPECT_LT(gc_share, 0.43);
  const double n_share = static_cast<double>(n) / static_cast<double>(n + acgt);
  EXPECT_GT(n_share, 0.035) << "GRCh38: ~5% N";
  EXPECT_LT(n_share, 0.065);
  EXPECT_GT(longest_n, 15000u) << "chrY's Yq12 block (30 Mb at full size) scaled";
  const double cpg_oe = static_cast<double>(cpg) * static_cast<double>(acgt) / (static_cast<double>(c) * static_cast<double>(g));
  EXPECT_LT(cpg_oe, 0.45) << "CpG depleted (human ~0.2-0.25)";
  EXPECT_GT(cpg_oe, 0.1);
  const auto r = run_tool("bc_human_genome", "--size 10");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--size"), std::string::npos) << r.err;
}

// Occurrences (either strand) in the genome of the 16-mers of `probe` (2 bits a base; N restarts).
std::uint64_t kmer_hits(const std::vector<bc::RefSeq>& ref, const std::string& probe) {
  auto each_kmer = [](const std::string& s, auto&& fn) {
    std::uint32_t h = 0;
    int valid = 0;
    for (char c : s) {
      const int b = c == 'A' ? 0 : c == 'C' ? 1 : c == 'G' ? 2 : c == 'T' ? 3 : -1;
      valid = b < 0 ? 0 : valid + 1;
      h = (h << 2) | static_cast<std::uint32_t>(b & 3);
      if (valid >= 16) fn(h);
    }
  };
  std::unordered_set<std::uint32_t> k;
  for (const std::string& p : {probe, revcomp(probe)}) each_kmer(p, [&](std::uint32_t h) { k.insert(h); });
  std::uint64_t hits = 0;
  for (const auto& c : ref) each_kmer(c.seq, [&](std::uint32_t h) { hits += k.count(h); });
  return hits;
}

TEST_F(Sim, GenomeCarriesRepeatFamilies) {
  const auto ref = bc::read_reference(fa().string());
  const evk::sim::Families fam = evk::sim::families_make(7);
  auto consensus = [&](evk::sim::Kind k) { return fam.family[fam.of_kind[k].front()].consensus; };
  // ~780 Alu-like copies in 2 Mbp (1.2 M in 3.1 Gbp), 5-20% diverged: thousands of intact 16-mers
  EXPECT_GT(kmer_hits(ref, consensus(evk::sim::kAlu)), 5000u);
  const std::string l1 = consensus(evk::sim::kL1);
  EXPECT_GT(kmer_hits(ref, l1.substr(l1.size() - 1000)), 2000u) << "L1's 3' end (5'-truncated copies)";
  // monomers are 20-30% from the alpha consensus (as in HORs), so few 16-mers stay intact
  EXPECT_GT(kmer_hits(ref, fam.alpha), 150u) << "alpha-satellite arrays";
  // the control: a random sequence of Alu's length has (almost) no hits in 2 Mbp
  std::string random;
  evk::sim::SimRng rng(99);
  for (int i = 0; i < 300; ++i) random += "ACGT"[rng.below(4)];
  EXPECT_LT(kmer_hits(ref, random), 20u);
  // another seed's Alu is another sequence
  EXPECT_LT(kmer_hits(ref, evk::sim::families_make(8).family[0].consensus), 200u);
}

struct ReadStats {
  std::uint64_t reads = 0, contam = 0, at = 0, at_mismatch = 0, changes = 0, mismatches = 0;
  std::vector<int> lengths;
  std::uint64_t c5[5] = {}, t5[5] = {}, g3[5] = {}, a3[5] = {};  // ref C (G) and read T (A) by end distance
  int min_q = 99, max_q = 0;
};

// Each read against its true reference segment, decoded from its name.
ReadStats measure(const std::string& fastq, const std::vector<bc::RefSeq>& ref) {
  ReadStats st;
  std::istringstream in(fastq);
  std::string name, seq, plus, qual;
  while (std::getline(in, name) && std::getline(in, seq) && std::getline(in, plus) && std::getline(in, qual)) {
    EXPECT_EQ(seq.size(), qual.size());
    ++st.reads;
    st.lengths.push_back(static_cast<int>(seq.size()));
    for (char q : qual) st.min_q = std::min(st.min_q, q - 33), st.max_q = std::max(st.max_q, q - 33);
    std::vector<std::string> f;  // fields from the right: ne, nd, strand, pos; then the contig
    std::size_t end = name.size();
    for (int k = 0; k < 4; ++k) {
      const std::size_t colon = name.rfind(':', end - 1);
      f.push_back(name.substr(colon + 1, end - colon - 1));
      end = colon;
    }
    const std::string contig = name.substr(name.find(':') + 1, end - name.find(':') - 1);
    if (contig == "*") {
      ++st.contam;
      continue;
    }
    const auto it = std::find_if(ref.begin(), ref.end(), [&](const bc::RefSeq& r) { return r.name == contig; });
    EXPECT_NE(it, ref.end()) << name;
    if (it == ref.end()) continue;
    std::string truth = upper(it->seq.substr(std::stoull(f[3]) - 1, seq.size()));
    if (f[2] == "-") truth = revcomp(truth);
    const std::size_t n = seq.size();
    std::uint64_t mm = 0;
    for (std::size_t i = 0; i < n; ++i) {
      mm += seq[i] != truth[i];
      if (truth[i] == 'A' || truth[i] == 'T') ++st.at, st.at_mismatch += seq[i] != truth[i];
      if (i < 5 && truth[i] == 'C') ++st.c5[i], st.t5[i] += seq[i] == 'T';
      if (i < 5 && truth[n - 1 - i] == 'G') ++st.g3[i], st.a3[i] += seq[n - 1 - i] == 'A';
    }
    const std::uint64_t claimed = std::stoull(f[1]) + std::stoull(f[0]);
    EXPECT_LE(mm, claimed) << name;  // an error may undo a deamination, nothing else changes bases
    st.mismatches += mm;
    st.changes += claimed;
  }
  return st;
}

int median(std::vector<int> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// |measured share - expected| within 5 binomial standard errors.
void expect_share(std::uint64_t hits, std::uint64_t n, double expected, const std::string& what) {
  ASSERT_GT(n, 0u) << what;
  const double se = std::sqrt(expected * (1 - expected) / static_cast<double>(n)) + 1e-9;
  EXPECT_NEAR(static_cast<double>(hits) / static_cast<double>(n), expected, 5 * se) << what << " (n " << n << ")";
}

// Read-level expectations for terminal rate dmax, decay 0.5, interior 0.01, error e.
void expect_model(const ReadStats& st, double dmax, double e, double contam, int med, const std::string& run) {
  EXPECT_NEAR(median(st.lengths), med, 1) << run;
  EXPECT_GE(*std::min_element(st.lengths.begin(), st.lengths.end()), 25) << run;
  EXPECT_LE(*std::max_element(st.lengths.begin(), st.lengths.end()), 120) << run;
  EXPECT_GE(st.min_q, 10);
  EXPECT_LE(st.max_q, 40);
  expect_share(st.contam, st.reads, contam, run + ": contaminant share");
  expect_share(st.at_mismatch, st.at, e, run + ": errors at reference A/T");
  EXPECT_GT(static_cast<double>(st.mismatches), 0.97 * static_cast<double>(st.changes)) << run;
  for (int i = 0; i < 5; ++i) {
    const double d = dmax * std::exp(-0.5 * i) + 0.01, p = d * (1 - e) + (1 - d) * e / 3;
    expect_share(st.t5[i], st.c5[i], p, run + ": C->T at 5' position " + std::to_string(i));
    expect_share(st.a3[i], st.g3[i], p, run + ": G->A at 3' position " + std::to_string(i));
  }
}

TEST_F(Sim, ReadsAreDeterministicAndFollowTheModel) {
  const std::string ref_arg = "'" + fa().string() + "' ";
  const auto a = run_tool("bc_adna_reads", ref_arg + "100000 - --seed 5 -t 1");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto b = run_tool("bc_adna_reads", ref_arg + "100000 '" + path("r.fq.gz").string() + "' --seed 5 -t 3");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto unz = run("gzip -dc '" + path("r.fq.gz").string() + "'");
  ASSERT_EQ(unz.exit_code, 0) << unz.err;
  EXPECT_TRUE(unz.out == a.out) << "-t 3 gzip differs from -t 1 plain";
  const auto c = run_tool("bc_adna_reads", ref_arg + "1000 - --seed 6");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_FALSE(c.out == a.out.substr(0, c.out.size())) << "seed 6 gave seed 5's reads";

  const auto ref = bc::read_reference(fa().string());
  const ReadStats st = measure(a.out, ref);
  EXPECT_EQ(st.reads, 100000u);
  expect_model(st, 0.3, 0.003, 0.1, 45, "defaults");
  // other parameters: the measurements follow them, and would fail the defaults' expectations
  const auto o = run_tool("bc_adna_reads", ref_arg + "50000 - --seed 5 --deam 0.15 --median 60 --contam 0.25 --error 0.01");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const ReadStats so = measure(o.out, ref);
  expect_model(so, 0.15, 0.01, 0.25, 60, "changed");
  const double t0 = static_cast<double>(so.t5[0]) / static_cast<double>(so.c5[0]);
  EXPECT_GT(std::abs(t0 - 0.31), 0.1) << "the 5' C->T measure tells 0.15 from 0.3";
  const auto bad = run_tool("bc_adna_reads", ref_arg + "10 - --median 10");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--median"), std::string::npos) << bad.err;
}

}  // namespace
