// Index: our `index` against `bwa index` byte for byte, the reader on bwa's files, and the FM-index
// primitives (occurrence counts, sampled-SA lookups) against a brute-force suffix array.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "core/index.hpp"
#include "core/rand48.hpp"
#include "evk_testing.hpp"
#include "io/index_files.hpp"
#include "io/sequences.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
using evk::testing::TempDir;

namespace {
const char* kExt[] = {"bwt", "sa", "pac", "ann", "amb"};

void expect_same_as_bwa(const TempDir& dir, const std::string& fasta) {
  const auto ours = dir / "ours", theirs = dir / "bwa";
  std::filesystem::create_directories(ours);
  std::filesystem::create_directories(theirs);
  std::filesystem::copy_file(fasta, ours / "ref.fa");
  std::filesystem::copy_file(fasta, theirs / "ref.fa");
  auto r = evk::testing::run_tool("barracuda_exact", "index " + (ours / "ref.fa").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(evk::testing::run("bwa index " + (theirs / "ref.fa").string() + " 2>/dev/null").exit_code, 0);
  for (const char* e : kExt) {
    const std::string a = bct::read_file(ours / ("ref.fa." + std::string(e)));
    const std::string b = bct::read_file(theirs / ("ref.fa." + std::string(e)));
    EXPECT_FALSE(b.empty()) << e;
    EXPECT_TRUE(a == b) << "." << e << " differs from bwa index (" << a.size() << " vs " << b.size() << " bytes)";
  }
}
}  // namespace

TEST(BarracudaIndex, ByteIdenticalToBwaIndexOnLambda) {
  if (!bct::have("bwa")) GTEST_SKIP() << "bwa not installed";
  const auto src = evk::testing::project_data_dir() / "genomes" / "lambda_virus.fa.gz";
  if (!std::filesystem::exists(src)) GTEST_SKIP() << "no " << src;
  TempDir dir;
  ASSERT_EQ(evk::testing::run("gzip -dc " + src.string() + " > " + (dir / "lambda.fa").string()).exit_code, 0);
  expect_same_as_bwa(dir, (dir / "lambda.fa").string());
}

TEST(BarracudaIndex, ByteIdenticalToBwaIndexWithAmbiguousBases) {
  // N runs, IUPAC codes (both cases), lowercase bases: bwa's random replacement and .amb reproduced.
  if (!bct::have("bwa")) GTEST_SKIP() << "bwa not installed";
  TempDir dir;
  bct::write_fasta(dir / "tricky.fa", bct::tricky_reference(7));
  expect_same_as_bwa(dir, (dir / "tricky.fa").string());
}

TEST(BarracudaIndex, ByteIdenticalToBwaIndexOnOddReferences) {
  // a contig of N only, two contigs of one name (bwa keeps both), N runs at a contig's both ends,
  // contigs without bases (bwa keeps them as .ann entries of length 0) first and in the middle
  if (!bct::have("bwa")) GTEST_SKIP() << "bwa not installed";
  std::mt19937_64 rng(12);
  const std::vector<std::vector<bc::RefSeq>> refs = {
      {{"a", "", bct::random_dna(rng, 3000)}, {"b", "", std::string(500, 'N')}, {"c", "", bct::random_dna(rng, 2000)}},
      {{"a", "", bct::random_dna(rng, 3000)}, {"a", "again", bct::random_dna(rng, 2000)}},
      {{"a", "", std::string(100, 'N') + bct::random_dna(rng, 3000) + std::string(200, 'n')}},
      {{"e0", "", ""}, {"a", "", bct::random_dna(rng, 3000)}, {"e1", "", ""}, {"c", "", bct::random_dna(rng, 2000)}}};
  for (std::size_t i = 0; i < refs.size(); ++i) {
    SCOPED_TRACE(i);
    TempDir dir;
    bct::write_fasta(dir / "odd.fa", refs[i]);
    expect_same_as_bwa(dir, (dir / "odd.fa").string());
  }
}

TEST(BarracudaIndex, EmptyContigsMapAsBwa) {
  // reads from the contigs on either side of an empty one: the same records (and @SQ LN:0) as bwa
  if (!bct::have("bwa")) GTEST_SKIP() << "bwa not installed";
  TempDir dir;
  std::mt19937_64 rng(21);
  const std::vector<bc::RefSeq> ref = {{"a", "", bct::random_dna(rng, 4000)}, {"e", "", ""}, {"b", "", bct::random_dna(rng, 3000)}};
  bct::write_fasta(dir / "e.fa", ref);
  {
    std::ofstream fq(dir / "r.fq");
    for (int i = 0; i < 300; ++i) {
      const std::string& s = ref[i % 2 ? 0 : 2].seq;
      std::string r = s.substr(std::uniform_int_distribution<std::size_t>(0, s.size() - 50)(rng), 50);
      if (i % 3 == 0) r[20] = r[20] == 'A' ? 'C' : 'A';
      fq << "@r" << i << "\n" << r << "\n+\n" << std::string(50, 'I') << "\n";
    }
  }
  const std::string fa = (dir / "e.fa").string(), fq = (dir / "r.fq").string();
  ASSERT_EQ(evk::testing::run("bwa index " + fa + " 2>/dev/null && bwa aln " + fa + " " + fq + " > " + (dir / "r.sai").string() +
                              " 2>/dev/null && bwa samse " + fa + " " + (dir / "r.sai").string() + " " + fq + " 2>/dev/null | grep -v '^@PG' > " +
                              (dir / "bwa.sam").string()).exit_code, 0);
  const auto r = evk::testing::run_tool("barracuda_exact", "map --backend cpu " + fa + " " + fq + " -o " + (dir / "ours.sam").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(evk::testing::run("grep -v '^@PG' " + (dir / "ours.sam").string() + " > " + (dir / "ours.nopg.sam").string()).exit_code, 0);
  const std::string ours = bct::read_file(dir / "ours.nopg.sam"), theirs = bct::read_file(dir / "bwa.sam");
  EXPECT_NE(theirs.find("@SQ\tSN:e\tLN:0"), std::string::npos);
  EXPECT_GT(theirs.size(), 300u * 50);
  EXPECT_TRUE(ours == theirs) << "SAM differs from bwa aln + samse";
}

TEST(BarracudaIndex, DiskFullMidWriteLeavesNoIndex) {
  // a file size limit (ulimit -f, SIGXFSZ ignored: writes past it fail as on a full disk) cuts the
  // index files mid-write: one line naming the file, exit 2, and neither files nor temporaries left
  TempDir dir;
  std::mt19937_64 rng(17);
  bct::write_fasta(dir / "ref.fa", {{"c", "", bct::random_dna(rng, 400000)}});
  const auto r = evk::testing::run("ulimit -f 128; trap '' XFSZ; " + (evk::testing::bin_dir() / "barracuda_exact").string() +
                                   " index --backend cpu " + (dir / "ref.fa").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("ref.fa."), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("write failed"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().filename() != "ref.fa") left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << left.front();
}

TEST(BarracudaIndex, ContigsOverBwasLimitAreRefused) {
  // bwa's .ann holds a contig's length in 32 bits; the check, with a small limit to stand in for it
  EXPECT_EQ(bc::kMaxContigBases, 2147483647u);
  const std::vector<bc::RefSeq> ref = {{"a", "", std::string(100, 'A')}, {"b", "", std::string(101, 'C')}};
  EXPECT_NO_THROW(bc::check_bwa_limits(ref, 101));
  try {
    bc::check_bwa_limits(ref, 100);
    ADD_FAILURE() << "a contig over the limit passed";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("contig b has 101 bases, over bwa's limit of 100"), std::string::npos) << e.what();
  }
}

TEST(BarracudaIndex, ReaderLoadsBwaIndexAsBuilt) {
  if (!bct::have("bwa")) GTEST_SKIP() << "bwa not installed";
  TempDir dir;
  const auto ref = bct::tricky_reference(11);
  bct::write_fasta(dir / "r.fa", ref);
  ASSERT_EQ(evk::testing::run("bwa index " + (dir / "r.fa").string() + " 2>/dev/null").exit_code, 0);
  const bc::BwtIndex a = bc::read_index((dir / "r.fa").string());  // bwa's files
  const bc::BwtIndex b = bc::build_index(bc::read_reference((dir / "r.fa").string()));
  EXPECT_EQ(a.primary, b.primary);
  EXPECT_EQ(a.seq_len, 2u * (20000 + 7001 + 3003));
  EXPECT_EQ(a.seq_len, b.seq_len);
  for (int c = 0; c < 5; ++c) EXPECT_EQ(a.L2[c], b.L2[c]);
  EXPECT_TRUE(a.occ == b.occ);
  EXPECT_TRUE(a.sa == b.sa);
  EXPECT_TRUE(a.pac == b.pac);
  ASSERT_EQ(a.contigs.size(), 3u);
  EXPECT_EQ(a.contigs[1].name, "chrB");
  EXPECT_EQ(a.contigs[1].offset, 20000);
  EXPECT_EQ(a.contigs[0].anno, "first contig");
  EXPECT_EQ(a.contigs[1].anno, "(null)");
  ASSERT_EQ(a.holes.size(), b.holes.size());
  EXPECT_EQ(a.holes[0].offset, 5000);
  EXPECT_EQ(a.holes[0].len, 30);
}

TEST(BarracudaIndex, OccAndSaMatchBruteForceSuffixArray) {
  std::mt19937_64 rng(3);
  std::vector<bc::RefSeq> ref = {{"a", "", bct::random_dna(rng, 1500)}, {"b", "", bct::random_dna(rng, 777)}};
  ref[0].seq.replace(100, 60, ref[1].seq.substr(10, 60));  // a repeat
  const bc::BwtIndex idx = bc::build_index(ref);
  // the text: forward + reverse complement, from the pac
  std::vector<int> t;
  for (std::int64_t i = 0; i < idx.l_pac; ++i) t.push_back(idx.pac_base(i));
  for (std::int64_t i = idx.l_pac - 1; i >= 0; --i) t.push_back(3 - idx.pac_base(i));
  const std::size_t n = t.size();
  ASSERT_EQ(n, idx.seq_len);
  std::vector<std::size_t> sa(n + 1);
  std::iota(sa.begin(), sa.end(), 0);
  std::sort(sa.begin(), sa.end(), [&](std::size_t x, std::size_t y) {
    return std::lexicographical_compare(t.begin() + static_cast<std::ptrdiff_t>(x), t.end(),
                                        t.begin() + static_cast<std::ptrdiff_t>(y), t.end());
  });
  ASSERT_EQ(sa[0], n);  // "$" first
  std::vector<int> bwt;  // rows' preceding characters, '$' row skipped
  for (std::size_t r = 0; r <= n; ++r) {
    if (sa[r] == 0) {
      EXPECT_EQ(idx.primary, r);
      continue;
    }
    bwt.push_back(t[sa[r] - 1]);
  }
  for (std::size_t r = 1; r <= n; ++r) ASSERT_EQ(idx.sa_at(r), sa[r]) << "row " << r;
  std::uint64_t cnt[4] = {0, 0, 0, 0};
  std::size_t bpos = 0;
  for (std::size_t k = 0; k < n; ++k) {  // bwt_occ(k, c) counts rows [0, k], '$' excluded
    if (k != idx.primary) ++cnt[bwt[bpos++]];
    for (int c = 0; c < 4; ++c) ASSERT_EQ(idx.occ_at(k, c), cnt[c]) << "k " << k << " c " << c;
  }
  for (int c = 0; c < 4; ++c) EXPECT_EQ(idx.occ_at(~0ull, c), 0u);
}

TEST(BarracudaIndex, Rand48SkipEqualsThatManyDraws) {
  for (const std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 1000ull, 4097ull, 123457ull}) {
    bc::Rand48 a(11), b(11);
    for (std::uint64_t i = 0; i < n; ++i) a.lrand();
    b.skip(n);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(a.lrand(), b.lrand()) << n;
  }
}

// The packing works in parts of at least 4096 bases (each part's ambiguous bases counted first, the
// generator skipped ahead to its first draw): runs across part and contig edges, against the serial
// rule (one generator in text order, a run = the same character again in the same contig) and bwa.
TEST(BarracudaIndex, AmbiguousRunsAcrossPackPartsAsBwa) {
  std::mt19937_64 rng(9);
  std::vector<bc::RefSeq> ref = {{"a", "", bct::random_dna(rng, 20000)}, {"b", "", bct::random_dna(rng, 9000)}};
  ref[0].seq.replace(4090, 20, std::string(20, 'N'));  // across 4096
  ref[0].seq.replace(8180, 12, "NNNNnnnnRRRR");       // three runs, across 8192
  ref[0].seq.replace(11000, 6000, std::string(6000, 'N'));  // across 12288 and 16384
  ref[0].seq.replace(19990, 10, std::string(10, 'N'));      // to the contig's end
  ref[1].seq.replace(0, 10, std::string(10, 'N'));          // from the next one's start: another run
  ref[1].seq.replace(4000, 300, std::string(300, 'Y'));     // across 24576 (20000 + 4576)
  std::vector<bc::Hole> holes;
  std::vector<std::uint8_t> codes;
  std::vector<int> n_ambs;
  bc::Rand48 rng48(11);
  for (const auto& r : ref) {
    char last = 0;
    n_ambs.push_back(0);
    for (const char ch : r.seq) {
      int c = bc::base_code(ch);
      if (c >= 4) {
        if (last == ch) {
          ++holes.back().len;
        } else {
          holes.push_back(bc::Hole{static_cast<std::int64_t>(codes.size()), 1, ch});
          ++n_ambs.back();
        }
        c = static_cast<int>(rng48.lrand() & 3);
      }
      last = ch;
      codes.push_back(static_cast<std::uint8_t>(c));
    }
  }
  for (const int t : {1, 3, 64}) {
    bc::IndexOptions o;
    o.threads = t;
    const bc::BwtIndex idx = bc::build_index(ref, o);
    ASSERT_EQ(idx.l_pac, static_cast<std::int64_t>(codes.size()));
    int wrong = 0;
    for (std::size_t i = 0; i < codes.size(); ++i) wrong += idx.pac_base(static_cast<std::int64_t>(i)) != codes[i];
    EXPECT_EQ(wrong, 0) << t << " threads";
    ASSERT_EQ(idx.holes.size(), holes.size()) << t;
    for (std::size_t h = 0; h < holes.size(); ++h) {
      EXPECT_EQ(idx.holes[h].offset, holes[h].offset) << h;
      EXPECT_EQ(idx.holes[h].len, holes[h].len) << h;
      EXPECT_EQ(idx.holes[h].amb, holes[h].amb) << h;
    }
    for (std::size_t k = 0; k < ref.size(); ++k) EXPECT_EQ(idx.contigs[k].n_ambs, n_ambs[k]) << k;
  }
  EXPECT_EQ(holes.size(), 8u);  // 6 runs in a, 2 in b
  if (!bct::have("bwa")) GTEST_SKIP() << "bwa not installed";
  TempDir dir;
  bct::write_fasta(dir / "runs.fa", ref);
  expect_same_as_bwa(dir, (dir / "runs.fa").string());
}

TEST(BarracudaIndex, HostThreadsDoNotChangeTheIndex) {
  // the BWT's occurrence records are filled in parallel parts; 1, 3 and 64 threads (more parts
  // than 128-base blocks) must give the same words as the brute force above checks for one
  std::mt19937_64 rng(8);
  const std::vector<bc::RefSeq> ref = {{"a", "", bct::random_dna(rng, 5000)}, {"b", "", bct::random_dna(rng, 61)}};
  bc::IndexOptions one;
  one.threads = 1;
  const bc::BwtIndex a = bc::build_index(ref, one);
  for (int t : {3, 64}) {
    bc::IndexOptions o;
    o.threads = t;
    const bc::BwtIndex b = bc::build_index(ref, o);
    EXPECT_EQ(a.primary, b.primary) << t;
    EXPECT_TRUE(a.occ == b.occ) << t << " threads";
    EXPECT_TRUE(a.sa == b.sa) << t << " threads";
  }
  const bc::BwtIndex tiny = bc::build_index({{"t", "", "ACGTTGCA"}}, one);
  EXPECT_EQ(tiny.seq_len, 16u);
}

TEST(BarracudaIndex, CliReportsTheCpuBackendAndStageTimes) {
  TempDir dir;
  std::mt19937_64 rng(2);
  bct::write_fasta(dir / "r.fa", {{"a", "", bct::random_dna(rng, 3000)}});
  auto r = evk::testing::run_tool("barracuda_exact", "index --backend cpu --json -t 2 " + (dir / "r.fa").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("bases"), 3000);
  EXPECT_TRUE(j.at("gpus").empty());
  for (const char* s : {"read", "pack", "sort", "bwt", "write"}) EXPECT_GE(j.at("seconds").at(s).get<double>(), 0.0) << s;
  EXPECT_GT(j.at("peak_host_bytes").get<double>(), 1e6);
  EXPECT_TRUE(std::filesystem::exists(dir / "r.fa.bwt"));
  r = evk::testing::run_tool("barracuda_exact", "index --gpu-memory 12Q " + (dir / "r.fa").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpu-memory"), std::string::npos) << r.err;
}
