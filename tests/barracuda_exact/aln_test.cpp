// The inexact search against `bwa aln` 0.7.17 itself: every read's list of hit intervals (SA
// interval, mismatches, gap opens/extensions, insertions/deletions, score) equal to the .sai bwa
// writes, in bwa's order, on simulated reads (art_illumina, also with raised indel rates), reads
// with planted indels/N/substitutions on a reference with repeats and N runs, real C. elegans and
// lambda reads, and with non-default options.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "aln_settings.hpp"
#include "aln_oracle.hpp"
#include "core/aln_search.hpp"
#include "evk_testing.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
using evk::testing::TempDir;

namespace {

std::string describe(const bc::Aln& a) {
  std::ostringstream o;
  o << "[k=" << a.k << " l=" << a.l << " mm=" << a.n_mm << " go=" << a.n_gapo << " ge=" << a.n_gape
    << " ins=" << a.n_ins << " del=" << a.n_del << " score=" << a.score << "]";
  return o.str();
}

// Our search with opt vs `bwa aln bwa_args` on the same reads; returns the number of reads compared
// and counts reads with hits, with gaps, with several intervals.
struct Tally {
  std::size_t reads = 0, with_hits = 0, gapped = 0, multi = 0, repeats = 0;
};
Tally compare_with_bwa_aln(const TempDir& dir, const std::string& fasta, const std::string& reads,
                           const std::string& bwa_args, const bc::AlnOptions& opt, int threads = 2) {
  Tally t;
  const std::string bref = bct::bwa_index_copy(dir.path(), fasta);
  const auto sai = dir / "r.sai";
  EXPECT_TRUE(bct::bwa_aln(bwa_args, bref, reads, sai));
  const bct::Sai theirs = bct::read_sai(sai);
  const bc::BwtIndex idx = bc::build_index(bc::read_reference(fasta));
  const bct::Reads r = bct::load_reads(reads, opt.trim_qual);
  const bc::AlnBatch ours = bc::aln_search_batch(idx, r.codes, opt, threads);
  EXPECT_EQ(ours.size(), theirs.alns.size());
  int shown = 0;
  for (std::size_t i = 0; i < std::min(ours.size(), theirs.alns.size()); ++i) {
    const std::vector<bc::Aln> a(ours.begin(i), ours.begin(i) + ours.count(i)),
        b(theirs.alns.begin(i), theirs.alns.begin(i) + theirs.alns.count(i));
    if (a != b && shown++ < 5) {
      std::string sa, sb;
      for (const auto& x : a) sa += describe(x);
      for (const auto& x : b) sb += describe(x);
      ADD_FAILURE() << "read " << i + 1 << " (" << r.batch.name(i) << ", " << r.batch.seq(i) << ")\n ours: " << sa
                    << "\n bwa:  " << sb;
    }
    ++t.reads;
    t.with_hits += !b.empty();
    bool g = false;
    for (const auto& x : b) g |= x.n_gapo > 0;
    t.gapped += g;
    t.multi += b.size() > 1;
    std::uint64_t occ = 0;
    for (const auto& x : b) occ += x.l - x.k + 1;
    t.repeats += occ > 1;
  }
  EXPECT_EQ(shown, 0) << shown << " reads differ";
  return t;
}

std::string ecoli_fasta(const TempDir& dir) {
  const auto g = evk::testing::project_data_dir() / "genomes" / "NC_008253.fna.gz";
  if (!std::filesystem::exists(g)) return "";
  const std::string fa = (dir / "ecoli.fa").string();
  EXPECT_EQ(evk::testing::run("gzip -dc " + g.string() + " > " + fa).exit_code, 0);
  return fa;
}

}  // namespace

TEST(BarracudaAln, MaxDiffEqualsBwaTable) {
  if (!bct::have("bwa")) GTEST_SKIP() << "bwa not installed";
  // bwa aln prints, for the default -n 0.04, the read lengths 17..250 where max_diff changes
  const auto r = evk::testing::run("bwa aln /nonexistent /dev/null 2>&1");
  std::map<int, int> theirs, ours;
  const std::regex line(R"(\[bwa_aln\] (\d+)bp reads: max_diff = (\d+))");
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), line), end; it != end; ++it)
    theirs[std::stoi((*it)[1])] = std::stoi((*it)[2]);
  ASSERT_GE(theirs.size(), 8u) << r.out;
  bc::AlnOptions opt;
  for (int l = 17, k = 0; l <= 250; ++l) {
    const int m = bc::aln_max_diff(opt, l);
    if (m != k) ours[l] = m;
    k = m;
  }
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(bc::aln_max_diff(opt, 100), 5);
  EXPECT_EQ(bc::aln_max_diff(opt, 150), 6);
}

TEST(BarracudaAln, TrimmingEqualsBwaRule) {
  // bwa_trim_read: scan from the 3' end while the running sum of (q - Q) stays >= 0, keep the best cut
  std::string q(100, 'I');  // Q40
  EXPECT_EQ(bc::trim_len(20, q.c_str(), 100), 100);
  for (int i = 80; i < 100; ++i) q[i] = '#';  // Q2 tail
  EXPECT_EQ(bc::trim_len(20, q.c_str(), 100), 80);
  EXPECT_EQ(bc::trim_len(0, q.c_str(), 100), 100);
  std::string all_low(60, '#');
  EXPECT_EQ(bc::trim_len(20, all_low.c_str(), 60), 35);  // never below 35 bp
}

TEST(BarracudaAln, SearchEqualsBwaOnPlantedIndelsAndRepeats) {
  if (!bct::have("bwa")) GTEST_SKIP() << "bwa not installed";
  TempDir dir;
  bct::write_fasta(dir / "t.fa", bct::tricky_reference(31));
  bct::planted_reads((dir / "t.fa").string(), dir / "p.fq", 4000, 20, 260, 5, bct::tricky_repeats());
  const Tally t = compare_with_bwa_aln(dir, (dir / "t.fa").string(), (dir / "p.fq").string(), "", bc::AlnOptions{});
  EXPECT_EQ(t.reads, 4000u);
  EXPECT_GT(t.gapped, 400u);
  EXPECT_GT(t.repeats, 100u);
  EXPECT_GT(t.multi, 5u);
}

TEST(BarracudaAln, SearchEqualsBwaOnArtEcoliWithIndels) {
  if (!bct::have("bwa")) GTEST_SKIP() << "bwa not installed";
  TempDir dir;
  const std::string fa = ecoli_fasta(dir);
  if (fa.empty()) GTEST_SKIP() << "no E. coli genome";
  if (!bct::art_reads(fa, dir / "a", 100, 3000, 3, false, "-ir 0.002 -dr 0.002")) GTEST_SKIP() << "no art_illumina";
  const Tally t = compare_with_bwa_aln(dir, fa, (dir / "a.fq").string(), "", bc::AlnOptions{});
  EXPECT_EQ(t.reads, 3000u);
  EXPECT_GT(t.gapped, 100u);
}

TEST(BarracudaAln, SearchEqualsBwaOnRealCelegansReads) {
  if (!bct::have_bwa()) GTEST_SKIP() << "bwa/samtools not installed";
  const auto g = evk::testing::project_data_dir() / "genomes" / "ce.fa";
  const auto s = evk::testing::project_data_dir() / "reads" / "ce#1000.sam";
  if (!std::filesystem::exists(g) || !std::filesystem::exists(s)) GTEST_SKIP() << "no C. elegans data";
  TempDir dir;
  std::filesystem::copy_file(g, dir / "ce.fa");
  ASSERT_EQ(evk::testing::run("samtools fastq " + s.string() + " > " + (dir / "ce.fq").string() + " 2>/dev/null").exit_code, 0);
  const Tally t = compare_with_bwa_aln(dir, (dir / "ce.fa").string(), (dir / "ce.fq").string(), "", bc::AlnOptions{});
  EXPECT_GE(t.reads, 1000u);
  EXPECT_GT(t.with_hits, 500u);
}

TEST(BarracudaAln, SearchEqualsBwaOnLambdaReadsWithOptions) {
  if (!bct::have("bwa")) GTEST_SKIP() << "bwa not installed";
  const auto g = evk::testing::project_data_dir() / "genomes" / "lambda_virus.fa.gz";
  const auto r = evk::testing::project_data_dir() / "reads" / "lambda_reads_1.fq.gz";
  if (!std::filesystem::exists(g) || !std::filesystem::exists(r)) GTEST_SKIP() << "no lambda data";
  TempDir dir;
  const std::string fa = (dir / "lambda.fa").string();
  ASSERT_EQ(evk::testing::run("gzip -dc " + g.string() + " > " + fa).exit_code, 0);
  {
    SCOPED_TRACE("defaults");
    const Tally t = compare_with_bwa_aln(dir, fa, r.string(), "", bc::AlnOptions{});
    EXPECT_GT(t.with_hits, 5000u);
  }
  {
    SCOPED_TRACE("-n 3 -o 2 -e 3 -l 20 -k 1 -M 4 -O 9 -E 3 -R 10 -i 3 -q 15");
    bc::AlnOptions o = bct::varied_aln_options();  // with -n 3 -R 10 -q 15 and no -L
    o.max_diff = 3;
    o.max_top2 = 10;
    o.log_gap = false;
    o.trim_qual = 15;
    compare_with_bwa_aln(dir, fa, r.string(), "-n 3 -o 2 -e 3 -l 20 -k 1 -M 4 -O 9 -E 3 -R 10 -i 3 -q 15", o);
  }
}

TEST(BarracudaAln, ResultsDoNotDependOnThreads) {
  const auto ref = bct::tricky_reference(32);
  const bc::BwtIndex idx = bc::build_index(ref);
  TempDir dir;
  bct::write_fasta(dir / "t.fa", ref);
  bct::planted_reads((dir / "t.fa").string(), dir / "p.fq", 1500, 30, 150, 6);
  const bct::Reads r = bct::load_reads((dir / "p.fq").string());
  const bc::AlnBatch a = bc::aln_search_batch(idx, r.codes, bc::AlnOptions{}, 1);
  const bc::AlnBatch b = bc::aln_search_batch(idx, r.codes, bc::AlnOptions{}, 3);
  EXPECT_EQ(a.alns, b.alns);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_GT(a.alns.size(), 1000u);
}

// bwa aln's batches of 0x40000 reads each limit the gap opens by their longest read
// (min(-o, maximum differences of that read)); a batch of ours holding several of bwa's is searched
// whole only when every one of them gets the same limit.
TEST(BarracudaAln, BatchCutsFollowBwaBatchesGapOpenLimits) {
  bc::AlnOptions opt;  // -n 0.01 -o 2: 40 bp reads allow 3 differences, 5 bp reads 1 (Poisson, 2% error)
  opt.fnr = 0.01;
  opt.max_gapo = 2;
  ASSERT_EQ(bc::aln_max_diff(opt, 40), 3);
  ASSERT_EQ(bc::aln_max_diff(opt, 5), 1);
  using Cuts = std::vector<std::size_t>;
  const std::vector<int> same = {40, 30, 40, 25, 40, 40, 33, 40, 40, 12};
  EXPECT_EQ(bc::aln_batch_cuts(opt, same, 4), (Cuts{0, 10}));   // limit 2 in each of bwa's batches
  std::vector<int> short_mid = same;
  for (int i = 4; i < 8; ++i) short_mid[static_cast<std::size_t>(i)] = 5;  // the second batch's limit is 1
  EXPECT_EQ(bc::aln_batch_cuts(opt, short_mid, 4), (Cuts{0, 4, 8, 10}));
  std::vector<int> short_last = same;
  short_last[8] = short_last[9] = 5;  // only the last (partial) batch differs
  EXPECT_EQ(bc::aln_batch_cuts(opt, short_last, 4), (Cuts{0, 4, 8, 10}));
  EXPECT_EQ(bc::aln_batch_cuts(opt, short_mid, 16), (Cuts{0, 10}));  // one of bwa's batches
  EXPECT_EQ(bc::aln_batch_cuts(opt, {}, 4), (Cuts{0, 0}));
  opt.max_gapo = 1;  // -o 1: every batch's limit is 1 (a 5 bp read still allows one difference)
  EXPECT_EQ(bc::aln_batch_cuts(opt, short_mid, 4), (Cuts{0, 10}));
  opt.fnr = -1;  // -n 3 (an integer): one limit for all
  opt.max_diff = 3;
  opt.max_gapo = 2;
  EXPECT_EQ(bc::aln_batch_cuts(opt, short_mid, 4), (Cuts{0, 10}));
}
