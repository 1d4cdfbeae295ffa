// `barracuda_exact map` (inexact, single and paired end) against `bwa aln | bwa samse` and
// `bwa aln x2 | bwa sampe` (bwa 0.7.17 run here), record by record with the agreement tool:
// every field and tag (FLAG, POS, CIGAR with indels, MAPQ, mate fields, TLEN, XT NM XN SM AM X0 X1
// XM XO XG MD XA XC RG) must be identical; a difference is only tolerated when explained as another
// of bwa's equally best hits, and then counted against the >= 99.5% target.
// Also: the record steps on their own (drand48, MAPQ rule, global alignment CIGARs).
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <random>
#include <sstream>
#include <cstdlib>

#include "aln_oracle.hpp"
#include "core/ksw.hpp"
#include "core/samse.hpp"
#include "evk_testing.hpp"
#include "sam_agree.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
using evk::testing::TempDir;

namespace {

std::map<std::string, std::string> contigs(const std::string& fasta) {
  std::map<std::string, std::string> m;
  for (const auto& s : bc::read_reference(fasta)) {
    std::string up;
    for (char c : s.seq) up += "ACGTN"[bc::base_code(c)];
    m[s.name] = up;
  }
  return m;
}

// Runs ours (CPU backend) and bwa on the same reads; returns the agreement and prints its listing.
bct::Agreement map_both(const TempDir& dir, const std::string& fasta, const std::string& reads, const std::string& reads2 = "",
                        const std::string& our_args = "", const std::string& aln_args = "", const std::string& sam_args = "") {
  const auto ours = dir / "ours.sam", theirs = dir / "bwa.sam";
  auto r = evk::testing::run_tool("barracuda_exact", "index " + fasta);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = evk::testing::run_tool("barracuda_exact", "map --backend cpu -t 2 " + our_args + " " + fasta + " " + reads + " " + reads2 +
                                                    " -o " + ours.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string bref = bct::bwa_index_copy(dir.path(), fasta);
  const std::string s1 = (dir / "1.sai").string(), s2 = (dir / "2.sai").string();
  EXPECT_TRUE(bct::bwa_aln(aln_args, bref, reads, s1));
  std::string cmd;
  if (reads2.empty()) {
    cmd = "bwa samse " + sam_args + " " + bref + " " + s1 + " " + reads;
  } else {
    EXPECT_TRUE(bct::bwa_aln(aln_args, bref, reads2, s2));
    cmd = "bwa sampe " + sam_args + " " + bref + " " + s1 + " " + s2 + " " + reads + " " + reads2;
  }
  EXPECT_EQ(evk::testing::run(cmd + " > " + theirs.string() + " 2>/dev/null").exit_code, 0) << cmd;
  const bct::Agreement a = bct::sam_agree(bct::read_file(ours), bct::read_file(theirs), contigs(fasta));
  EXPECT_TRUE(a.error.empty()) << a.error;
  std::string list;
  for (std::size_t i = 0; i < a.listing.size() && i < 10; ++i) list += a.listing[i] + "\n";
  std::printf("%s\n", bct::agreement_row(reads2.empty() ? "single" : "paired", a).c_str());
  EXPECT_EQ(a.unexplained, 0u) << list;
  EXPECT_GE(a.identical_pct(), 99.5) << list;
  return a;
}

std::string gunzip_to(const TempDir& dir, const std::filesystem::path& gz, const std::string& name) {
  const std::string out = (dir / name).string();
  EXPECT_EQ(evk::testing::run("gzip -dc " + gz.string() + " > " + out).exit_code, 0);
  return out;
}

}  // namespace

TEST(BarracudaSamse, Drand48IsGlibcs) {
  // glibc: srand48(11) then drand48() — checked against the C library itself
  srand48(11);
  bc::Rand48 r(11);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(r.drand(), drand48()) << i;
  srand48(123456789);
  bc::Rand48 q(123456789);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(q.drand(), drand48()) << i;
}

TEST(BarracudaSamse, MapqRule) {
  bc::SeqAln s;
  s.c1 = 0;
  EXPECT_EQ(bc::approx_mapq(s, 5), 23);
  s.c1 = 2;
  EXPECT_EQ(bc::approx_mapq(s, 5), 0);
  s.c1 = 1;
  s.n_mm = 5;
  EXPECT_EQ(bc::approx_mapq(s, 5), 25);
  s.n_mm = 1;
  s.c2 = 0;
  EXPECT_EQ(bc::approx_mapq(s, 5), 37);
  s.c2 = 1;  // 23 - (int)(4.343 ln 1 + .5)
  EXPECT_EQ(bc::approx_mapq(s, 5), 23);
  s.c2 = 10;  // 23 - (int)(4.343 * 2.3026 + .5) = 23 - 10
  EXPECT_EQ(bc::approx_mapq(s, 5), 13);
  s.c2 = 1000;  // capped at 255: 23 - 24 < 0 -> 0
  EXPECT_EQ(bc::approx_mapq(s, 5), 0);
}

TEST(BarracudaSamse, GlobalAlignmentCigars) {
  const bc::ScoreMatrix m = bc::score_matrix(1, 3);
  auto codes = [](const std::string& s) {
    std::vector<std::uint8_t> c;
    for (char x : s) c.push_back(static_cast<std::uint8_t>(bc::base_code(x)));
    return c;
  };
  auto cig = [&](const std::string& q, const std::string& t, int* score = nullptr) {
    const auto a = codes(q), b = codes(t);
    std::vector<std::uint32_t> c;
    const int sc = bc::global_align(static_cast<int>(a.size()), a.data(), static_cast<int>(b.size()), b.data(), m, 5, 1, 50, &c);
    if (score) *score = sc;
    std::string out;
    for (auto x : c) out += std::to_string(x >> 4) + "MIDNS"[x & 0xf];
    return out;
  };
  int sc = 0;
  EXPECT_EQ(cig("ACGTACGTAC", "ACGTACGTAC", &sc), "10M");
  EXPECT_EQ(sc, 10);
  // an inserted G between A and C: the only placement without mismatches (gap 5 + 1)
  EXPECT_EQ(cig("ACGTAGCGTACGGT", "ACGTACGTACGGT", &sc), "5M1I8M");
  EXPECT_EQ(sc, 13 - 6);
  // the A between T and C deleted
  EXPECT_EQ(cig("ACGTCGTACGGT", "ACGTACGTACGGT", &sc), "4M1D8M");
  EXPECT_EQ(sc, 12 - 6);
  // two inserted bases cost 5 + 2; a mismatch 3 (+1 lost match)
  EXPECT_EQ(cig("AAAATTCCCCGGGG", "AAAACCCCGGGG", &sc), "4M2I8M");
  EXPECT_EQ(sc, 12 - 7);
  EXPECT_EQ(cig("ACGTACGTAC", "ACGAACGTAC", &sc), "10M");
  EXPECT_EQ(sc, 9 - 3);
}

TEST(BarracudaSamse, EqualsBwaOnPlantedReadsOnTrickyReference) {
  if (!bct::have_bwa()) GTEST_SKIP() << "bwa/samtools not installed";
  TempDir dir;
  bct::write_fasta(dir / "t.fa", bct::tricky_reference(41));
  bct::planted_reads((dir / "t.fa").string(), dir / "p.fq", 4000, 20, 260, 7, bct::tricky_repeats());
  const auto a = map_both(dir, (dir / "t.fa").string(), (dir / "p.fq").string());
  EXPECT_EQ(a.records, 4000u);
}

// Ancient-DNA pipelines' options (short reads, seeding off, more differences and gaps allowed):
// `map --seed-len 1024 --max-diff 0.01 --max-gap-open 2` is `bwa aln -l 1024 -n 0.01 -o 2 | bwa
// samse`, and `--seed-len 1024 --max-diff 0.04` is `bwa aln -l 1024 -n 0.04 | bwa samse`.
TEST(BarracudaSamse, EqualsBwaWithAncientDnaOptions) {
  if (!bct::have_bwa()) GTEST_SKIP() << "bwa/samtools not installed";
  TempDir dir;
  bct::write_fasta(dir / "t.fa", bct::tricky_reference(43));
  bct::planted_reads((dir / "t.fa").string(), dir / "p.fq", 3000, 25, 90, 11, bct::tricky_repeats());
  const std::string fa = (dir / "t.fa").string(), reads = (dir / "p.fq").string();
  auto a = map_both(dir, fa, reads, "", "--seed-len 1024 --max-diff 0.01 --max-gap-open 2", "-l 1024 -n 0.01 -o 2");
  EXPECT_EQ(a.records, 3000u);
  a = map_both(dir, fa, reads, "", "--seed-len 1024 --max-diff 0.04", "-l 1024 -n 0.04");
  EXPECT_EQ(a.records, 3000u);
}

TEST(BarracudaSamse, EqualsBwaOnArtEcoli100And150WithIndels) {
  if (!bct::have_bwa()) GTEST_SKIP() << "bwa/samtools not installed";
  const auto g = evk::testing::project_data_dir() / "genomes" / "NC_008253.fna.gz";
  if (!std::filesystem::exists(g)) GTEST_SKIP() << "no E. coli genome";
  TempDir dir;
  const std::string fa = gunzip_to(dir, g, "ecoli.fa");
  if (!bct::art_reads(fa, dir / "a", 100, 2000, 11, false, "-ir 0.001 -dr 0.001")) GTEST_SKIP() << "no art_illumina";
  ASSERT_TRUE(bct::art_reads(fa, dir / "b", 150, 1500, 12, false, "-ir 0.001 -dr 0.001"));
  ASSERT_EQ(evk::testing::run("cat " + (dir / "a.fq").string() + " " + (dir / "b.fq").string() + " > " + (dir / "ab.fq").string()).exit_code, 0);
  const auto a = map_both(dir, fa, (dir / "ab.fq").string());
  EXPECT_EQ(a.records, 3500u);
}

TEST(BarracudaSamse, EqualsBwaOnRealCelegansAndSamtoolsReads) {
  if (!bct::have_bwa()) GTEST_SKIP() << "bwa/samtools not installed";
  const auto g = evk::testing::project_data_dir() / "genomes" / "ce.fa";
  const auto s = evk::testing::project_data_dir() / "reads" / "ce#1000.sam";
  if (!std::filesystem::exists(g) || !std::filesystem::exists(s)) GTEST_SKIP() << "no C. elegans data";
  {
    TempDir dir;
    std::filesystem::copy_file(g, dir / "ce.fa");
    ASSERT_EQ(evk::testing::run("samtools fastq " + s.string() + " > " + (dir / "ce.fq").string() + " 2>/dev/null").exit_code, 0);
    EXPECT_GE(map_both(dir, (dir / "ce.fa").string(), (dir / "ce.fq").string()).records, 1000u);
  }
  const auto st = evk::testing::project_data_dir() / "samtools-test" / "dat";
  if (!std::filesystem::exists(st / "mpileup.ref.fa")) GTEST_SKIP() << "no samtools-test data";
  TempDir dir;
  std::filesystem::copy_file(st / "mpileup.ref.fa", dir / "chr17.fa");
  ASSERT_EQ(evk::testing::run("for i in 1 2 3; do samtools fastq " + (st / "mpileup.").string() + "$i.sam; done > " +
                              (dir / "g1k.fq").string() + " 2>/dev/null").exit_code, 0);
  EXPECT_GE(map_both(dir, (dir / "chr17.fa").string(), (dir / "g1k.fq").string()).records, 1000u);
}

TEST(BarracudaSamse, EqualsBwaWithOptionsTrimmingAndReadGroup) {
  if (!bct::have_bwa()) GTEST_SKIP() << "bwa/samtools not installed";
  const auto g = evk::testing::project_data_dir() / "genomes" / "lambda_virus.fa.gz";
  const auto r = evk::testing::project_data_dir() / "reads" / "lambda_reads_1.fq.gz";
  if (!std::filesystem::exists(g) || !std::filesystem::exists(r)) GTEST_SKIP() << "no lambda data";
  TempDir dir;
  const std::string fa = gunzip_to(dir, g, "lambda.fa");
  map_both(dir, fa, r.string(), "",
           "--trim-q 20 --max-diff 4 --max-gap-open 2 --seed-len 24 --seed-diff 1 --mismatch 4 --gap-open 9 --gap-ext 3 "
           "--max-best 10 -R '@RG\\tID:lam\\tSM:x'",
           "-q 20 -n 4 -o 2 -l 24 -k 1 -M 4 -O 9 -E 3 -R 10", "-r '@RG\\tID:lam\\tSM:x'");
}

TEST(BarracudaSampe, EqualsBwaOnPlantedPairs) {
  if (!bct::have_bwa()) GTEST_SKIP() << "bwa/samtools not installed";
  TempDir dir;
  bct::write_fasta(dir / "t.fa", bct::tricky_reference(42));
  bct::planted_pairs((dir / "t.fa").string(), dir / "q", 3000, 100, 320, 8, bct::tricky_repeats());
  const auto a = map_both(dir, (dir / "t.fa").string(), (dir / "q1.fq").string(), (dir / "q2.fq").string());
  EXPECT_EQ(a.records, 6000u);
}

TEST(BarracudaSampe, EqualsBwaOnArtEcoliPairs) {
  if (!bct::have_bwa()) GTEST_SKIP() << "bwa/samtools not installed";
  const auto g = evk::testing::project_data_dir() / "genomes" / "NC_008253.fna.gz";
  if (!std::filesystem::exists(g)) GTEST_SKIP() << "no E. coli genome";
  TempDir dir;
  const std::string fa = gunzip_to(dir, g, "ecoli.fa");
  if (!bct::art_reads(fa, dir / "p", 150, 2000, 13, true, "-ir 0.001 -dr 0.001 -ir2 0.001 -dr2 0.001"))
    GTEST_SKIP() << "no art_illumina";
  const auto a = map_both(dir, fa, (dir / "p1.fq").string(), (dir / "p2.fq").string());
  EXPECT_EQ(a.records, 4000u);
}

TEST(BarracudaSampe, EqualsBwaOnRealSamtoolsPairs) {
  if (!bct::have_bwa()) GTEST_SKIP() << "bwa/samtools not installed";
  const auto st = evk::testing::project_data_dir() / "samtools-test" / "dat";
  if (!std::filesystem::exists(st / "mpileup.ref.fa")) GTEST_SKIP() << "no samtools-test data";
  TempDir dir;
  std::filesystem::copy_file(st / "mpileup.ref.fa", dir / "chr17.fa");
  // both ends of the pairs whose two records are in the files
  ASSERT_EQ(evk::testing::run("cd " + dir.path().string() + " && for i in 1 2 3; do samtools view -h " + (st / "mpileup.").string() +
                              "$i.sam; done | grep -v '^@' | cut -f1 | sort | uniq -d > both.txt && for i in 1 2 3; do samtools view -h -N both.txt " +
                              (st / "mpileup.").string() + "$i.sam | samtools collate -O -u - | samtools fastq -1 r$i.1.fq -2 r$i.2.fq -0 /dev/null -s /dev/null -; done "
                              "2>/dev/null && cat r1.1.fq r2.1.fq r3.1.fq > g1.fq && cat r1.2.fq r2.2.fq r3.2.fq > g2.fq").exit_code, 0);
  const auto a = map_both(dir, (dir / "chr17.fa").string(), (dir / "g1.fq").string(), (dir / "g2.fq").string());
  EXPECT_GE(a.records, 500u);
}

TEST(BarracudaSamse, EqualsBwaOnOddReads) {
  if (!bct::have_bwa()) GTEST_SKIP() << "bwa/samtools not installed";
  TempDir dir;
  const auto ref = bct::tricky_reference(43);
  bct::write_fasta(dir / "t.fa", ref);
  // empty reads (bwa drops them), all N, 1..20 bases (huge repeats), lowercase, IUPAC codes, N runs,
  // reads at the contig ends and across contigs, 500 bases
  std::mt19937_64 rng(3);
  std::string fwd;
  for (const auto& r : ref) fwd += r.seq;
  std::ostringstream o;
  auto rec = [&](const std::string& s) {
    static int i = 0;
    o << "@o" << i++ << "\n" << s << "\n+\n" << std::string(s.size(), 'I') << "\n";
  };
  for (int i = 0; i < 300; ++i) {
    switch (i % 10) {
      case 0: rec(""); break;
      case 1: rec(std::string(1 + rng() % 60, 'N')); break;
      case 2: rec(bct::random_dna(rng, 1 + rng() % 20)); break;
      case 3: {
        std::string s = fwd.substr(rng() % (fwd.size() - 80), 80);
        for (auto& c : s) c = static_cast<char>(std::tolower(c));
        rec(s);
        break;
      }
      case 4: {
        std::string s = fwd.substr(rng() % (fwd.size() - 90), 90);
        s[rng() % 90] = "RYKMSWBDHV"[rng() % 10];
        rec(s);
        break;
      }
      case 5: {
        std::string s = fwd.substr(rng() % (fwd.size() - 100), 100);
        s.replace(10 + rng() % 50, 8, "NNNNNNNN");
        rec(s);
        break;
      }
      case 6: rec(fwd.substr(20000 - 50 + rng() % 40, 100)); break;  // across chrA | chrB
      case 7: rec(fwd.substr(fwd.size() - 100 + rng() % 20)); break;  // the very end
      case 8: rec(fwd.substr(rng() % (fwd.size() - 500), 500)); break;
      default: rec(bct::revcomp(fwd.substr(rng() % 200, 100)));  // the very start
    }
  }
  bct::write_file(dir / "odd.fq", o.str());
  const auto a = map_both(dir, (dir / "t.fa").string(), (dir / "odd.fq").string());
  EXPECT_EQ(a.records, 270u);  // the 30 empty reads have no record
}
