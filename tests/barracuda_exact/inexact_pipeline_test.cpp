// Single-end inexact mapping (bwa aln + samse) through the streaming pipeline of `map`
// (map/aln_mapper.hpp in map/map_run.hpp) against the serial oracle (serial_map.hpp: core's search
// and samse straight, one batch at a time; the pipeline is tested record by record against bwa in
// samse_test.cpp): byte-identical SAM and BAM from
// every input form (plain, gzip, multi-member gzip, BGZF), with 1 and 2 threads, several lanes and
// small batches (many in flight, out of order), bwa's options (trimming, gap opens, read group);
// the serial path too; memory bounded whatever the file size; the CLI's stage timings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <map>
#include <random>
#include <sstream>

#include "aln_oracle.hpp"
#include "core/index.hpp"
#include "evk_testing.hpp"
#include "io/index_files.hpp"
#include "map/map_run.hpp"
#include "serial_map.hpp"
#include "io/sequences.hpp"
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

// The oracle's output: the serial inexact driver (serial_map.hpp's serial_aln_map).
std::string driver(const std::string& ref, const fs::path& reads, const fs::path& out, const bc::AlnOptions& aln = {},
                   const std::string& rg = "") {
  bc::MapOptions o;
  o.ref = ref;
  o.reads = reads.string();
  o.out = out.string();
  o.command_line = "test";
  o.threads = 2;
  o.inexact = true;
  o.aln = aln;
  o.read_group = rg;
  bct::serial_aln_map(o);
  std::string s = bct::read_file(out);
  fs::remove(out);
  return s;
}

// The pipeline (CPU backend).
std::string pipeline(const std::string& ref, const fs::path& reads, const fs::path& out, int threads, std::size_t batch,
                     bool serial = false, int lanes = 2, const bc::AlnOptions& aln = {}, const std::string& rg = "",
                     bc::MapStats* stats = nullptr) {
  bc::MapOptions o;
  o.ref = ref;
  o.reads = reads.string();
  o.out = out.string();
  o.command_line = "test";
  o.threads = threads;
  o.batch_reads = batch;
  o.cpu_lanes = lanes;
  o.inexact = true;
  o.aln = aln;
  o.read_group = rg;
  const bc::MapStats st = serial ? bct::serial_map(o) : bc::run_map(o);
  if (stats) *stats = st;
  std::string s = bct::read_file(out);
  fs::remove(out);
  return s;
}

}  // namespace

TEST(BarracudaInexactPipeline, OutputIsByteIdenticalToTheDriverOnEveryInputForm) {
  Ref fx(71);
  const TempDir& dir = fx.dir;
  // reads with substitutions, indels and N on both strands, a third in repeats, 20..260 bp; then
  // reads written in every legal FASTQ way (wrapped lines, CRLF, /1 /2 names, empty reads)
  bct::planted_reads(fx.ref, dir / "p.fq", 1800, 20, 260, 9, bct::tricky_repeats());
  const std::string text = bct::read_file(dir / "p.fq") + bct::varied_reads(fx.fwd, 1500, 13);
  std::vector<fs::path> inputs = {dir / "v.fq", dir / "v.fq.gz", dir / "mm.fq.gz", dir / "v.bgzf.gz"};
  bct::write_file(inputs[0], text);
  bct::write_file(inputs[1], bct::gzip_text(dir, text));
  bct::write_file(inputs[2], bct::multi_member_gzip(dir, text, 17));
  ASSERT_TRUE(bct::write_bgzf(inputs[3], text));
  const std::string sam = driver(fx.ref, inputs[0], dir / "d.sam"), bam = driver(fx.ref, inputs[0], dir / "d.bam");
  const auto recs = bct::sam_records(sam);
  ASSERT_GT(recs.size(), 3000u);
  int gapped = 0, mismatched = 0, reverse = 0, unmapped = 0, xa = 0, trimmed_empty = 0;
  for (const auto& r : recs) {
    gapped += r[5].find_first_of("ID") != std::string::npos;
    reverse += (std::stoi(r[1]) & 16) != 0;
    unmapped += (std::stoi(r[1]) & 4) != 0;
    for (std::size_t k = 11; k < r.size(); ++k) {
      mismatched += r[k].rfind("XM:i:", 0) == 0 && r[k] != "XM:i:0";
      xa += r[k].rfind("XA:Z:", 0) == 0;
    }
    trimmed_empty += r[9] == "*";
  }
  // the test has teeth: every kind of record is there (and no record of an empty read)
  EXPECT_GT(gapped, 30) << "gapped";
  EXPECT_GT(mismatched, 300) << "mismatched";
  EXPECT_GT(reverse, 600) << "reverse";
  EXPECT_GT(unmapped, 10) << "unmapped";
  EXPECT_GT(xa, 10) << "XA";
  EXPECT_EQ(trimmed_empty, 0);
  // every input form, SAM and BAM; the thread / batch / lane matrix on the plain and the multi-member files
  for (const auto& in : inputs) {
    EXPECT_TRUE(pipeline(fx.ref, in, dir / "p.sam", 2, 333) == sam) << in << " SAM";
    EXPECT_TRUE(pipeline(fx.ref, in, dir / "p.bam", 2, 0) == bam) << in << " BAM";
  }
  for (const auto& in : {inputs[0], inputs[2]}) {
    for (int threads : {1, 2})
      for (std::size_t batch : {std::size_t(333), std::size_t(0)})
        EXPECT_TRUE(pipeline(fx.ref, in, dir / "p.sam", threads, batch) == sam) << in << " SAM, " << threads << " threads, batch " << batch;
    EXPECT_TRUE(pipeline(fx.ref, in, dir / "p.bam", 1, 500) == bam) << in << " BAM, 1 thread";
    EXPECT_TRUE(pipeline(fx.ref, in, dir / "p.sam", 3, 211, false, 3) == sam) << in << " 3 lanes";
  }
  EXPECT_TRUE(pipeline(fx.ref, inputs[1], dir / "s.sam", 1, 0, true) == sam) << "serial path";
}

// bwa aln's and samse's options go through: -q trimming (soft clips, XC), gap opens, seed, penalties,
// -R (the header line and RG:Z), on the project's lambda reads.
TEST(BarracudaInexactPipeline, OptionsAndReadGroupGiveTheDriversBytes) {
  const fs::path data = evk::testing::project_data_dir();
  const fs::path g = data / "genomes" / "lambda_virus.fa.gz", reads = data / "reads" / "lambda_reads_1.fq.gz";
  if (!fs::exists(g) || !fs::exists(reads)) GTEST_SKIP() << "no lambda data";
  TempDir dir;
  const std::string fa = (dir / "lambda.fa").string();
  ASSERT_EQ(evk::testing::run("gzip -dc " + g.string() + " > " + fa).exit_code, 0);
  bc::write_index(bc::build_index(bc::read_reference(fa)), fa);
  bc::AlnOptions a;
  a.trim_qual = 20;
  a.max_diff = 4;
  a.fnr = -1.0f;
  a.max_gapo = 2;
  a.seed_len = 24;
  a.max_seed_diff = 1;
  a.s_mm = 4;
  a.s_gapo = 9;
  a.s_gape = 3;
  a.max_top2 = 10;
  const std::string rg = "@RG\\tID:lam\\tSM:x";
  const std::string want = driver(fa, reads, dir / "d.sam", a, rg);
  ASSERT_NE(want.find("\tXC:i:"), std::string::npos) << "no trimmed read";
  ASSERT_NE(want.find("\tRG:Z:lam"), std::string::npos);
  EXPECT_TRUE(pipeline(fa, reads, dir / "p.sam", 2, 500, false, 2, a, rg) == want);
  EXPECT_TRUE(pipeline(fa, reads, dir / "p.sam", 1, 0, false, 1, a, rg) == want);
  // default options on the same reads
  EXPECT_TRUE(pipeline(fa, reads, dir / "p.bam", 2, 777) == driver(fa, reads, dir / "d.bam"));
}

// The per-batch work is accounted: counts as the records say, each stage's seconds present.
TEST(BarracudaInexactPipeline, CountsAndStageTimes) {
  Ref fx(72);
  bct::planted_reads(fx.ref, fx.dir / "p.fq", 2000, 60, 150, 4, bct::tricky_repeats());
  bc::MapStats st;
  const std::string sam = pipeline(fx.ref, fx.dir / "p.fq", fx.dir / "p.sam", 2, 500, false, 2, {}, "", &st);
  std::uint64_t mapped = 0, unmapped = 0, nm0 = 0;
  for (const auto& r : bct::sam_records(sam)) {
    if (std::stoi(r[1]) & 4) {
      ++unmapped;
      continue;
    }
    ++mapped;
    for (std::size_t k = 11; k < r.size(); ++k) nm0 += r[k] == "NM:i:0";
  }
  EXPECT_EQ(st.reads, 2000u);
  EXPECT_EQ(st.counts.unique + st.counts.repeat, mapped);
  EXPECT_EQ(st.counts.unmatched, unmapped);
  EXPECT_EQ(st.counts.by_diff[0], nm0);
  EXPECT_GT(st.match_s, 0);
  EXPECT_GT(st.records_s, 0);
  EXPECT_GT(st.format_s, 0);
  EXPECT_GT(st.parse_s, 0);
  // and the CLI's JSON carries them
  const auto r = evk::testing::run_tool("barracuda_exact", "map --backend cpu -t 2 --json " + fx.ref + " " +
                                                               (fx.dir / "p.fq").string() + " -o " + (fx.dir / "c.bam").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reads"].get<std::uint64_t>(), 2000u);
  EXPECT_EQ(j["mapped"].get<std::uint64_t>(), mapped);
  for (const char* k : {"parse", "search", "sam", "format", "write", "total"}) EXPECT_TRUE(j["seconds"].contains(k)) << k;
  EXPECT_GT(j["seconds"]["sam"].get<double>(), 0);
  // the GPU search's hand-backs: none on the CPU backend (every read is searched there in the first place)
  EXPECT_EQ(j.at("gpu_first_pass_handed_back").get<std::uint64_t>(), 0u);
  EXPECT_EQ(j.at("gpu_fallback_reads").get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["seconds"].at("later_passes").get<double>(), 0.0);
  ASSERT_EQ(j.at("gpu_later_passes").size(), 3u);
  for (const auto& p : j["gpu_later_passes"]) EXPECT_EQ(p.at("reads").get<std::uint64_t>(), 0u);
  // --gpu-passes takes 0..3
  const auto bad = evk::testing::run_tool("barracuda_exact", "map --gpu-passes 4 " + fx.ref + " " + (fx.dir / "p.fq").string() +
                                                                  " -o " + (fx.dir / "bad.bam").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--gpu-passes"), std::string::npos) << bad.err;
  // the keys every pipelined mode reports
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("input_format"), "plain");
  EXPECT_EQ(j.at("threads").get<int>(), 2);
  EXPECT_GE(j.at("lanes").get<int>(), 1);
  EXPECT_EQ(j.at("batches_in_flight_max").get<int>(), j.at("lanes").get<int>() + 6);
  EXPECT_EQ(j.at("input_bytes").get<std::uint64_t>(), fs::file_size(fx.dir / "p.fq"));
  EXPECT_EQ(j.at("text_bytes").get<std::uint64_t>(), fs::file_size(fx.dir / "p.fq"));
  EXPECT_GT(j.at("cpu_seconds").get<double>(), 0);
  EXPECT_GT(j["peak_rss_mib"].get<double>(), 0);
  EXPECT_FALSE(j.at("mapper").get<std::string>().empty());
}

// --trace: one row per batch and stage, in the order the batch went through them, the batches' reads
// adding up to the file's, the index load first; a missing folder fails before any work (exit 2).
TEST(BarracudaInexactPipeline, TraceHasEveryBatchsStagesInOrder) {
  Ref fx(74);
  bct::planted_reads(fx.ref, fx.dir / "p.fq", 2100, 40, 90, 3, bct::tricky_repeats());
  const std::string trace = (fx.dir / "t.tsv").string();
  const auto r = evk::testing::run_tool("barracuda_exact", "map --backend cpu -t 2 --batch-reads 500 --trace " + trace + " " +
                                                               fx.ref + " " + (fx.dir / "p.fq").string() + " -o " +
                                                               (fx.dir / "t.bam").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> stages = {"scan", "parse", "map", "finish", "format", "write"};
  std::map<int, std::map<std::string, std::pair<double, double>>> seen;  // batch -> stage -> (start, end)
  std::map<std::string, std::uint64_t> reads;
  std::istringstream in(bct::read_file(trace));
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line.rfind("batch\tstage\tlane\tstart_s\tend_s\treads\tkernel_s", 0), 0u) << line;
  int rows = 0, index_rows = 0;
  double index_end = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream ls(line);
    for (std::string x; std::getline(ls, x, '\t');) f.push_back(x);
    ASSERT_EQ(f.size(), 13u) << line;
    ++rows;
    const double start = std::stod(f[3]), end = std::stod(f[4]);
    EXPECT_LE(start, end) << line;
    if (f[1] == "index") {
      ++index_rows;
      index_end = end;
      EXPECT_EQ(f[0], "-");
      continue;
    }
    ASSERT_TRUE(std::find(stages.begin(), stages.end(), f[1]) != stages.end()) << line;
    EXPECT_TRUE(seen[std::stoi(f[0])].emplace(f[1], std::make_pair(start, end)).second) << "twice: " << line;
    reads[f[1]] += std::stoull(f[5]);
    if (f[1] == "map") {
      EXPECT_GE(std::stoi(f[2]), 0) << line;
      EXPECT_GT(std::stod(f[12]), 0) << "the lane's search time: " << line;
    } else {
      EXPECT_EQ(f[6], "-") << line;
    }
  }
  EXPECT_EQ(index_rows, 1);
  ASSERT_EQ(seen.size(), 5u);  // 2100 reads in batches of 500
  for (const auto& [batch, st] : seen) {
    ASSERT_EQ(st.size(), stages.size()) << "batch " << batch;
    for (std::size_t k = 1; k < stages.size(); ++k)
      EXPECT_LE(st.at(stages[k - 1]).second, st.at(stages[k]).first + 1e-6) << "batch " << batch << " " << stages[k];
    EXPECT_LE(index_end, st.at("parse").first + 1e-6);
  }
  for (const auto& s : stages) EXPECT_EQ(reads[s], 2100u) << s;
  EXPECT_EQ(rows, 1 + 5 * 6);
  const auto bad = evk::testing::run_tool("barracuda_exact", "map --backend cpu --trace " + (fx.dir / "no" / "t.tsv").string() +
                                                                 " " + fx.ref + " " + (fx.dir / "p.fq").string() + " -o " +
                                                                 (fx.dir / "u.bam").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_FALSE(fs::exists(fx.dir / "u.bam"));
}

// map writes BAM at level 1 unless -l says otherwise: past the header's block (the @PG line holds the
// command line) the default's blocks are -l 1's byte for byte, and -l 6's differ.
TEST(BarracudaInexactPipeline, BamLevelIsOneByDefault) {
  Ref fx(75);
  bct::planted_reads(fx.ref, fx.dir / "p.fq", 3000, 60, 120, 3, bct::tricky_repeats());
  auto blocks_after_header = [&](const std::string& extra, const std::string& name) {
    const auto r = evk::testing::run_tool("barracuda_exact", "map --backend cpu -t 2 " + extra + " " + fx.ref + " " +
                                                                 (fx.dir / "p.fq").string() + " -o " + (fx.dir / name).string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string b = bct::read_file(fx.dir / name);
    EXPECT_GT(b.size(), 18u);
    // BGZF blocks: BSIZE (bytes 16-17) + 1 each; the first holds the header
    const std::size_t first = b.size() > 18 ? (static_cast<unsigned char>(b[16]) | static_cast<unsigned char>(b[17]) << 8) + 1u : 0;
    return b.substr(std::min(first, b.size()));
  };
  const std::string def = blocks_after_header("", "d.bam"), one = blocks_after_header("-l 1", "1.bam"),
                    six = blocks_after_header("-l 6", "6.bam");
  EXPECT_GT(def.size(), 1000u);
  EXPECT_TRUE(def == one);
  EXPECT_FALSE(def == six);
  EXPECT_LT(six.size(), one.size());
}

// Memory does not grow with the input: the CLI's peak RSS on a file 3x larger (and 150x larger than
// the batch) stays within a few MiB, far below what holding the extra reads would take. (The smaller
// file is past the warm-up: the heap reaches its plateau within the first ~100,000 reads.)
TEST(BarracudaInexactPipeline, MemoryStaysBoundedWhateverTheFileSize) {
  Ref fx(73);
  std::mt19937_64 rng(6);
  auto write_reads = [&](const fs::path& p, std::size_t n) {
    std::string s;
    s.reserve(n * 230);
    for (std::size_t i = 0; i < n; ++i) {
      std::string r = fx.fwd.substr(rng() % (fx.fwd.size() - 100), 100);
      if (rng() % 3 == 0) r[rng() % 100] = "ACGT"[rng() % 4];
      s += "@read" + std::to_string(i) + "\n" + r + "\n+\n" + std::string(100, 'F') + "\n";
    }
    bct::write_file(p, s);
    return s.size();
  };
  const std::size_t small_bytes = write_reads(fx.dir / "small.fq", 100000);
  const std::size_t big_bytes = write_reads(fx.dir / "big.fq", 300000);
  auto peak = [&](const std::string& f, std::uint64_t n) {
    auto r = evk::testing::run_tool("barracuda_exact", "map --backend cpu -t 2 --batch-reads 2000 --json " + fx.ref + " " +
                                                           (fx.dir / f).string() + " -o " + (fx.dir / "o.sam").string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["reads"].get<std::uint64_t>(), n);
    return j["peak_rss_mib"].get<double>();
  };
  const double small = peak("small.fq", 100000), big = peak("big.fq", 300000);
  const double extra_mib = static_cast<double>(big_bytes - small_bytes) / (1 << 20);
  EXPECT_GT(extra_mib, 40);
  EXPECT_LT(big, small + 10) << "small " << small << " MiB, big " << big << " MiB; the extra reads are " << extra_mib << " MiB";
}

// The GPU's default single-end batch holds two of bwa aln's batches of 0x40000 reads (asked for here,
// on the CPU backend); where their gap-open limits differ (here: the second holds only 5-7 bp reads,
// which allow one difference, so its limit under -o 2 is 1 where the first's is 2) they are searched
// one at a time: the records equal the driver's, which reads bwa's batches one by one.
TEST(BarracudaInexactPipeline, BatchOfSeveralBwaBatchesEqualsThemOneByOne) {
  Ref fx(83);
  const TempDir& dir = fx.dir;
  const int first = static_cast<int>(bc::kSampeBatch);
  // bwa's first batch: 20-22 bp pieces of the reference (limit 2); the second: 5-7 bp (limit 1);
  // a third of each with a substitution
  std::string text;
  std::mt19937_64 rng(6);
  const auto piece = [&](int i, std::size_t l) {
    const std::size_t at = rng() % (fx.fwd.size() - l);
    std::string seq = fx.fwd.substr(at, l);
    if (i % 3 == 0) seq[rng() % l] = "ACGT"[rng() % 4];
    text += "@r" + std::to_string(i) + "\n" + seq + "\n+\n" + std::string(l, 'I') + "\n";
  };
  for (int i = 0; i < first; ++i) piece(i, 20 + rng() % 3);
  for (int i = 0; i < 1500; ++i) piece(first + i, 5 + rng() % 3);
  bct::write_file(dir / "r.fq", text);
  bc::AlnOptions aln;
  aln.fnr = 0.01f;
  aln.max_gapo = 2;
  // the case splits: one batch of ours, two limits
  std::vector<int> len(static_cast<std::size_t>(first), 22);
  len.resize(static_cast<std::size_t>(first) + 1500, 7);
  ASSERT_EQ(bc::aln_batch_cuts(aln, len), (std::vector<std::size_t>{0, bc::kSampeBatch, len.size()}));
  const std::string sam = driver(fx.ref, dir / "r.fq", dir / "d.sam", aln);
  EXPECT_GT(bct::sam_records(sam).size(), static_cast<std::size_t>(first));
  EXPECT_TRUE(pipeline(fx.ref, dir / "r.fq", dir / "p.sam", 2, 2 * std::size_t{bc::kSampeBatch}, false, 2, aln) == sam);
}
