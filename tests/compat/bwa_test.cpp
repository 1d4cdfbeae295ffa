// The bwa drop-in against bwa 0.7.17 itself (Debian's, on PATH; skipped without it): our `aln`
// (exact and inexact, bwa's options) writes bwa's .sai byte for byte, the real `bwa samse`/`sampe`
// read it, our `samse`/`sampe` read bwa's .sai and write bwa's records (all fields, repeats
// included: bwa's drand48 choice), read groups and -f, the shell pipelines with our bwa first on
// PATH, and the clear refusals of what this build lacks.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "core/index.hpp"
#include "evk_testing.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
namespace bc = evk::barracuda_exact;
using evk::testing::TempDir;

namespace {

fs::path dropin() { return evk::testing::bin_dir().parent_path() / "compat" / "bwa" / "bwa"; }
std::string ours() { return "'" + dropin().string() + "'"; }
evk::testing::CommandResult sh(const std::string& c) { return evk::testing::run(c); }

// 2500 reads from the tricky reference (3 contigs, repeats on both strands, N runs, IUPAC):
// exact on either strand, repeats, across contig ends, over N runs, with an N, lowercase, random,
// mixed lengths 20..200; names with /1 suffixes; FASTQ.
void write_reads(const fs::path& p, const bc::BwtIndex& idx) {
  std::string fwd;
  for (std::int64_t i = 0; i < idx.l_pac; ++i) fwd += "ACGT"[idx.pac_base(i)];
  std::mt19937_64 rng(9);
  std::ostringstream o;
  for (int i = 0; i < 2500; ++i) {
    const std::size_t len = 20 + rng() % 181;
    std::string s;
    switch (i % 9) {
      case 0: s = bct::random_dna(rng, len); break;
      case 1: s = fwd.substr(20000 - len / 2, len); break;  // across chrA | chrB
      case 2: s = fwd.substr(12000 + rng() % 20, 90); break;  // many copies
      case 3: s = fwd.substr(1000 + rng() % 30, 100); break;  // copies on both strands
      case 4: s = bct::revcomp(fwd.substr(rng() % (fwd.size() - len), len)); break;
      case 5: s = fwd.substr(rng() % (fwd.size() - len), len); s[rng() % len] = 'N'; break;
      case 6: s = fwd.substr(rng() % (fwd.size() - len), len); for (auto& c : s) c = static_cast<char>(std::tolower(c)); break;
      case 7: s = fwd.substr(fwd.size() - len, len); break;
      default: s = fwd.substr(rng() % (fwd.size() - len), len);
    }
    std::string q(s.size(), 'I');
    for (auto& c : q) c = static_cast<char>('!' + rng() % 41);
    o << "@r" << i << (i % 7 == 0 ? "/1" : "") << "\n" << s << "\n+\n" << q << '\n';
  }
  bct::write_file(p, o.str());
}

struct Fixture {
  TempDir dir;
  std::string ref, reads;
  Fixture() {
    const auto r = bct::tricky_reference(31);
    bct::write_fasta(dir / "ref.fa", r);
    write_reads(dir / "r.fq", bc::build_index(r));
    ref = (dir / "ref.fa").string();
    reads = (dir / "r.fq").string();
    EXPECT_EQ(sh("bwa index " + ref).exit_code, 0);
  }
  std::string p(const std::string& name) const { return (dir / name).string(); }
};

std::string records(const std::string& sam) {
  std::istringstream in(sam);
  std::string line, out;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '@') out += line + '\n';
  return out;
}
std::string header_lines(const std::string& sam, const std::string& tag) {
  std::istringstream in(sam);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind(tag, 0) == 0) out += line + '\n';
  return out;
}
bool have_bwa() { return bct::have("bwa") && fs::exists(dropin()); }

}  // namespace

TEST(CompatBwa, AlnWritesBwasSaiByteForByte) {
  if (!have_bwa()) GTEST_SKIP() << "bwa (oracle) or the drop-in not available";
  Fixture f;
  for (const std::string opts : {"-n 0 -o 0", "-n 0", "-n 0 -o 0 -t 2 -R 5", "-n 0 -l 20 -k 1 -M 4 -e 3 -L -N"}) {
    ASSERT_EQ(sh("bwa aln " + opts + " " + f.ref + " " + f.reads + " > " + f.p("bwa.sai")).exit_code, 0);
    const auto r = sh("EVK_BACKEND=cpu " + ours() + " aln " + opts + " " + f.ref + " " + f.reads + " > " + f.p("ours.sai"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string a = bct::read_file(f.p("bwa.sai")), b = bct::read_file(f.p("ours.sai"));
    EXPECT_GT(a.size(), 68u + 2500u * 4u);
    EXPECT_TRUE(a == b) << "aln " << opts << ": .sai differs (" << a.size() << " vs " << b.size() << " bytes)";
  }
  // -f FILE writes the same bytes
  ASSERT_EQ(sh("EVK_BACKEND=cpu " + ours() + " aln -n 0 -f " + f.p("f.sai") + " " + f.ref + " " + f.reads).exit_code, 0);
  ASSERT_EQ(sh("bwa aln -n 0 " + f.ref + " " + f.reads + " > " + f.p("b0.sai")).exit_code, 0);
  EXPECT_TRUE(bct::read_file(f.p("f.sai")) == bct::read_file(f.p("b0.sai")));
}

TEST(CompatBwa, SamseEqualsBwaOnBothSais) {
  if (!have_bwa()) GTEST_SKIP() << "bwa (oracle) or the drop-in not available";
  Fixture f;
  ASSERT_EQ(sh("bwa aln -n 0 -o 0 " + f.ref + " " + f.reads + " > " + f.p("bwa.sai")).exit_code, 0);
  ASSERT_EQ(sh("EVK_BACKEND=cpu " + ours() + " aln -n 0 -o 0 " + f.ref + " " + f.reads + " > " + f.p("ours.sai")).exit_code, 0);
  const auto theirs = sh("bwa samse " + f.ref + " " + f.p("bwa.sai") + " " + f.reads);
  ASSERT_EQ(theirs.exit_code, 0);
  const std::string want = records(theirs.out);
  EXPECT_EQ(std::count(want.begin(), want.end(), '\n'), 2500);
  // the real samse on our .sai
  const auto a = sh("bwa samse " + f.ref + " " + f.p("ours.sai") + " " + f.reads);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(records(a.out) == want) << "real samse on our .sai differs";
  // our samse on bwa's .sai: every field of every record, repeats' drawn occurrences included
  const auto b = sh(ours() + " samse " + f.ref + " " + f.p("bwa.sai") + " " + f.reads);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string got = records(b.out);
  if (got != want) {
    std::istringstream x(got), y(want);
    std::string l1, l2;
    int shown = 0;
    while (std::getline(x, l1) && std::getline(y, l2) && shown < 5)
      if (l1 != l2) ADD_FAILURE() << "ours: " << l1 << "\nbwa:  " << l2, ++shown;
  }
  EXPECT_TRUE(got == want);
  EXPECT_EQ(header_lines(b.out, "@SQ"), header_lines(theirs.out, "@SQ"));
  // a repeat's occurrence is drawn, not the first row: some X0 > 1 record must not equal row k's
  EXPECT_NE(want.find("XT:A:R"), std::string::npos);
}

// Reads with mismatches, insertions and deletions (bwa aln's inexact search): our aln writes bwa's
// .sai byte for byte under bwa's default and other options, and our samse bwa's records from either.
TEST(CompatBwa, InexactAlnAndSamseEqualBwa) {
  if (!have_bwa()) GTEST_SKIP() << "bwa (oracle) or the drop-in not available";
  Fixture f;
  const bc::BwtIndex idx = bc::build_index(bct::tricky_reference(31));
  std::string fwd;
  for (std::int64_t i = 0; i < idx.l_pac; ++i) fwd += "ACGT"[idx.pac_base(i)];
  std::mt19937_64 rng(17);
  std::ostringstream o;
  for (int i = 0; i < 1500; ++i) {
    const std::size_t len = 36 + rng() % 115;
    std::string s = fwd.substr(rng() % (fwd.size() - len - 5), len);
    for (int m = static_cast<int>(rng() % 6); m > 0; --m) s[rng() % len] = "ACGT"[rng() % 4];
    if (rng() % 5 == 0) s.erase(10 + rng() % (len - 20), 1 + rng() % 3);       // deletion
    else if (rng() % 5 == 0) s.insert(10 + rng() % (len - 20), "ACG", 1 + rng() % 3);  // insertion
    if (i % 2) s = bct::revcomp(s);
    std::string q(s.size(), 'I');
    for (auto& c : q) c = static_cast<char>('#' + rng() % 39);
    o << "@m" << i << "\n" << s << "\n+\n" << q << '\n';
  }
  bct::write_file(f.dir / "m.fq", o.str());
  const std::string reads = f.p("m.fq");
  for (const std::string opts :
       {"", "-n 3 -o 0", "-q 15", "-e 2 -k 1 -l 20 -t 2", "-N -n 2 -R 5", "-l 1024 -n 0.01 -o 2", "-l 1024 -n 0.04 -i 3"}) {
    ASSERT_EQ(sh("bwa aln " + opts + " " + f.ref + " " + reads + " > " + f.p("bwa.sai")).exit_code, 0);
    const auto r = sh("EVK_BACKEND=cpu " + ours() + " aln " + opts + " " + f.ref + " " + reads + " > " + f.p("ours.sai"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(bct::read_file(f.p("bwa.sai")) == bct::read_file(f.p("ours.sai"))) << "aln " << opts << ": .sai differs";
    const auto theirs = sh("bwa samse " + f.ref + " " + f.p("bwa.sai") + " " + reads);
    ASSERT_EQ(theirs.exit_code, 0);
    const auto ours_sam = sh(ours() + " samse " + f.ref + " " + f.p("bwa.sai") + " " + reads);
    ASSERT_EQ(ours_sam.exit_code, 0) << ours_sam.err;
    const std::string want = records(theirs.out), got = records(ours_sam.out);
    EXPECT_EQ(std::count(want.begin(), want.end(), '\n'), 1500);
    EXPECT_TRUE(got == want) << "samse after aln " << opts;
    if (opts.empty()) {  // the test exercises the inexact paths: gapped and mismatched records
      EXPECT_NE(want.find("XO:i:1"), std::string::npos);
      EXPECT_NE(want.find("XM:i:3"), std::string::npos);
    }
  }
}

// bwa's paired-end pipeline, `bwa aln` x 2 then `bwa sampe`, with our bwa first on PATH: the records
// of the real bwa (insert sizes, proper pairs, mate rescue, TLEN); and the real sampe on our .sai.
TEST(CompatBwa, SampePipelineEqualsBwa) {
  if (!have_bwa()) GTEST_SKIP() << "bwa (oracle) or the drop-in not available";
  Fixture f;
  const bc::BwtIndex idx = bc::build_index(bct::tricky_reference(31));
  std::string fwd;
  for (std::int64_t i = 0; i < idx.l_pac; ++i) fwd += "ACGT"[idx.pac_base(i)];
  std::mt19937_64 rng(23);
  std::ostringstream o1, o2;
  for (int i = 0; i < 1200; ++i) {
    const std::size_t len = 70 + rng() % 40, ins = 220 + rng() % 160;
    const std::size_t p = rng() % (fwd.size() - ins - 1);
    std::string a = fwd.substr(p, len), b = bct::revcomp(fwd.substr(p + ins - len, len));
    for (std::string* s : {&a, &b}) {
      for (int m = static_cast<int>(rng() % 5); m > 0; --m) (*s)[rng() % s->size()] = "ACGT"[rng() % 4];
      if (rng() % 8 == 0) s->erase(10 + rng() % (s->size() - 20), 1 + rng() % 2);
    }
    if (i % 50 == 0) b = bct::random_dna(rng, len);  // an end to rescue or leave unmapped
    if (i % 2) std::swap(a, b);
    o1 << "@p" << i << "/1\n" << a << "\n+\n" << std::string(a.size(), 'I') << '\n';
    o2 << "@p" << i << "/2\n" << b << "\n+\n" << std::string(b.size(), '5') << '\n';
  }
  bct::write_file(f.dir / "p1.fq", o1.str());
  bct::write_file(f.dir / "p2.fq", o2.str());
  const std::string pipe = "bwa aln " + f.ref + " " + f.p("p1.fq") + " > " + f.p("1.sai") + " && bwa aln " + f.ref + " " +
                           f.p("p2.fq") + " > " + f.p("2.sai") + " && bwa sampe " + f.ref + " " + f.p("1.sai") + " " +
                           f.p("2.sai") + " " + f.p("p1.fq") + " " + f.p("p2.fq");
  const auto theirs = sh(pipe);
  ASSERT_EQ(theirs.exit_code, 0);
  const std::string want = records(theirs.out);
  EXPECT_EQ(std::count(want.begin(), want.end(), '\n'), 2400);
  EXPECT_NE(want.find("XT:A:M"), std::string::npos);  // a mate rescued by Smith-Waterman
  const auto ours_run = sh("PATH='" + dropin().parent_path().string() + "':$PATH; " + pipe);
  ASSERT_EQ(ours_run.exit_code, 0) << ours_run.err;
  EXPECT_NE(ours_run.err.find("EvoKernels"), std::string::npos) << "the drop-in did not run";
  EXPECT_TRUE(records(ours_run.out) == want);
  const auto real_on_ours = sh("bwa sampe " + f.ref + " " + f.p("1.sai") + " " + f.p("2.sai") + " " + f.p("p1.fq") + " " +
                               f.p("p2.fq"));  // the .sai files are ours now
  ASSERT_EQ(real_on_ours.exit_code, 0);
  EXPECT_TRUE(records(real_on_ours.out) == want);
}

TEST(CompatBwa, ReadGroupAndOutputFile) {
  if (!have_bwa()) GTEST_SKIP() << "bwa (oracle) or the drop-in not available";
  Fixture f;
  ASSERT_EQ(sh("bwa aln -n 0 " + f.ref + " " + f.reads + " > " + f.p("bwa.sai")).exit_code, 0);
  const std::string rg = "'@RG\\tID:lane1\\tSM:sample\\tPL:ILLUMINA'";
  ASSERT_EQ(sh("bwa samse -r " + rg + " -n 5 -f " + f.p("bwa.sam") + " " + f.ref + " " + f.p("bwa.sai") + " " + f.reads).exit_code, 0);
  const auto r = sh(ours() + " samse -r " + rg + " -n 5 -f " + f.p("ours.sam") + " " + f.ref + " " + f.p("bwa.sai") + " " + f.reads);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  const std::string a = bct::read_file(f.p("ours.sam")), b = bct::read_file(f.p("bwa.sam"));
  EXPECT_EQ(header_lines(a, "@RG"), "@RG\tID:lane1\tSM:sample\tPL:ILLUMINA\n");
  EXPECT_EQ(header_lines(a, "@RG"), header_lines(b, "@RG"));
  EXPECT_NE(records(a).find("\tRG:Z:lane1"), std::string::npos);
  EXPECT_TRUE(records(a) == records(b));
  EXPECT_NE(header_lines(a, "@PG").find("ID:bwa"), std::string::npos);
}

TEST(CompatBwa, ShellPipelineWithTheDropInFirstOnPath) {
  if (!have_bwa()) GTEST_SKIP() << "bwa (oracle) or the drop-in not available";
  Fixture f;
  const std::string pipe = "bwa index " + f.ref + " 2>/dev/null && bwa aln -n 0 -o 0 " + f.ref + " " + f.reads + " > " +
                           f.p("r.sai") + " && bwa samse " + f.ref + " " + f.p("r.sai") + " " + f.reads;
  const auto theirs = sh(pipe);
  ASSERT_EQ(theirs.exit_code, 0);
  const auto ours_run = sh("PATH='" + dropin().parent_path().string() + "':$PATH; " + pipe);
  ASSERT_EQ(ours_run.exit_code, 0) << ours_run.err;
  EXPECT_NE(ours_run.err.find("EvoKernels"), std::string::npos) << "the drop-in did not run";
  EXPECT_TRUE(records(ours_run.out) == records(theirs.out));
}

TEST(CompatBwa, RefusesWhatThisBuildLacks) {
  if (!fs::exists(dropin())) GTEST_SKIP() << "drop-in not built";
  TempDir d;
  const auto r = bct::tricky_reference(3);
  bct::write_fasta(d / "ref.fa", r);
  bct::write_file(d / "r.fq", "@a\nACGTACGTACGTACGTACGTAAAA\n+\nIIIIIIIIIIIIIIIIIIIIIIII\n");
  const std::string ref = (d / "ref.fa").string(), fq = (d / "r.fq").string();
  ASSERT_EQ(sh(ours() + " index " + ref).exit_code, 0);
  auto x = sh(ours() + " aln -b " + ref + " " + fq);
  EXPECT_EQ(x.exit_code, 2);
  EXPECT_NE(x.err.find("-b"), std::string::npos) << x.err;
  // sampe: paired files of different lengths
  bct::write_file(d / "r2.fq", "@a\nACGTACGTACGTACGTACGTAAAA\n+\nIIIIIIIIIIIIIIIIIIIIIIII\n@b\nACGTACGTACGT\n+\nIIIIIIIIIIII\n");
  ASSERT_EQ(sh(ours() + " aln -f " + (d / "1.sai").string() + " " + ref + " " + fq).exit_code, 0);
  ASSERT_EQ(sh(ours() + " aln -f " + (d / "2.sai").string() + " " + ref + " " + (d / "r2.fq").string()).exit_code, 0);
  x = sh(ours() + " sampe -f " + (d / "p.sam").string() + " " + ref + " " + (d / "1.sai").string() + " " +
         (d / "2.sai").string() + " " + fq + " " + (d / "r2.fq").string());
  EXPECT_EQ(x.exit_code, 2);
  EXPECT_NE(x.err.find("fewer reads"), std::string::npos) << x.err;
  EXPECT_FALSE(fs::exists(d / "p.sam"));
  x = sh(ours() + " mem " + ref + " " + fq);
  EXPECT_EQ(x.exit_code, 1);
  // a .sai that is not one, and a truncated one
  bct::write_file(d / "bad.sai", "not a sai file at all");
  x = sh(ours() + " samse " + ref + " " + (d / "bad.sai").string() + " " + fq);
  EXPECT_EQ(x.exit_code, 2);
  EXPECT_NE(x.err.find("bad.sai"), std::string::npos) << x.err;
  ASSERT_EQ(sh(ours() + " aln -n 0 -f " + (d / "ok.sai").string() + " " + ref + " " + fq).exit_code, 0);
  std::string sai = bct::read_file(d / "ok.sai");
  bct::write_file(d / "cut.sai", sai.substr(0, sai.size() - 1));
  x = sh(ours() + " samse -f " + (d / "o.sam").string() + " " + ref + " " + (d / "cut.sai").string() + " " + fq);
  EXPECT_EQ(x.exit_code, 2);
  EXPECT_NE(x.err.find("cut.sai"), std::string::npos) << x.err;
  EXPECT_FALSE(fs::exists(d / "o.sam")) << "partial output left behind";
}
