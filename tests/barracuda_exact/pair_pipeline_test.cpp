// Paired-end inexact mapping (bwa aln + sampe) through the streaming pipeline of `map`
// (map/map_run.cpp) against the batch-by-batch serial oracle (serial_map.hpp; the pipeline is tested
// record by record against bwa sampe in samse_test.cpp): byte-identical SAM and BAM from every input
// form (plain, gzip, multi-member gzip, BGZF; the two files in different forms), with 1 to 3
// threads and lanes, with batches of a few dozen or hundred pairs (bwa sampe estimates the insert
// size per batch: the pipeline's batches must be the driver's) and with bwa's own batch on a pair
// file larger than it; bwa's and sampe's options; the same refusal, for the same pair, as the
// driver's for files that do not pair up (counts, names, formats, empty reads, truncation at any
// level), with nothing left behind; the CLI's counts and stage timings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <random>
#include <sstream>
#include <tuple>

#include "aln_oracle.hpp"
#include "core/index.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "io/index_files.hpp"
#include "map/map_run.hpp"
#include "serial_map.hpp"
#include "pipeline_inputs.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;
using evk::testing::TempDir;

namespace {

struct Ref {
  TempDir dir;
  std::string ref, fwd;
  explicit Ref(std::uint64_t seed) {
    const auto r = bct::tricky_reference(seed);
    const bc::BwtIndex idx = bc::build_index(r);
    ref = (dir / "t.fa").string();
    bct::write_fasta(ref, r);
    bc::write_index(idx, ref);
    fwd = bct::forward_text(idx);
  }
};

struct Opts {
  int threads = 2, lanes = 2;
  std::size_t batch = 0;  // pairs per batch (0: bwa's kSampeBatch)
  bool serial = false;
  bc::AlnOptions aln;
  bc::PeOptions pe;
  std::string rg;
};

// The oracle's output: the batch-by-batch serial driver (serial_map.hpp's serial_aln_map) with the same batches.
std::string driver(const std::string& ref, const fs::path& r1, const fs::path& r2, const fs::path& out, const Opts& x = {}) {
  bc::MapOptions o;
  o.ref = ref;
  o.reads = r1.string();
  o.out = out.string();
  o.command_line = "test";
  o.threads = 2;
  o.batch_reads = x.batch;
  o.inexact = true;
  o.reads2 = r2.string();
  o.aln = x.aln;
  o.pe = x.pe;
  o.read_group = x.rg;
  bct::serial_aln_map(o);
  std::string s = bct::read_file(out);
  fs::remove(out);
  return s;
}

bc::MapOptions pipeline_options(const std::string& ref, const fs::path& r1, const fs::path& r2, const fs::path& out,
                                const Opts& x) {
  bc::MapOptions o;
  o.ref = ref;
  o.reads = r1.string();
  o.reads2 = r2.string();
  o.out = out.string();
  o.command_line = "test";
  o.threads = x.threads;
  o.cpu_lanes = x.lanes;
  o.batch_reads = x.batch;
  o.inexact = true;
  o.aln = x.aln;
  o.pe = x.pe;
  o.read_group = x.rg;
  return o;
}

// The streaming pipeline (CPU backend).
std::string pipeline(const std::string& ref, const fs::path& r1, const fs::path& r2, const fs::path& out, const Opts& x = {},
                     bc::MapStats* stats = nullptr) {
  const bc::MapOptions o = pipeline_options(ref, r1, r2, out, x);
  const bc::MapStats st = x.serial ? bct::serial_map(o) : bc::run_map(o);
  if (stats) *stats = st;
  std::string s = bct::read_file(out);
  fs::remove(out);
  return s;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const evk::InputError& e) {
    return e.what();
  }
  return "";
}

Opts with(int threads, int lanes, std::size_t batch) {
  Opts o;
  o.threads = threads;
  o.lanes = lanes;
  o.batch = batch;
  return o;
}

// n pairs of 100 bp reads of fwd (read 2 reverse-complemented ~300 bp on), names p0.. with /1 /2.
std::pair<std::string, std::string> simple_pairs(const std::string& fwd, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::ostringstream o1, o2;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t f = 250 + rng() % 100, start = rng() % (fwd.size() - f);
    std::string a = fwd.substr(start, 100), b = bct::revcomp(fwd.substr(start + f - 100, 100));
    if (rng() % 3 == 0) a[rng() % 100] = "ACGT"[rng() & 3];
    if (rng() % 3 == 0) b[rng() % 100] = "ACGT"[rng() & 3];
    o1 << "@p" << i << "/1\n" << a << "\n+\n" << std::string(100, 'I') << "\n";
    o2 << "@p" << i << "/2\n" << b << "\n+\n" << std::string(100, 'I') << "\n";
  }
  return {o1.str(), o2.str()};
}

// The first `records` 4-line records of a FASTQ text.
std::string head_records(const std::string& fq, std::size_t records) {
  std::size_t at = 0;
  for (std::size_t l = 0; l < 4 * records; ++l) at = fq.find('\n', at) + 1;
  return fq.substr(0, at);
}

}  // namespace

TEST(BarracudaPairPipeline, OutputIsByteIdenticalToTheDriverOnEveryInputForm) {
  Ref fx(81);
  const TempDir& dir = fx.dir;
  // pairs with substitutions, indels and N, a quarter in repeats; ends mutated beyond aln's reach
  // (mate rescue), discordant and random ends (aln_oracle.hpp)
  // two libraries of 1500 pairs one after the other, fragments of ~250 and ~480 bp: an insert size
  // estimated over small batches follows the library, over one batch it does not
  bct::planted_pairs(fx.ref, dir / "q", 1500, 100, 250, 8, bct::tricky_repeats());
  bct::planted_pairs(fx.ref, dir / "r", 1500, 100, 480, 9, bct::tricky_repeats());
  auto renamed = [](std::string t) {  // the second library's names: r0, r1 ...
    for (std::size_t p = t.find("@q"); p != std::string::npos; p = t.find("@q", p)) t[p + 1] = 'r';
    return t;
  };
  const std::string t1 = bct::read_file(dir / "q1.fq") + renamed(bct::read_file(dir / "r1.fq")),
                    t2 = bct::read_file(dir / "q2.fq") + renamed(bct::read_file(dir / "r2.fq"));
  bct::write_file(dir / "q1.fq", t1);
  bct::write_file(dir / "q2.fq", t2);
  // the two files in the same and in different forms
  ASSERT_TRUE(bct::write_bgzf(dir / "q2.bgzf.gz", t2));
  bct::write_file(dir / "q1.fq.gz", bct::gzip_text(dir, t1));
  bct::write_file(dir / "q1.mm.gz", bct::multi_member_gzip(dir, t1, 5));
  bct::write_file(dir / "q2.mm.gz", bct::multi_member_gzip(dir, t2, 6));
  const std::vector<std::pair<fs::path, fs::path>> forms = {
      {dir / "q1.fq", dir / "q2.fq"}, {dir / "q1.fq.gz", dir / "q2.bgzf.gz"}, {dir / "q1.mm.gz", dir / "q2.mm.gz"}};
  const fs::path r1 = forms[0].first, r2 = forms[0].second;

  const std::string sam = driver(fx.ref, r1, r2, dir / "d.sam"), bam = driver(fx.ref, r1, r2, dir / "d.bam");
  const auto recs = bct::sam_records(sam);
  ASSERT_EQ(recs.size(), 6000u);
  int proper = 0, rescued = 0, unmapped = 0, discordant = 0, xa = 0, gapped = 0;
  for (const auto& r : recs) {
    const int flag = std::stoi(r[1]);
    proper += (flag & 2) != 0;
    unmapped += (flag & 4) != 0;
    discordant += (flag & 1) && !(flag & 2) && !(flag & 4) && !(flag & 8);
    gapped += r[5].find_first_of("ID") != std::string::npos;
    for (std::size_t k = 11; k < r.size(); ++k) {
      rescued += r[k] == "XT:A:M";
      xa += r[k].rfind("XA:Z:", 0) == 0;
    }
  }
  // the test has teeth: every kind of paired record is there
  EXPECT_GT(proper, 4000) << "proper pairs";
  EXPECT_GT(rescued, 50) << "mate rescue";
  EXPECT_GT(unmapped, 10) << "unmapped";
  EXPECT_GT(discordant, 50) << "discordant";
  EXPECT_GT(xa, 10) << "XA";
  EXPECT_GT(gapped, 20) << "gapped";

  // every input form, SAM and BAM, bwa's batch (one batch here)
  for (const auto& [a, b] : forms) {
    EXPECT_TRUE(pipeline(fx.ref, a, b, dir / "p.sam") == sam) << a << " SAM";
    EXPECT_TRUE(pipeline(fx.ref, a, b, dir / "p.bam") == bam) << a << " BAM";
  }
  // small batches: the insert size is estimated per batch, so the batches must be the driver's
  // (with 61 pairs per batch the output differs from one batch's: the boundaries matter)
  for (std::size_t batch : {std::size_t(61), std::size_t(333)}) {
    Opts d;
    d.batch = batch;
    const std::string want = driver(fx.ref, r1, r2, dir / "d.sam", d), want_bam = driver(fx.ref, r1, r2, dir / "d.bam", d);
    if (batch == 61) {
      EXPECT_TRUE(want != sam) << "batches of 61 pairs give the records of one batch: the test has no teeth";
    }
    for (const auto& [threads, lanes] : {std::pair{1, 1}, std::pair{2, 3}, std::pair{3, 1}})
      EXPECT_TRUE(pipeline(fx.ref, r1, r2, dir / "p.sam", with(threads, lanes, batch)) == want)
          << batch << " pairs per batch, " << threads << " threads, " << lanes << " lanes";
    EXPECT_TRUE(pipeline(fx.ref, r1, r2, dir / "p.bam", with(1, 1, batch)) == want_bam) << batch << " BAM, 1 thread";
    EXPECT_TRUE(pipeline(fx.ref, forms[2].first, forms[2].second, dir / "p.bam", with(3, 2, batch)) == want_bam)
        << batch << " multi-member gzip, BAM";
  }
  Opts serial;
  serial.serial = true;
  EXPECT_TRUE(pipeline(fx.ref, forms[1].first, forms[1].second, dir / "s.sam", serial) == sam) << "serial path";
  EXPECT_EQ(bct::temp_files_in(dir.path()), 0);
}

// bwa aln's and sampe's options and -R go through: trimming (soft clips, XC), gap opens, seed,
// penalties; maximum insert, no rescue, XA limits, no insert size estimate.
TEST(BarracudaPairPipeline, OptionsAndReadGroupGiveTheDriversBytes) {
  Ref fx(82);
  const TempDir& dir = fx.dir;
  bct::planted_pairs(fx.ref, dir / "q", 1500, 90, 280, 9, bct::tricky_repeats());
  // low qualities at the reads' ends for -q
  for (const char* f : {"q1.fq", "q2.fq"}) {
    std::string t = bct::read_file(dir / f);
    std::istringstream in(t);
    std::string l, out;
    for (int i = 0; std::getline(in, l); ++i) {
      if (i % 4 == 3 && i % 8 == 3) l.replace(l.size() - 20, 20, std::string(20, '#'));
      out += l + "\n";
    }
    bct::write_file(dir / f, out);
  }
  const fs::path r1 = dir / "q1.fq", r2 = dir / "q2.fq";
  Opts a;
  a.aln.trim_qual = 20;
  a.aln.max_diff = 4;
  a.aln.fnr = -1.0f;
  a.aln.max_gapo = 2;
  a.aln.seed_len = 24;
  a.aln.max_seed_diff = 1;
  a.aln.s_mm = 4;
  a.aln.s_gapo = 9;
  a.aln.s_gape = 3;
  a.aln.max_top2 = 10;
  a.pe.max_isize = 400;
  a.pe.n_multi = 2;
  a.pe.N_multi = 6;
  a.rg = "@RG\\tID:pp\\tSM:x";
  a.batch = 500;
  const std::string want = driver(fx.ref, r1, r2, dir / "d.sam", a);
  ASSERT_NE(want.find("\tXC:i:"), std::string::npos) << "no trimmed read";
  ASSERT_NE(want.find("\tRG:Z:pp"), std::string::npos);
  EXPECT_TRUE(pipeline(fx.ref, r1, r2, dir / "p.sam", a) == want);
  a.threads = 1;
  a.lanes = 1;
  EXPECT_TRUE(pipeline(fx.ref, r1, r2, dir / "p.sam", a) == want);
  Opts b;
  b.pe.sw = false;
  b.pe.force_isize = true;
  b.pe.ap_prior = 1e-3;
  b.batch = 700;
  const std::string want_b = driver(fx.ref, r1, r2, dir / "d.sam", b);
  EXPECT_EQ(want_b.find("XT:A:M"), std::string::npos) << "a rescue with --no-rescue";
  EXPECT_TRUE(pipeline(fx.ref, r1, r2, dir / "p.sam", b) == want_b);
}

// A pair file larger than bwa's batch (kSampeBatch = 262,144 pairs): two insert-size estimates,
// the second batch's from its own pairs, in both paths.
TEST(BarracudaPairPipeline, FileLargerThanBwasBatch) {
  TempDir dir;
  std::mt19937_64 ref_rng(83);
  const std::string fwd = bct::random_dna(ref_rng, 200000);  // few repeats: few hits per end
  const std::string ref = (dir / "r.fa").string();
  bct::write_fasta(ref, {bc::RefSeq{"r", "", fwd}});
  bc::write_index(bc::build_index(bc::read_reference(ref)), ref);
  const std::size_t n = bc::kSampeBatch + 3001;
  std::mt19937_64 rng(4);
  std::string s1, s2;
  s1.reserve(n * 70);
  s2.reserve(n * 70);
  for (std::size_t i = 0; i < n; ++i) {  // 25 bp ends (cheap to search), fragments ~180 +- 20
    const std::size_t f = 160 + rng() % 41, start = rng() % (fwd.size() - f);
    std::string a = fwd.substr(start, 25), b = bct::revcomp(fwd.substr(start + f - 25, 25));
    if (rng() % 4 == 0) b[rng() % 25] = "ACGT"[rng() & 3];
    const std::string name = "r" + std::to_string(i);
    s1 += "@" + name + "\n" + a + "\n+\n" + std::string(25, 'F') + "\n";
    s2 += "@" + name + "\n" + b + "\n+\n" + std::string(25, 'F') + "\n";
  }
  const fs::path r1 = dir / "b1.fq.gz", r2 = dir / "b2.fq";
  ASSERT_TRUE(bct::write_bgzf(r1, s1));
  bct::write_file(r2, s2);
  Opts o = with(2, 2, 0);  // bwa's batch
  o.aln.max_diff = 1;     // -n 1: a quick search (the batches are what this test is about)
  o.aln.fnr = -1.0f;
  const std::string want = driver(ref, r1, r2, dir / "d.bam", o);
  bc::MapStats st;
  EXPECT_TRUE(pipeline(ref, r1, r2, dir / "p.bam", o, &st) == want);
  EXPECT_EQ(st.reads, 2 * n);
  EXPECT_EQ(st.counts.pairs, n);
  EXPECT_GT(st.counts.proper_pairs, n);  // reads in proper pairs: most of them
}

// Files that do not pair up are refused as the driver refuses them: the same message (for the
// same pair or record) whatever the threads and batches, nothing left behind.
TEST(BarracudaPairPipeline, FilesThatDoNotPairUpAreRefusedAsByTheDriver) {
  Ref fx(84);
  const TempDir& dir = fx.dir;
  const auto [one, two] = simple_pairs(fx.fwd, 1000, 5);
  bct::write_file(dir / "r1.fq", one);
  bct::write_file(dir / "r2.fq", two);
  std::vector<std::pair<std::string, std::string>> bad;  // (file 1's text, file 2's)
  bad.emplace_back(one, head_records(two, 700));            // file 2 shorter (in a batch)
  bad.emplace_back(head_records(one, 666), two);            // file 1 shorter, ending at a batch boundary (333)
  bad.emplace_back(one, head_records(two, 999));            // by one record, in the last batch
  bad.emplace_back(one, head_records(two, 500) + "@p500/2\nACGT\n+\n");  // a record cut short
  bad.emplace_back(one.substr(0, one.size() - 3), two);     // file 1's last record cut short
  {
    std::string renamed = two;
    renamed.replace(renamed.find("@p800/2"), 7, "@x800/2");  // names differ
    bad.emplace_back(one, renamed);
    std::string fasta;
    std::istringstream in(two);
    std::string l;
    for (int i = 0; std::getline(in, l); ++i)
      if (i % 4 == 0) fasta += ">" + l.substr(1) + "\n";
      else if (i % 4 == 1) fasta += l + "\n";
    bad.emplace_back(one, fasta);  // FASTQ and FASTA
    std::string empty = two;
    const std::size_t at = empty.find("@p400/2\n") + 8;
    empty.replace(at, empty.find('\n', at) - at, "");
    const std::size_t q = empty.find("+\n", at) + 2;
    empty.replace(q, empty.find('\n', q) - q, "");
    bad.emplace_back(one, empty);  // an empty read in a pair
    std::string badq = two;         // a content error in file 2 (qualities longer than the bases) ...
    const std::size_t b = badq.find("@p100/2\n");
    const std::size_t ql = badq.find("+\n", b) + 2;
    badq.insert(ql, "II");
    bad.emplace_back(head_records(one, 200), badq);  // ... before file 1 ends
    bad.emplace_back(one, "");                        // an empty file 2
    bad.emplace_back(head_records(one, 400) + "@p400/1\nAC!T\n+\nIIII\n" + one.substr(head_records(one, 401).size()),
                     head_records(two, 350));          // a bad base in file 1 after file 2 ends
  }
  int i = 0;
  for (const auto& [a, b] : bad) {
    SCOPED_TRACE("case " + std::to_string(i));
    const fs::path p1 = dir / ("b" + std::to_string(i) + "_1.fq"), p2 = dir / ("b" + std::to_string(i) + "_2.fq");
    ++i;
    bct::write_file(p1, a);
    bct::write_file(p2, b);
    for (std::size_t batch : {std::size_t(333), std::size_t(0)}) {
      Opts d;
      d.batch = batch;
      const std::string want = error_of([&] { driver(fx.ref, p1, p2, dir / "d.sam", d); });
      ASSERT_FALSE(want.empty()) << "the driver accepts bad case " << i - 1;
      for (int threads : {1, 3}) {
        const std::string got = error_of([&] { pipeline(fx.ref, p1, p2, dir / "o.sam", with(threads, 2, batch)); });
        EXPECT_EQ(got, want) << batch << " pairs per batch, " << threads << " threads";
      }
      EXPECT_FALSE(fs::exists(dir / "o.sam"));
      EXPECT_EQ(bct::temp_files_in(dir.path()), 0);
    }
  }
  // compressed files cut short or damaged (the streaming reader's messages are its own: the file is named)
  const std::string gz2 = bct::gzip_text(dir, two);
  bct::write_file(dir / "cut2.fq.gz", gz2.substr(0, gz2.size() / 2));
  bct::write_file(dir / "trailer2.fq.gz", gz2.substr(0, gz2.size() - 4));
  ASSERT_TRUE(bct::write_bgzf(dir / "bgzf1.gz", one));
  const std::string bg = bct::read_file(dir / "bgzf1.gz");
  bct::write_file(dir / "noeof1.gz", bg.substr(0, bg.size() - 28));  // without the end-of-file block
  for (const auto& [p1, p2, culprit] : std::vector<std::tuple<fs::path, fs::path, std::string>>{
           {dir / "r1.fq", dir / "cut2.fq.gz", "cut2.fq.gz"},
           {dir / "r1.fq", dir / "trailer2.fq.gz", "trailer2.fq.gz"},
           {dir / "noeof1.gz", dir / "r2.fq", "noeof1.gz"}}) {
    for (int threads : {1, 3}) {
      const std::string got = error_of([&] { pipeline(fx.ref, p1, p2, dir / "o.bam", with(threads, 2, 300)); });
      EXPECT_EQ(got.rfind((dir / culprit).string() + ": ", 0), 0u) << got;
      EXPECT_NE(got.find("truncated"), std::string::npos) << got;
    }
    EXPECT_FALSE(fs::exists(dir / "o.bam"));
    EXPECT_EQ(bct::temp_files_in(dir.path()), 0);
    // through the CLI: exit code 2, one line naming the file, no output
    const auto r = evk::testing::run_tool("barracuda_exact", "map --backend cpu -t 3 " + fx.ref + " " + p1.string() + " " +
                                                                 p2.string() + " -o " + (dir / "o.bam").string());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(culprit), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir / "o.bam"));
  }
}

// The counts as the records say, every stage's seconds, and the CLI's JSON in paired mode.
TEST(BarracudaPairPipeline, CountsAndStageTimes) {
  Ref fx(85);
  bct::planted_pairs(fx.ref, fx.dir / "q", 1500, 100, 300, 10, bct::tricky_repeats());
  const fs::path r1 = fx.dir / "q1.fq", r2 = fx.dir / "q2.fq.gz";
  bct::write_file(r2, bct::gzip_text(fx.dir, bct::read_file(fx.dir / "q2.fq")));
  bc::MapStats st;
  const std::string sam = pipeline(fx.ref, r1, r2, fx.dir / "p.sam", with(2, 2, 400), &st);
  std::uint64_t mapped = 0, unmapped = 0, proper = 0, rescued = 0;
  for (const auto& r : bct::sam_records(sam)) {
    const int flag = std::stoi(r[1]);
    if (flag & 4) {
      ++unmapped;
      continue;
    }
    ++mapped;
    proper += (flag & 2) != 0;
    for (std::size_t k = 11; k < r.size(); ++k) rescued += r[k] == "XT:A:M";
  }
  EXPECT_EQ(st.reads, 3000u);
  EXPECT_EQ(st.counts.pairs, 1500u);
  EXPECT_EQ(st.counts.unique + st.counts.repeat, mapped);
  EXPECT_EQ(st.counts.unmatched, unmapped);
  EXPECT_EQ(st.counts.proper_pairs, proper);
  EXPECT_EQ(st.counts.mate_rescued, rescued);
  EXPECT_GT(rescued, 0u);
  EXPECT_GT(st.match_s, 0);
  EXPECT_GT(st.records_s, 0);
  EXPECT_GT(st.format_s, 0);
  EXPECT_GT(st.parse_s, 0);
  EXPECT_GT(st.scan_s, 0);
  EXPECT_GT(st.inflate_s, 0);  // file 2 is gzip
  EXPECT_EQ(st.input_format, "plain + gzip");
  const auto r = evk::testing::run_tool("barracuda_exact", "map --backend cpu -t 2 --json " + fx.ref + " " + r1.string() + " " +
                                                               r2.string() + " -o " + (fx.dir / "c.bam").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mode"], "paired");
  EXPECT_EQ(j["reads"].get<std::uint64_t>(), 3000u);
  EXPECT_EQ(j["pairs"].get<std::uint64_t>(), 1500u);
  EXPECT_EQ(j["mapped"].get<std::uint64_t>(), mapped);
  EXPECT_EQ(j["proper_pairs_reads"].get<std::uint64_t>(), proper);
  for (const char* k : {"inflate", "scan", "parse", "search", "kernel", "sam", "format", "write", "total"})
    EXPECT_TRUE(j["seconds"].contains(k)) << k;
  EXPECT_GT(j["seconds"]["sam"].get<double>(), 0);
  EXPECT_GT(j["reads_per_s"]["end_to_end"].get<double>(), 0);
  EXPECT_GT(j["peak_rss_mib"].get<double>(), 0);
}
