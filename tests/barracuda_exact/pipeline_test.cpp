// The streaming pipeline of `map` against the serial path (htslib's kseq reading, sam_write1 per
// record, no threads): the same reads from every input form (plain, gzip, multi-member gzip, BGZF,
// odd chunk sizes that cut records anywhere), byte-identical SAM/BAM/unmatched output with 1 and 2
// threads and small batches; truncation at every level is an error; memory stays bounded.
#include <gtest/gtest.h>

#include <chrono>

#include <thread>
#include <htslib/bgzf.h>

#include <atomic>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/hits.hpp"
#include "core/index.hpp"
#include "core/match.hpp"
#include "evk/device.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "io/index_files.hpp"
#include "map/map_run.hpp"
#include "serial_map.hpp"
#include "io/queue.hpp"
#include "io/read_batch.hpp"
#include "io/record_scan.hpp"
#include "io/sequences.hpp"
#include "evk/task_pool.hpp"
#include "io/text_input.hpp"
#include "pipeline_inputs.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;
using evk::testing::TempDir;

namespace {

// ---- inputs ------------------------------------------------------------------------------------

// ---- reading -----------------------------------------------------------------------------------

struct Reads {
  std::vector<std::string> name, seq, qual;
  std::string codes;
  bool operator==(const Reads&) const = default;
};
void append(Reads& all, const bc::ReadBatch& b) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    all.name.emplace_back(b.name(i));
    all.seq.emplace_back(b.seq(i));
    all.qual.emplace_back(b.has_qual[i] ? std::string(b.qual(i)) : std::string("<none>"));
    all.codes.append(reinterpret_cast<const char*>(b.codes.codes.data() + b.codes.offset[i]), b.codes.len[i]);
  }
}

Reads read_serial(const fs::path& p) {
  bc::ReadSource src(p.string());
  bc::ReadBatch b;
  Reads all;
  while (src.next(b, 997, 997 * 160, 1024)) append(all, b);
  return all;
}

Reads read_streaming(const fs::path& p, std::size_t chunk, int workers, std::size_t batch = 1009) {
  evk::TaskPool pool(workers);
  bc::TextInput in(p.string(), pool, chunk);
  bc::RecordScanner scan(in);
  bc::ScanBatch sb;
  bc::ReadBatch b;
  Reads all;
  while (scan.next(sb, batch, batch * 160, 1024)) {
    bc::parse_batch(p.string(), sb, b, pool);
    append(all, b);
  }
  return all;
}

// The InputError message of f(), or "" when it succeeds.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const evk::InputError& e) {
    return e.what();
  }
  return "";
}

// ---- the pipeline ------------------------------------------------------------------------------

struct RefFixture {
  TempDir dir;
  std::string ref;
  std::string fwd;
  explicit RefFixture(std::uint64_t seed) {
    const auto r = bct::tricky_reference(seed);
    const bc::BwtIndex idx = bc::build_index(r);
    ref = (dir / "t.fa").string();
    bct::write_fasta(ref, r);
    bc::write_index(idx, ref);
    fwd = bct::forward_text(idx);
  }
};

struct Outputs {
  std::string main, unmatched;
};
Outputs map_files(const std::string& ref, const fs::path& reads, const TempDir& dir, const std::string& name,
                  bool serial, int threads, std::size_t batch, bool unmatched = true, bool uncompressed = false) {
  bc::MapOptions o;
  o.ref = ref;
  o.reads = reads.string();
  o.out = (dir / name).string();
  if (unmatched) o.unmatched = (dir / (name + ".un.fq.gz")).string();
  o.command_line = "test";  // the @PG line must not differ
  o.threads = threads;
  o.batch_reads = batch;
  o.uncompressed = uncompressed;
  if (serial) bct::serial_map(o);
  else bc::run_map(o);
  Outputs out{bct::read_file(o.out), unmatched ? bct::read_file(o.unmatched) : ""};
  fs::remove(o.out);
  if (unmatched) fs::remove(o.unmatched);
  return out;
}

}  // namespace

TEST(BarracudaPipeline, StreamingReaderEqualsKseqOnEveryInputForm) {
  TempDir dir;
  std::mt19937_64 rng(3);
  const std::string fwd = bct::random_dna(rng, 30000);
  const std::string text = bct::varied_reads(fwd, 3000, 5);
  bct::write_file(dir / "r.fq", text);
  bct::write_file(dir / "r.fq.gz", bct::gzip_text(dir, text));
  bct::write_file(dir / "mm.fq.gz", bct::multi_member_gzip(dir, text, 7));
  ASSERT_TRUE(bct::write_bgzf(dir / "r.bgzf.fq.gz", text));
  const Reads want = read_serial(dir / "r.fq");
  ASSERT_EQ(want.name.size(), 3000u);
  for (const char* f : {"r.fq.gz", "mm.fq.gz", "r.bgzf.fq.gz"}) EXPECT_TRUE(read_serial(dir / f) == want) << f;
  for (const char* f : {"r.fq", "r.fq.gz", "mm.fq.gz", "r.bgzf.fq.gz"})
    for (std::size_t chunk : {std::size_t(100), std::size_t(4096), std::size_t(4) << 20})
      for (int workers : {0, 2}) EXPECT_TRUE(read_streaming(dir / f, chunk, workers) == want) << f << " chunk " << chunk;
  // chunks of 1 and 7 bytes: every record crosses chunk boundaries
  const std::string text300 = bct::varied_reads(fwd, 300, 6);
  bct::write_file(dir / "s.fq", text300);
  const Reads want300 = read_serial(dir / "s.fq");
  ASSERT_EQ(want300.name.size(), 300u);
  for (std::size_t chunk : {std::size_t(1), std::size_t(7)}) EXPECT_TRUE(read_streaming(dir / "s.fq", chunk, 1) == want300) << chunk;
}

// Random text over the characters that matter to the parser: the streaming reader and kseq with
// our checks (io/read_rules.hpp) read the same reads or refuse with the same message, record cuts
// (which kseq alone would read as shorter records) included.
TEST(BarracudaPipeline, StreamingReaderEqualsKseqOnRandomText) {
  TempDir dir;
  std::mt19937_64 rng(11);
  const std::string alphabet = "@@>>++\n\n\n\n\r  \tACGTNacgIIII#";
  int both_ok = 0, both_fail = 0, cut = 0;
  for (int t = 0; t < 1500; ++t) {
    std::string s(rng() % 120, ' ');
    for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    if (t % 2 == 0) {  // half: 1-4 good records, one character replaced in half of them
      s.clear();
      for (std::uint64_t k = 0, m = 1 + rng() % 4; k < m; ++k) s += "@r" + std::to_string(k) + "\nACGT\n+\nIIII\n";
      if (rng() & 1) s[rng() % s.size()] = alphabet[rng() % alphabet.size()];
    }
    bct::write_file(dir / "x.fq", s);
    Reads want, got;
    const std::string e1 = error_of([&] { want = read_serial(dir / "x.fq"); });
    const std::string e2 = error_of([&] { got = read_streaming(dir / "x.fq", 1 + rng() % 9, 0, 1 + rng() % 4); });
    if (e1.empty() && e2.empty()) {
      ASSERT_TRUE(got == want) << "input: " << ::testing::PrintToString(s);
      ++both_ok;
    } else {  // both refuse, with the same message (io/read_rules.hpp)
      ASSERT_EQ(e2, e1) << "input: " << ::testing::PrintToString(s);
      if (e1.find("truncated") != std::string::npos || e1.find("no '+' line") != std::string::npos) ++cut;
      ++both_fail;
    }
  }
  EXPECT_GT(both_ok, 300);
  EXPECT_GT(both_fail, 100);
  EXPECT_GT(cut, 50);  // records cut short, which kseq alone would read as shorter records
}

// Records far longer than a chunk (a 2 MB read, a record followed by 2 MB of blank lines) read
// through 257-byte chunks: the same reads (or message) as the serial reader. Before the scanner joined
// chunks geometrically it rescanned such a record from its start once per chunk (quadratic: fuzz_fastx
// found a 300 KB input taking a minute); these inputs would then take hours, so this test also guards
// against that coming back (it finishes in about a second).
TEST(BarracudaPipeline, RecordsLongerThanManyChunks) {
  TempDir dir;
  std::mt19937_64 rng(5);
  std::string seq(2'000'000, 'A');
  for (auto& c : seq) c = "ACGT"[rng() % 4];
  const std::vector<std::string> inputs = {
      ">long\n" + seq + "\n>short\nACGT\n",
      "@long\n" + seq + "\n+\n" + std::string(seq.size(), 'I') + "\n@s\nAC\n+\nII\n",
      "@r1\nACGTACGT\n" + std::string(2'000'000, '\n') + "+\nIIIIIIII\n",
      "@r1\nACGTACGT\n" + [] {
        std::string t;
        for (int i = 0; i < 200'000; ++i) t += "\n\nI\n";
        return t;
      }(),
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    bct::write_file(dir / "x.fq", inputs[i]);
    Reads want, got;
    const std::string e1 = error_of([&] { want = read_serial(dir / "x.fq"); });
    const std::string e2 = error_of([&] { got = read_streaming(dir / "x.fq", 257, 1); });
    EXPECT_EQ(e2, e1) << "input " << i;
    if (e1.empty() && e2.empty()) {
      EXPECT_TRUE(got == want) << "input " << i;
      EXPECT_FALSE(want.seq.empty()) << "input " << i;
    }
  }
}

// A gzip stream is read far ahead when asked (map: while the index loads), the default bound again
// after end_read_ahead(); the text handed out is the file's either way.
TEST(BarracudaPipeline, GzipReadsAheadUntilToldToStop) {
  TempDir dir;
  std::mt19937_64 rng(8);
  std::string text;
  for (int i = 0; text.size() < (std::size_t{24} << 20); ++i)
    text += "@r" + std::to_string(i) + "\n" + bct::random_dna(rng, 150) + "\n+\n" + std::string(150, 'F') + "\n";
  bct::write_file(dir / "r.fq.gz", bct::gzip_text(dir, text));
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  evk::TaskPool pool(2);
  auto drain = [](bc::TextInput& in) {
    std::string got;
    while (auto c = in.next()) got.append(c->data.get(), c->size);
    return got;
  };
  {
    bc::TextInput in((dir / "r.fq.gz").string(), pool, kChunk);  // the default: workers + 4 chunks
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_LE(in.stats().text_bytes.load(), 8 * kChunk);
    EXPECT_TRUE(drain(in) == text);
  }
  bc::TextInput in((dir / "r.fq.gz").string(), pool, kChunk, std::size_t{64} << 20);
  for (int w = 0; w < 400 && in.stats().text_bytes.load() < text.size(); ++w)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(in.stats().text_bytes.load(), text.size()) << "the whole file read ahead";
  in.end_read_ahead();
  EXPECT_TRUE(drain(in) == text);
}

TEST(BarracudaPipeline, EveryRecordCutIsAnError) {
  TempDir dir;
  const std::string head = "@r1 c\nACGTACGTAA\n+\nIIIIIIIIII\n";
  const std::string last = "@r2\r\nACGTAC\r\nGT\r\n+\r\nIIIII\r\nIII\r\n";
  for (std::size_t cut = 0; cut <= last.size(); ++cut) {
    bct::write_file(dir / "cut.fq", head + last.substr(0, cut));
    const std::string e = error_of([&] { read_streaming(dir / "cut.fq", 5, 0); });
    const bool whole = cut == 0 || cut >= last.size() - 2;  // nothing of r2, or all but its final line end
    if (whole) {
      EXPECT_EQ(e, "") << "cut " << cut;
    } else {
      EXPECT_NE(e.find("cut.fq: record 2"), std::string::npos) << "cut " << cut << ": " << e;
      EXPECT_NE(e.find("truncated"), std::string::npos) << "cut " << cut << ": " << e;
    }
  }
  // a quality of another length inside the file, a '@' record without '+', too long a read
  bct::write_file(dir / "q.fq", "@a\nACGT\n+\nIII\n@b\nACGT\n+\nIIII\n");
  EXPECT_NE(error_of([&] { read_streaming(dir / "q.fq", 4096, 0); }).find("record 1 (a): quality length differs"), std::string::npos);
  bct::write_file(dir / "p.fq", "@a\nACGT\n@b\nACGT\n+\nIIII\n");
  EXPECT_NE(error_of([&] { read_streaming(dir / "p.fq", 4096, 0); }).find("record 1 (a): no '+' line and qualities (truncated FASTQ?)"),
            std::string::npos);
  bct::write_file(dir / "l.fq", "@long\n" + std::string(1025, 'A') + "\n+\n" + std::string(1025, 'I') + "\n");
  EXPECT_NE(error_of([&] { read_streaming(dir / "l.fq", 100, 0); }).find("read long has 1025 bases; at most 1024"),
            std::string::npos);
}

TEST(BarracudaPipeline, CompressedTruncationAndDamageAreErrors) {
  TempDir dir;
  std::mt19937_64 rng(4);
  const std::string text = bct::varied_reads(bct::random_dna(rng, 20000), 4000, 9);
  const std::string gz = bct::gzip_text(dir, text);
  ASSERT_TRUE(bct::write_bgzf(dir / "b.gz", text));
  const std::string bgzf = bct::read_file(dir / "b.gz");
  ASSERT_GT(bgzf.size(), 3 * 65536u / 4);
  auto check = [&](const std::string& bytes, const std::string& what, bool serial_too) {
    bct::write_file(dir / "bad.fq.gz", bytes);
    const std::string e = error_of([&] { read_streaming(dir / "bad.fq.gz", std::size_t(1) << 16, 2); });
    EXPECT_NE(e.find("bad.fq.gz: "), std::string::npos) << what << ": " << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
    if (serial_too) {
      EXPECT_NE(error_of([&] { read_serial(dir / "bad.fq.gz"); }), "") << what;
    }
  };
  for (double f : {0.1, 0.5, 0.9}) check(gz.substr(0, static_cast<std::size_t>(f * static_cast<double>(gz.size()))), "truncated compressed data (gzip)", true);
  for (std::size_t k : {1, 4, 8}) check(gz.substr(0, gz.size() - k), "truncated compressed data (gzip)", false);  // the trailer
  std::string flipped = gz;
  flipped[gz.size() / 2] = static_cast<char>(flipped[gz.size() / 2] ^ 0x55);
  // a flipped byte inside a deflate stream: either inflation fails, or it yields other text, whose
  // first broken record may come before the member's CRC-32 is checked (errors come in file order)
  {
    bct::write_file(dir / "bad.fq.gz", flipped);
    const std::string e = error_of([&] { read_streaming(dir / "bad.fq.gz", std::size_t(1) << 16, 2); });
    EXPECT_TRUE(e.find("bad.fq.gz: damaged compressed data (gzip") != std::string::npos ||
                e.find("bad.fq.gz: record ") != std::string::npos)
        << e;
    EXPECT_NE(error_of([&] { read_serial(dir / "bad.fq.gz"); }), "");
  }
  check(gz + "trailing", "trailing garbage", true);
  // BGZF: inside a block, at a block boundary (no end-of-file block), a flipped byte
  check(bgzf.substr(0, bgzf.size() / 2), "truncated compressed data (BGZF)", false);
  check(bgzf.substr(0, bgzf.size() - 28), "end-of-file block is missing", false);
  std::string bflip = bgzf;
  bflip[bgzf.size() / 3] = static_cast<char>(bflip[bgzf.size() / 3] ^ 0x55);
  check(bflip, "damaged compressed data (BGZF)", true);
}

// Byte-identical output: every test file, SAM/BAM/uncompressed BAM and the unmatched FASTQ.gz,
// 1 and 2 threads, small batches (many batches in flight, out of order through the lanes).
TEST(BarracudaPipeline, OutputIsByteIdenticalToTheSerialPath) {
  RefFixture fx(31);
  const TempDir& dir = fx.dir;
  const std::string text = bct::varied_reads(fx.fwd, 6000, 13);
  std::vector<fs::path> inputs = {dir / "v.fq", dir / "v.fq.gz", dir / "mm.fq.gz", dir / "v.bgzf.gz"};
  bct::write_file(inputs[0], text);
  bct::write_file(inputs[1], bct::gzip_text(dir, text));
  bct::write_file(inputs[2], bct::multi_member_gzip(dir, text, 17));
  ASSERT_TRUE(bct::write_bgzf(inputs[3], text));
  const Outputs sam_ref = map_files(fx.ref, inputs[0], dir, "ref.sam", true, 1, 1000);
  const Outputs bam_ref = map_files(fx.ref, inputs[0], dir, "ref.bam", true, 1, 1000);
  const Outputs ubam_ref = map_files(fx.ref, inputs[0], dir, "ref.bam", true, 1, 1000, true, true);
  ASSERT_GT(sam_ref.main.size(), 100000u);
  ASSERT_GT(sam_ref.unmatched.size(), 1000u);
  EXPECT_NE(bam_ref.main, ubam_ref.main);
  for (const auto& in : inputs) {
    // the serial path itself agrees across input forms
    EXPECT_EQ(map_files(fx.ref, in, dir, "s.sam", true, 1, 1000).main, sam_ref.main) << in;
    for (int threads : {1, 2})
      for (std::size_t batch : {std::size_t(333), std::size_t(1) << 16}) {
        const auto sam = map_files(fx.ref, in, dir, "p.sam", false, threads, batch);
        EXPECT_TRUE(sam.main == sam_ref.main) << in << " SAM, " << threads << " threads, batch " << batch;
        EXPECT_TRUE(sam.unmatched == sam_ref.unmatched) << in << " unmatched, " << threads << " threads";
        EXPECT_TRUE(map_files(fx.ref, in, dir, "p.bam", false, threads, batch, false).main == bam_ref.main)
            << in << " BAM, " << threads << " threads, batch " << batch;
      }
    EXPECT_TRUE(map_files(fx.ref, in, dir, "p.bam", false, 2, 500, false, true).main == ubam_ref.main) << in << " -u";
  }
}

TEST(BarracudaPipeline, OutputIsByteIdenticalOnTheProjectReads) {
  const fs::path data = evk::testing::project_data_dir();
  const fs::path lambda = data / "genomes" / "lambda_virus.fa.gz", lreads = data / "reads" / "lambda_reads_1.fq.gz";
  const fs::path ce = data / "genomes" / "ce.fa", ce_sam = data / "reads" / "ce#1000.sam";
  if (!fs::exists(lambda) || !fs::exists(lreads)) GTEST_SKIP() << "no lambda data";
  TempDir dir;
  ASSERT_EQ(evk::testing::run("gzip -dc " + lambda.string() + " > " + (dir / "lambda.fa").string()).exit_code, 0);
  bc::write_index(bc::build_index(bc::read_reference((dir / "lambda.fa").string())), (dir / "lambda.fa").string());
  std::vector<std::pair<std::string, fs::path>> cases = {{(dir / "lambda.fa").string(), lreads}};
  if (fs::exists(ce) && fs::exists(ce_sam) && bct::have("samtools")) {
    fs::copy_file(ce, dir / "ce.fa");
    bc::write_index(bc::build_index(bc::read_reference((dir / "ce.fa").string())), (dir / "ce.fa").string());
    ASSERT_EQ(evk::testing::run("samtools fastq " + ce_sam.string() + " 2>/dev/null | gzip -c > " + (dir / "ce.fq.gz").string()).exit_code, 0);
    cases.push_back({(dir / "ce.fa").string(), dir / "ce.fq.gz"});
  }
  for (const auto& [ref, reads] : cases) {
    const Outputs want = map_files(ref, reads, dir, "s.sam", true, 1, 1000);
    ASSERT_GT(want.main.size(), 10000u) << reads;
    for (int threads : {1, 2}) {
      const Outputs got = map_files(ref, reads, dir, "p.sam", false, threads, 500);
      EXPECT_TRUE(got.main == want.main) << reads << ", " << threads << " threads";
      EXPECT_TRUE(got.unmatched == want.unmatched) << reads << ", " << threads << " threads";
    }
    EXPECT_TRUE(map_files(ref, reads, dir, "p.bam", false, 2, 4096, false).main ==
                map_files(ref, reads, dir, "s.bam", true, 1, 1000, false).main) << reads;
  }
}

// Memory does not grow with the input: the CLI's peak RSS on a file 4x larger (and 300x larger
// than the batch) stays within a few MiB, far below what holding the extra reads would take.
// Random reads: mapping costs little, the stream is what is measured.
TEST(BarracudaPipeline, MemoryStaysBoundedWhateverTheFileSize) {
  RefFixture fx(41);
  std::mt19937_64 rng(5);
  auto write_reads = [&](const fs::path& p, std::size_t n) {
    std::string s;
    s.reserve(n * 230);
    for (std::size_t i = 0; i < n; ++i)
      s += "@read" + std::to_string(i) + "\n" + bct::random_dna(rng, 100) + "\n+\n" + std::string(100, 'F') + "\n";
    bct::write_file(p, s);
    return s.size();
  };
  const std::size_t small_bytes = write_reads(fx.dir / "small.fq", 150000);
  const std::size_t big_bytes = write_reads(fx.dir / "big.fq", 600000);
  auto peak = [&](const std::string& f, std::uint64_t n) {
    auto r = evk::testing::run_tool("barracuda_exact", "map --exact --backend cpu -t 2 --batch-reads 2000 --json " + fx.ref + " " +
                                                           (fx.dir / f).string() + " -o " + (fx.dir / "o.sam").string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["reads"].get<std::uint64_t>(), n);
    EXPECT_EQ(j.at("mode"), "exact");
    EXPECT_EQ(j.at("backend"), "cpu");
    EXPECT_EQ(j.at("input_format"), "plain");
    EXPECT_EQ(j.at("threads").get<int>(), 2);
    EXPECT_EQ(j.at("batches_in_flight_max").get<int>(), j.at("lanes").get<int>() + 6);
    EXPECT_EQ(j.at("input_bytes").get<std::uint64_t>(), fs::file_size(fx.dir / f));
    EXPECT_GT(j.at("cpu_seconds").get<double>(), 0);
    return j["peak_rss_mib"].get<double>();
  };
  const double small = peak("small.fq", 150000), big = peak("big.fq", 600000);
  const double extra_mib = static_cast<double>(big_bytes - small_bytes) / (1 << 20);
  EXPECT_GT(extra_mib, 90);
  EXPECT_LT(big, small + 12) << "small " << small << " MiB, big " << big << " MiB; the extra reads are " << extra_mib << " MiB";
}

// resolve_hit with the text positions precomputed (as the GPU's sa_lookup hands them over) equals
// resolve_hit looking them up itself, on unique hits, 2-4 hits (XA) and more, bridging ones included.
TEST(BarracudaPipeline, ResolveHitWithGivenPositionsEqualsTheLookup) {
  const auto ref = bct::tricky_reference(61);
  const bc::BwtIndex idx = bc::build_index(ref);
  const std::string fwd = bct::forward_text(idx);
  std::mt19937_64 rng(2);
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    switch (i % 4) {
      case 0: s = fwd.substr(1000 + rng() % 60, 30 + rng() % 60); break;   // 4 copies
      case 1: s = fwd.substr(12000 + rng() % 40, 20 + rng() % 70); break;  // 7 copies
      case 2: s = fwd.substr(20000 - 50, 100); break;                       // across chrA | chrB
      default: s = fwd.substr(rng() % (fwd.size() - 100), 20 + rng() % 80);
    }
    if (i % 8 == 3) s = bct::revcomp(s);
    bc::ReadCodes rc;
    rc.add(s.data(), s.size());
    const bc::KL kl = bc::match_exact(idx, rc.codes.data(), rc.len[0]);
    if (!kl.hit()) continue;
    std::uint64_t sa[bc::kSaRowsPerHit] = {~0ull, ~0ull, ~0ull, ~0ull};
    const std::uint64_t rows = kl.count() <= bc::kSaRowsPerHit ? kl.count() : 1;
    for (std::uint64_t j = 0; j < rows; ++j) sa[j] = idx.sa_at(kl.k + j);
    const bc::Hit a = bc::resolve_hit(idx, kl, rc.len[0]), b = bc::resolve_hit(idx, kl, rc.len[0], sa);
    ASSERT_EQ(a.count, b.count);
    ASSERT_TRUE(a.primary == b.primary) << s;
    ASSERT_EQ(a.bridging, b.bridging);
    ASSERT_EQ(a.n_ambiguous, b.n_ambiguous);
    ASSERT_TRUE(a.alts == b.alts) << s;
    ++counts[kl.count() == 1 ? 0 : kl.count() <= 4 ? 1 : 2];
  }
  EXPECT_GT(counts[0], 1000);
  EXPECT_GT(counts[1], 1000);
  EXPECT_GT(counts[2], 1000);
}

// The CLI on cut inputs and bad pipeline options: exit 2, one line naming the file or option, no
// output left behind (with --unmatched too).
TEST(BarracudaPipeline, CliRefusesCutInputsAndBadOptionsWithOneLine) {
  RefFixture fx(81);
  const TempDir& dir = fx.dir;
  std::string good;
  for (int i = 0; i < 3000; ++i)
    good += "@r" + std::to_string(i) + "\n" + fx.fwd.substr(static_cast<std::size_t>(i) * 7, 90) + "\n+\n" + std::string(90, 'I') + "\n";
  auto expect_refused = [&](const std::string& args, const std::string& mention) {
    const auto r = evk::testing::run_tool("barracuda_exact", args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(mention), std::string::npos) << "expected '" << mention << "' in: " << r.err;
    EXPECT_FALSE(fs::exists(dir / "o.bam"));
    EXPECT_FALSE(fs::exists(dir / "un.fq.gz"));
    EXPECT_EQ(bct::temp_files_in(dir.path()), 0);
  };
  const std::string map = "map --exact --backend cpu " + fx.ref + " ";
  const std::string outs = " -o " + (dir / "o.bam").string() + " --unmatched " + (dir / "un.fq.gz").string();
  // a record cut after its sequence line (plain, gzip, BGZF)
  const std::string cut = good + "@last\nACGTACGT\n";
  bct::write_file(dir / "cut.fq", cut);
  bct::write_file(dir / "cut.fq.gz", bct::gzip_text(dir, cut));
  ASSERT_TRUE(bct::write_bgzf(dir / "cut.bgzf.gz", cut));
  for (const char* f : {"cut.fq", "cut.fq.gz", "cut.bgzf.gz"})
    expect_refused(map + (dir / f).string() + outs, std::string(f) + ": record 3001 (last): no '+' line and qualities (truncated FASTQ?)");
  // a BGZF file cut at a block boundary (its end-of-file block missing)
  ASSERT_TRUE(bct::write_bgzf(dir / "g.gz", good));
  const std::string bgzf = bct::read_file(dir / "g.gz");
  bct::write_file(dir / "noeof.gz", bgzf.substr(0, bgzf.size() - 28));
  expect_refused(map + (dir / "noeof.gz").string() + outs, "noeof.gz: truncated compressed data (BGZF): the end-of-file block is missing");
  // options
  expect_refused(map + (dir / "g.gz").string() + " -u -o " + (dir / "o.sam").string(), "must end in .bam");
  expect_refused(map + (dir / "g.gz").string() + outs + " --devices 0,x", "--devices");
  expect_refused(map + (dir / "g.gz").string() + outs + " --devices 1,1", "--devices: device 1 given twice");
  if (!evk::gpu_environment().usable())
    expect_refused("map --exact --backend gpu --devices all " + fx.ref + " " + (dir / "g.gz").string() + outs, evk::gpu_environment().status);
  // pairs stream through the pipeline too (map/map_run.cpp): a cut second file is refused with its
  // options, and intact pairs map with them (-u to stdout: every record)
  const std::string pairs = "map --backend cpu " + fx.ref + " " + (dir / "g.gz").string() + " ";
  for (const char* opt : {" -u", " -l 1", " --streams 3", " --batch-reads 100"})
    expect_refused(pairs + (dir / "cut.fq").string() + " -o " + (dir / "o.bam").string() + opt,
                   "cut.fq: record 3001 (last): no '+' line and qualities (truncated FASTQ?)");
  bct::write_file(dir / "g2.fq", good);
  {
    const auto p = evk::testing::run_tool("barracuda_exact", pairs + (dir / "g2.fq").string() +
                                                                 " -l 1 --batch-reads 100 -u -o - | samtools view -c -");
    EXPECT_EQ(p.exit_code, 0) << p.err;
    EXPECT_EQ(p.out, "6000\n");
  }
  expect_refused(map + (dir / "g.gz").string() + " -R 'RG\\tID:x' -o " + (dir / "o.bam").string(), "-R");
  // -R in the exact mode: the header line and RG:Z on every record (as bwa samse -r)
  {
    const auto rg = evk::testing::run_tool("barracuda_exact", map + (dir / "g.gz").string() + " -R '@RG\\tID:g1\\tSM:s1' -o -");
    ASSERT_EQ(rg.exit_code, 0) << rg.err;
    EXPECT_NE(rg.out.find("\n@RG\tID:g1\tSM:s1\n"), std::string::npos);
    const auto recs = bct::sam_records(rg.out);
    ASSERT_EQ(recs.size(), 3000u);
    for (const auto& r : recs) ASSERT_TRUE(r.size() > 11 && r[11] == "RG:Z:g1") << r[0];  // right after the core fields
  }
  // and the intact file maps, -u writing BAM to stdout
  const auto r = evk::testing::run_tool("barracuda_exact", map + (dir / "g.gz").string() + " -u -o - | samtools view -c -");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}
