// SAM/BAM output against the oracle `bwa aln -n 0 -o 0 REF READS | bwa samse REF` (bwa 0.7.17):
// every record equal except which occurrence a repeat reports (it must be one of the interval's:
// checked against bwa's XA list or, beyond it, against the reference text) and header lines.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "core/index.hpp"
#include "evk_testing.hpp"
#include "io/sequences.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
using evk::testing::TempDir;

namespace {

std::string tag(const std::vector<std::string>& f, const std::string& name) {
  for (std::size_t i = 11; i < f.size(); ++i)
    if (f[i].size() > 5 && f[i].compare(0, 3, name + ":") == 0) return f[i].substr(5);
  return "";
}
std::vector<std::string> tags_without(const std::vector<std::string>& f, const std::string& skip) {
  std::vector<std::string> t;
  for (std::size_t i = 11; i < f.size(); ++i)
    if (f[i].compare(0, 2, skip) != 0) t.push_back(f[i]);
  return t;
}
std::set<std::string> occurrences(const std::vector<std::string>& f) {  // primary + XA as "name,+pos"
  std::set<std::string> s;
  const int flag = std::stoi(f[1]);
  s.insert(f[2] + "," + ((flag & 16) ? "-" : "+") + f[3]);
  std::istringstream xa(tag(f, "XA"));
  std::string e;
  while (std::getline(xa, e, ';')) {
    if (e.empty()) continue;
    const auto c1 = e.find(','), c2 = e.find(',', c1 + 1);
    s.insert(e.substr(0, c1) + "," + e.substr(c1 + 1, c2 - c1 - 1));
  }
  return s;
}

// Runs both pipelines and compares. Returns the number of records compared.
std::size_t compare_with_bwa(const TempDir& dir, const std::string& fasta, const std::string& reads) {
  const auto ours = dir / "ours.sam", theirs = dir / "bwa.sam";
  auto r = evk::testing::run_tool("barracuda_exact", "index " + fasta);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = evk::testing::run_tool("barracuda_exact", "map --exact --backend cpu " + fasta + " " + reads + " -o " + ours.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // bwa runs on its own copy of the index (built by bwa index)
  const auto bdir = dir / "bwa";
  std::filesystem::create_directories(bdir);
  std::filesystem::copy_file(fasta, bdir / "ref.fa", std::filesystem::copy_options::overwrite_existing);
  const std::string bref = (bdir / "ref.fa").string();
  EXPECT_EQ(evk::testing::run("bwa index " + bref + " 2>/dev/null && bwa aln -n 0 -o 0 " + bref + " " + reads +
                              " > " + (dir / "r.sai").string() + " 2>/dev/null && bwa samse " + bref + " " +
                              (dir / "r.sai").string() + " " + reads + " > " + theirs.string() + " 2>/dev/null")
                .exit_code,
            0);
  const auto a = bct::sam_records(bct::read_file(ours)), b = bct::sam_records(bct::read_file(theirs));
  EXPECT_EQ(a.size(), b.size());
  std::map<std::string, std::string> ref;
  for (auto& s : bc::read_reference(fasta)) {
    std::string up;
    for (char c : s.seq) up += "ACGTN"[bc::base_code(c)];
    ref[s.name] = up;
  }
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const auto &x = a[i], &y = b[i];
    if (tag(y, "XT") != "R") {
      EXPECT_EQ(x, y) << "record " << i + 1 << " (" << y[0] << ")";
      continue;
    }
    // a repeat: same count and tags; the reported occurrence may differ
    EXPECT_EQ(x[0], y[0]);
    EXPECT_EQ(std::stoi(x[1]) & ~16 & ~4, std::stoi(y[1]) & ~16 & ~4) << y[0];
    EXPECT_EQ(x[4], y[4]);
    EXPECT_EQ(x[5], y[5]);
    EXPECT_EQ(tags_without(x, "XA"), tags_without(y, "XA")) << y[0];
    if (!tag(y, "XA").empty()) {
      EXPECT_EQ(occurrences(x), occurrences(y)) << y[0];
    } else {  // beyond bwa's XA limit: our position must hold the read (as printed: forward strand)
      const std::string& contig = ref[x[2]];
      const std::size_t pos = std::stoul(x[3]) - 1;
      EXPECT_EQ(contig.substr(pos, x[9].size()), x[9]) << y[0];
    }
  }
  return std::min(a.size(), b.size());
}

std::string sam_to_fastq(const TempDir& dir, const std::filesystem::path& sam) {
  const auto fq = dir / "reads.fq";
  EXPECT_EQ(evk::testing::run("samtools fastq " + sam.string() + " > " + fq.string() + " 2>/dev/null").exit_code, 0);
  return fq.string();
}

bool have_oracle() { return bct::have("bwa") && bct::have("samtools"); }

// Reads from the tricky reference: exact (both strands, mixed lengths up to 300), across contig
// boundaries, over replaced N/IUPAC positions, repeats, with N, lowercase, random.
void write_tricky_reads(const std::filesystem::path& p, const bc::BwtIndex& idx, bool fasta) {
  std::string fwd;
  for (std::int64_t i = 0; i < idx.l_pac; ++i) fwd += "ACGT"[idx.pac_base(i)];
  std::mt19937_64 rng(4);
  std::ostringstream o;
  for (int i = 0; i < 3000; ++i) {
    const std::size_t len = 20 + rng() % 281;
    std::string s;
    switch (i % 10) {
      case 0: s = bct::random_dna(rng, len); break;
      case 1: s = fwd.substr(20000 - len / 2, len); break;               // across chrA | chrB
      case 2: s = fwd.substr(4990 + rng() % 20, 60); break;               // over the N run
      case 3: s = fwd.substr(12000 + rng() % 20, 90); break;              // 7 copies
      case 4: s = fwd.substr(1000 + rng() % 30, 100); break;              // 4 copies, both strands
      case 5: s = bct::revcomp(fwd.substr(rng() % (fwd.size() - len), len)); break;
      case 6: s = fwd.substr(rng() % (fwd.size() - len), len); s[rng() % len] = 'N'; break;
      case 7: s = fwd.substr(rng() % (fwd.size() - len), len); for (auto& c : s) c = static_cast<char>(std::tolower(c)); break;
      case 8: s = fwd.substr(fwd.size() - len, len); break;               // the very end
      default: s = fwd.substr(rng() % (fwd.size() - len), len);
    }
    const std::string name = "r" + std::to_string(i) + (i % 7 == 0 ? "/1" : "");
    if (fasta) {
      o << '>' << name << " comment\n" << s << '\n';
    } else {
      std::string q(s.size(), 'I');
      for (auto& c : q) c = static_cast<char>('!' + rng() % 41);
      o << '@' << name << "\n" << s << "\n+\n" << q << '\n';
    }
  }
  bct::write_file(p, o.str());
}

}  // namespace

TEST(BarracudaSam, EqualsBwaOnTrickyReference) {
  if (!have_oracle()) GTEST_SKIP() << "bwa/samtools not installed";
  TempDir dir;
  const auto ref = bct::tricky_reference(21);
  bct::write_fasta(dir / "t.fa", ref);
  write_tricky_reads(dir / "t.fq", bc::build_index(ref), false);
  EXPECT_EQ(compare_with_bwa(dir, (dir / "t.fa").string(), (dir / "t.fq").string()), 3000u);
}

TEST(BarracudaSam, EqualsBwaOnFastaReads) {
  if (!have_oracle()) GTEST_SKIP() << "bwa/samtools not installed";
  TempDir dir;
  const auto ref = bct::tricky_reference(22);
  bct::write_fasta(dir / "t.fa", ref);
  write_tricky_reads(dir / "t.fa.reads", bc::build_index(ref), true);
  EXPECT_EQ(compare_with_bwa(dir, (dir / "t.fa").string(), (dir / "t.fa.reads").string()), 3000u);
}

TEST(BarracudaSam, EqualsBwaOnLambdaReads) {
  if (!have_oracle()) GTEST_SKIP() << "bwa/samtools not installed";
  const auto g = evk::testing::project_data_dir() / "genomes" / "lambda_virus.fa.gz";
  const auto r = evk::testing::project_data_dir() / "reads" / "lambda_reads_1.fq.gz";
  if (!std::filesystem::exists(g) || !std::filesystem::exists(r)) GTEST_SKIP() << "no lambda data";
  TempDir dir;
  ASSERT_EQ(evk::testing::run("gzip -dc " + g.string() + " > " + (dir / "lambda.fa").string()).exit_code, 0);
  EXPECT_GT(compare_with_bwa(dir, (dir / "lambda.fa").string(), r.string()), 1000u);
}

TEST(BarracudaSam, EqualsBwaOnRealCelegansReads) {
  if (!have_oracle()) GTEST_SKIP() << "bwa/samtools not installed";
  const auto g = evk::testing::project_data_dir() / "genomes" / "ce.fa";
  const auto s = evk::testing::project_data_dir() / "reads" / "ce#1000.sam";
  if (!std::filesystem::exists(g) || !std::filesystem::exists(s)) GTEST_SKIP() << "no C. elegans data";
  TempDir dir;
  std::filesystem::copy_file(g, dir / "ce.fa");
  EXPECT_GE(compare_with_bwa(dir, (dir / "ce.fa").string(), sam_to_fastq(dir, s)), 1000u);
}

TEST(BarracudaSam, EqualsBwaOnSimulatedEcoliReads) {
  if (!have_oracle() || !bct::have("art_illumina")) GTEST_SKIP() << "bwa/samtools/art_illumina not installed";
  const auto g = evk::testing::project_data_dir() / "genomes" / "NC_008253.fna.gz";
  if (!std::filesystem::exists(g)) GTEST_SKIP() << "no E. coli genome";
  TempDir dir;
  const std::string fa = (dir / "ecoli.fa").string();
  ASSERT_EQ(evk::testing::run("gzip -dc " + g.string() + " > " + fa).exit_code, 0);
  ASSERT_EQ(evk::testing::run("art_illumina -ss HS25 -i " + fa + " -l 100 -f 0.5 -rs 7 -na -q -o " +
                              (dir / "sim").string() + " > /dev/null 2>&1 && gzip " + (dir / "sim.fq").string())
                .exit_code,
            0);
  EXPECT_GT(compare_with_bwa(dir, fa, (dir / "sim.fq.gz").string()), 20000u);
}

TEST(BarracudaSam, BwaAlnOnOurIndexGivesIdenticalSam) {
  if (!have_oracle()) GTEST_SKIP() << "bwa/samtools not installed";
  TempDir dir;
  const auto ref = bct::tricky_reference(23);
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  bct::write_fasta(dir / "a" / "t.fa", ref);
  bct::write_fasta(dir / "b" / "t.fa", ref);
  write_tricky_reads(dir / "t.fq", bc::build_index(ref), false);
  auto r = evk::testing::run_tool("barracuda_exact", "index " + (dir / "a" / "t.fa").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(evk::testing::run("bwa index " + (dir / "b" / "t.fa").string() + " 2>/dev/null").exit_code, 0);
  std::string out[2];
  for (int i = 0; i < 2; ++i) {
    const std::string p = (dir / (i ? "b" : "a") / "t.fa").string(), fq = (dir / "t.fq").string();
    auto x = evk::testing::run("bwa aln -n 0 -o 0 " + p + " " + fq + " 2>/dev/null > " + p + ".sai && bwa samse " + p + " " +
                               p + ".sai " + fq + " 2>/dev/null");
    ASSERT_EQ(x.exit_code, 0);
    out[i] = x.out;
  }
  const auto a = bct::sam_records(out[0]), b = bct::sam_records(out[1]);
  ASSERT_EQ(a.size(), 3000u);
  EXPECT_TRUE(a == b);
}

TEST(BarracudaSam, BamIsReadableAndUnmatchedAreWritten) {
  if (!have_oracle()) GTEST_SKIP() << "samtools not installed";
  TempDir dir;
  const auto ref = bct::tricky_reference(24);
  bct::write_fasta(dir / "t.fa", ref);
  write_tricky_reads(dir / "t.fq", bc::build_index(ref), false);
  ASSERT_EQ(evk::testing::run("gzip -k " + (dir / "t.fq").string()).exit_code, 0);
  ASSERT_EQ(evk::testing::run_tool("barracuda_exact", "index " + (dir / "t.fa").string()).exit_code, 0);
  auto r = evk::testing::run_tool("barracuda_exact", "map --exact --backend cpu --json " + (dir / "t.fa").string() + " " +
                                                         (dir / "t.fq.gz").string() + " -o " + (dir / "o.bam").string() +
                                                         " --unmatched " + (dir / "un.fq.gz").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(evk::testing::run("samtools quickcheck " + (dir / "o.bam").string()).exit_code, 0);
  auto fs = evk::testing::run("samtools flagstat " + (dir / "o.bam").string());
  ASSERT_EQ(fs.exit_code, 0);
  EXPECT_NE(fs.out.find("3000 + 0 in total"), std::string::npos) << fs.out;
  // the unmatched file holds exactly the unmapped records, with their qualities
  auto un = evk::testing::run("samtools view -c -f 4 " + (dir / "o.bam").string());
  auto nq = evk::testing::run("gzip -dc " + (dir / "un.fq.gz").string() + " | awk 'NR%4==1' | wc -l");
  ASSERT_EQ(un.exit_code, 0);
  EXPECT_EQ(std::stoi(un.out), std::stoi(nq.out));
  EXPECT_GT(std::stoi(nq.out), 500);
  EXPECT_NE(r.out.find("\"unmatched\""), std::string::npos);
  // SAM to stdout equals the BAM's records
  auto s = evk::testing::run_tool("barracuda_exact", "map --exact --backend cpu " + (dir / "t.fa").string() + " " +
                                                         (dir / "t.fq").string() + " -o -");
  auto v = evk::testing::run("samtools view " + (dir / "o.bam").string());
  ASSERT_EQ(s.exit_code, 0);
  EXPECT_TRUE(bct::sam_records(s.out) == bct::sam_records(v.out));
}
