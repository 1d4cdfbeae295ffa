// The barracuda_exact bad-input catalogue (docs/ROBUSTNESS.md): every case through the real
// executable, so it holds for any reader behind the CLI. Rejected: exit 2, one stderr line naming
// the file and the problem, nothing left in the directory. Accepted: the SAM records are those of
// the plain, well-formed input.
#include <gtest/gtest.h>

#include <csignal>
#include <random>

#include "catalogue.hpp"
#include "gi/gi_problem.hpp"
#include "gi_rundir_catalogue.hpp"
#include "evk_testing.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using evk::testing::catalogue::expect_rejected;
using evk::testing::catalogue::files_in;
using evk::testing::catalogue::q;
using evk::testing::catalogue::Recorder;
using evk::testing::catalogue::slurp;
using evk::testing::catalogue::spit;

namespace {

constexpr const char* kTool = "barracuda_exact";

// A small indexed reference (two contigs, one with an N run so that .amb has a line) and 200 reads
// as reads.fq; returns the reads text.
std::string setup(const fs::path& dir, std::uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::string c1 = bct::random_dna(rng, 5000), c2 = bct::random_dna(rng, 3000);
  c2.replace(1000, 30, std::string(30, 'N'));
  bct::write_fasta(dir / "ref.fa", {{"c1", "", c1}, {"c2", "second", c2}});
  auto r = evk::testing::run_tool(kTool, "index " + q(dir / "ref.fa"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string fq;
  for (int i = 0; i < 200; ++i) {
    const std::string s = (i % 2 ? c1 : c2).substr(static_cast<std::size_t>(i) * 13, 100);
    std::string qual(100, 'I');
    qual[static_cast<std::size_t>(i) % 100] = '#';
    fq += "@r" + std::to_string(i) + " comment\n" + s + "\n+\n" + qual + "\n";
  }
  spit(dir / "reads.fq", fq);
  return fq;
}

// `map` in the exact mode (with --unmatched) or the default inexact mode: the same driver, different
// mappers; every reader refuses with the same messages (io/read_rules.hpp).
std::string map_args(const fs::path& dir, const std::string& reads, const std::string& out = "o.sam", bool exact = true) {
  return "map --backend cpu " + q(dir / "ref.fa") + " " + reads + " -o " + q(dir / out) +
         (exact ? " --exact --unmatched " + q(dir / "un.fq.gz") : std::string());
}

// The SAM records (header lines dropped: @PG holds the command line).
std::string records(const fs::path& sam) {
  std::string out, line;
  std::istringstream in(slurp(sam));
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '@') out += line + "\n";
  return out;
}

// Runs `map` on reads, expects a rejection mentioning the file name and `problem`.
// Both modes.
void expect_map_rejects(Recorder& rec, const fs::path& dir, const std::string& reads_name, const std::string& problem) {
  for (bool exact : {true, false}) {
    SCOPED_TRACE(exact ? "--exact" : "inexact");
    const auto before = files_in(dir);
    const auto& r = rec.tool(map_args(dir, q(dir / reads_name), "o.sam", exact));
    expect_rejected(r, {reads_name, problem}, dir, before);
  }
}

// The reads with the last record cut: `keep` bytes of the last record are kept.
std::string cut_last_record(const std::string& fq, std::size_t keep) {
  const std::size_t last = fq.rfind("\n@") + 1;
  return fq.substr(0, last + keep);
}

std::string gzip(const fs::path& dir, const std::string& name) {
  EXPECT_EQ(evk::testing::run("gzip -kf " + q(dir / name)).exit_code, 0);
  return name + ".gz";
}

// Accepted input: exit 0 and the same SAM records as reads.fq, in both modes.
void expect_same_mapping(Recorder& rec, const fs::path& dir, const std::string& reads_arg) {
  for (bool exact : {true, false}) {
    SCOPED_TRACE(exact ? "--exact" : "inexact");
    auto ok = evk::testing::run_tool(kTool, map_args(dir, q(dir / "reads.fq"), "want.sam", exact));
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    const auto& r = rec.tool(map_args(dir, reads_arg, "got.sam", exact));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(records(dir / "got.sam"), records(dir / "want.sam"));
    EXPECT_FALSE(records(dir / "got.sam").empty());
    EXPECT_EQ(bct::temp_files_in(dir), 0);
  }
}

}  // namespace

#define CASE(id, category, input, expect) \
  EVK_CATALOGUE_CASE(BarracudaCatalogue, id, kTool, category, input, expect)

// ---- truncation ---------------------------------------------------------------------------------

CASE(T01_FastqCutAfterSequenceLine, "truncation", "FASTQ whose last record stops after its sequence line",
     "reject") {
  const std::string fq = setup(dir);
  spit(dir / "cut.fq", cut_last_record(fq, 14 + 101));  // "@r199 comment\n", 100 bases, "\n"
  ASSERT_EQ(slurp(dir / "cut.fq").back(), '\n');
  expect_map_rejects(rec, dir, "cut.fq", "record 200");
}

CASE(T02_FastqGzCutAfterSequenceLine, "truncation",
     "complete gzip stream of a FASTQ cut after the last sequence line (issue 11)", "reject") {
  const std::string fq = setup(dir);
  const std::string last = fq.substr(fq.rfind("\n@") + 1);
  spit(dir / "cut.fq", fq.substr(0, fq.size() - last.size()) + last.substr(0, last.find('\n', last.find('\n') + 1) + 1));
  const std::string gz = gzip(dir, "cut.fq");
  fs::remove(dir / "cut.fq");
  expect_map_rejects(rec, dir, gz, "no '+' line");
}

CASE(T03_FastqCutAfterPlusLine, "truncation", "FASTQ cut after the last '+' line", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "cut.fq", fq.substr(0, fq.rfind("\n+\n") + 3));
  expect_map_rejects(rec, dir, "cut.fq", "quality length");
}

CASE(T04_FastqShortLastQuality, "truncation", "FASTQ whose last quality line is cut short (with its newline)",
     "reject") {
  const std::string fq = setup(dir);
  spit(dir / "cut.fq", fq.substr(0, fq.size() - 31) + "\n");
  expect_map_rejects(rec, dir, "cut.fq", "truncated?");
}

CASE(T05_FastqHeaderOnly, "truncation", "FASTQ ending in a header line alone", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "cut.fq", fq + "@r200 comment\n");
  expect_map_rejects(rec, dir, "cut.fq", "record 201");
}

CASE(T06_FastqLoneAt, "truncation", "FASTQ ending in a lone '@'", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "cut.fq", fq + "@");
  expect_map_rejects(rec, dir, "cut.fq", "header line without a name");
}

CASE(T07_GzipStreamCutMidMember, "truncation", "FASTQ.gz whose gzip stream is cut in the middle", "reject") {
  std::string fq = setup(dir), many;
  for (int i = 0; i < 50; ++i) many += fq;
  spit(dir / "many.fq", many);
  gzip(dir, "many.fq");
  const std::string gz = slurp(dir / "many.fq.gz");
  spit(dir / "cut.fq.gz", gz.substr(0, gz.size() / 2));
  fs::remove(dir / "many.fq");
  fs::remove(dir / "many.fq.gz");
  expect_map_rejects(rec, dir, "cut.fq.gz", "truncated compressed data");
}

CASE(T08_GzipTrailerMissing, "truncation", "FASTQ.gz without its 8-byte gzip trailer (CRC, length)", "reject") {
  setup(dir);
  gzip(dir, "reads.fq");
  const std::string gz = slurp(dir / "reads.fq.gz");
  spit(dir / "cut.fq.gz", gz.substr(0, gz.size() - 8));
  fs::remove(dir / "reads.fq.gz");
  expect_map_rejects(rec, dir, "cut.fq.gz", "truncated compressed data");
}

CASE(T09_GzipHeaderOnly, "truncation", "FASTQ.gz cut inside the gzip header (5 bytes)", "reject") {
  setup(dir);
  gzip(dir, "reads.fq");
  spit(dir / "cut.fq.gz", slurp(dir / "reads.fq.gz").substr(0, 5));
  fs::remove(dir / "reads.fq.gz");
  expect_map_rejects(rec, dir, "cut.fq.gz", "gzip header");
}

CASE(T10_FastqNoFinalNewline, "truncation", "FASTQ without the final newline (complete last record)",
     "accept: same SAM") {
  const std::string fq = setup(dir);
  spit(dir / "nonl.fq", fq.substr(0, fq.size() - 1));
  expect_same_mapping(rec, dir, q(dir / "nonl.fq"));
}

CASE(T11_FastaReadsHeaderOnly, "truncation", "FASTA reads ending in a header line without bases", "reject") {
  setup(dir);
  spit(dir / "cut.fa", ">r1\nACGTACGTAC\n>r2\n");
  expect_map_rejects(rec, dir, "cut.fa", "no bases");
}

CASE(T12_ReferenceHeaderOnly, "truncation", "reference FASTA ending in a contig header without bases", "reject") {
  spit(dir / "ref.fa", ">c1\nACGTACGTACGTAAAC\n>c2\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool("index " + q(dir / "ref.fa")), {"ref.fa", "no bases"}, dir, before);
}

CASE(T13_ReferenceGzipCut, "truncation", "reference .fa.gz cut in the middle of the gzip stream", "reject") {
  std::mt19937_64 rng(5);
  spit(dir / "big.fa", ">c\n" + bct::random_dna(rng, 200000) + "\n");
  gzip(dir, "big.fa");
  spit(dir / "cut.fa.gz", slurp(dir / "big.fa.gz").substr(0, 30000));
  fs::remove(dir / "big.fa");
  fs::remove(dir / "big.fa.gz");
  const auto before = files_in(dir);
  expect_rejected(rec.tool("index " + q(dir / "cut.fa.gz")), {"cut.fa.gz", "truncated compressed data"}, dir, before);
}

namespace {
// map with one index file damaged by `damage`; the message must name that file and `problem`.
void index_file_case(Recorder& rec, const fs::path& dir, const std::string& ext, const std::string& problem,
                     const std::function<void(const fs::path&)>& damage) {
  setup(dir);
  damage(dir / ("ref.fa" + ext));
  const auto before = files_in(dir);
  expect_rejected(rec.tool(map_args(dir, q(dir / "reads.fq"))), {"ref.fa" + ext, problem}, dir, before);
}
void cut_by(const fs::path& p, std::uintmax_t n) { fs::resize_file(p, fs::file_size(p) - n); }
std::string drop_last_line(const std::string& s) { return s.substr(0, s.rfind('\n', s.size() - 2) + 1); }
}  // namespace

CASE(T14_BwtCut, "truncation", "index .bwt cut by 8 bytes", "reject") {
  index_file_case(rec, dir, ".bwt", "truncated", [](const fs::path& p) { cut_by(p, 8); });
}
CASE(T15_SaCut, "truncation", "index .sa cut by 8 bytes", "reject") {
  index_file_case(rec, dir, ".sa", "truncated", [](const fs::path& p) { cut_by(p, 8); });
}
CASE(T16_PacCut, "truncation", "index .pac cut by 1 byte", "reject") {
  index_file_case(rec, dir, ".pac", "truncated", [](const fs::path& p) { cut_by(p, 1); });
}
CASE(T17_AnnCut, "truncation", "index .ann without its last line", "reject") {
  index_file_case(rec, dir, ".ann", "truncated",
                  [](const fs::path& p) { spit(p, drop_last_line(slurp(p))); });
}
CASE(T18_AmbCut, "truncation", "index .amb without its last line (an N run)", "reject") {
  index_file_case(rec, dir, ".amb", "truncated", [](const fs::path& p) { spit(p, drop_last_line(slurp(p))); });
}
CASE(T19_IndexFileMissing, "truncation", "index .sa missing", "reject") {
  index_file_case(rec, dir, ".sa", "cannot open", [](const fs::path& p) { fs::remove(p); });
}

CASE(T20_GenomeCutBetweenGenes, "truncation", "--kernel genome file (with its '# genes:' header) cut between two genes",
     "reject") {
  setup(dir);
  spit(dir / "cut.genome", "# evokernels genome v1\n# kernel: barracuda_exact\n# cc: 9.0\n# genes: 2\nnvrtc:ptxas-O=2\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool(map_args(dir, q(dir / "reads.fq")) + " --kernel " + q(dir / "cut.genome")),
                  {"cut.genome", "truncated or edited"}, dir, before);
}

// ---- wrong but well-formed ----------------------------------------------------------------------

namespace {
// The index file `ext` replaced by that of another reference of the same length.
void other_reference_case(Recorder& rec, const fs::path& dir, const std::string& ext) {
  fs::create_directories(dir / "other");
  setup(dir / "other", 77);
  setup(dir);
  fs::copy_file(dir / "other" / ("ref.fa" + ext), dir / ("ref.fa" + ext), fs::copy_options::overwrite_existing);
  fs::remove_all(dir / "other");
  const auto before = files_in(dir);
  expect_rejected(rec.tool(map_args(dir, q(dir / "reads.fq"))), {"ref.fa", "different references"}, dir, before);
}
}  // namespace

CASE(W01_SaOfAnotherReference, "wrong input", "index .sa of another reference of the same length", "reject") {
  other_reference_case(rec, dir, ".sa");
}
CASE(W02_PacOfAnotherReference, "wrong input", "index .pac of another reference of the same length", "reject") {
  other_reference_case(rec, dir, ".pac");
}
CASE(W03_BwtOfAnotherReference, "wrong input", "index .bwt of another reference of the same length", "reject") {
  other_reference_case(rec, dir, ".bwt");
}
CASE(W04_BwtCountsCorrupt, "wrong input", "index .bwt with one occurrence count changed (size and header intact)",
     "reject") {
  index_file_case(rec, dir, ".bwt", "occurrence counts", [](const fs::path& p) {
    std::string b = slurp(p);
    b[40 + 16 * 4 * 3] ^= 1;  // block 3's count of A
    spit(p, b);
  });
}
CASE(W05_SamAsReads, "wrong input", "a SAM file given as reads", "reject") {
  setup(dir);
  spit(dir / "reads.sam", "@HD\tVN:1.6\n@SQ\tSN:c1\tLN:5000\nr1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII\n");
  expect_map_rejects(rec, dir, "reads.sam", "no '+' line");
}
CASE(W06_BamAsReads, "wrong input", "a BAM file given as reads", "reject") {
  setup(dir);
  ASSERT_EQ(evk::testing::run_tool(kTool, "map --backend cpu " + q(dir / "ref.fa") + " " + q(dir / "reads.fq") +
                                              " -o " + q(dir / "in.bam"))
                .exit_code,
            0);
  expect_map_rejects(rec, dir, "in.bam", "not a FASTA or FASTQ file");
}
CASE(W07_ReferenceAsReads, "wrong input", "the reference FASTA (5 kb contigs) given as reads", "reject") {
  setup(dir);
  expect_map_rejects(rec, dir, "ref.fa", "at most 1024");
}
CASE(W08_FastqAsReference, "wrong input", "a FASTQ file given to index as the reference", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("index " + q(dir / "reads.fq")), {"reads.fq", "is FASTQ"}, dir, before);
}
CASE(W09_MixedFastaFastq, "wrong input", "FASTQ records followed by a FASTA record", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "mixed.fq", fq + ">r200\nACGTACGTACGT\n");
  expect_map_rejects(rec, dir, "mixed.fq", "a FASTA record in a FASTQ file");
}
CASE(W10_TextBetweenRecords, "wrong input", "a stray text line between FASTQ records", "reject") {
  const std::string fq = setup(dir);
  const std::size_t second = fq.find("\n@", 1) + 1;
  spit(dir / "junk.fq", fq.substr(0, second) + "stray text\n" + fq.substr(second));
  expect_map_rejects(rec, dir, "junk.fq", "unexpected text after record 1");
}
CASE(W11_EmptyReads, "wrong input", "an empty reads file", "reject") {
  setup(dir);
  spit(dir / "empty.fq", "");
  expect_map_rejects(rec, dir, "empty.fq", "no reads");
}
CASE(W12_OutputExtension, "wrong input", "output named .txt (neither .sam nor .bam)", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool(map_args(dir, q(dir / "reads.fq"), "o.txt")), {"o.txt", ".sam or .bam"}, dir, before);
}
CASE(W13_PlusLineInFastaReference, "wrong input", "a '+' line inside a FASTA reference", "reject") {
  spit(dir / "ref.fa", ">c1\nACGTACGTAC\n+\nIIIIIIIIII\n");
  const auto before = files_in(dir);
  expect_rejected(rec.tool("index " + q(dir / "ref.fa")), {"ref.fa", "quality line in a FASTA file"}, dir, before);
}

// ---- hostile values -----------------------------------------------------------------------------

CASE(H01_QualityTooLong, "hostile value", "quality line longer than the sequence", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "q.fq", fq + "@x\nACGTACGT\n+\nIIIIIIIIII\n");
  expect_map_rejects(rec, dir, "q.fq", "quality length differs");
}
CASE(H02_QualityOutOfRange, "hostile value", "quality characters below '!' (a space)", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "q.fq", fq + "@x\nACGTACGT\n+\nIIII III\n");
  expect_map_rejects(rec, dir, "q.fq", "quality character 0x20");
}
CASE(H03_NonBaseCharacters, "hostile value", "digits in a read sequence", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "d.fq", fq + "@x\nACGT1234\n+\nIIIIIIII\n");
  expect_map_rejects(rec, dir, "d.fq", "is not a base");
}
CASE(H04_HundredMegabyteLine, "hostile value", "a 100 MB sequence line", "reject") {
  setup(dir);
  {
    std::ofstream o(dir / "long.fq", std::ios::binary);
    o << "@long\n" << std::string(100u << 20, 'A') << "\n+\nIIII\n";
  }
  expect_map_rejects(rec, dir, "long.fq", "104857600 bases");
  fs::remove(dir / "long.fq");
}
CASE(H05_LongName, "hostile value", "a read name of 300 characters (SAM allows 254)", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "n.fq", fq + "@" + std::string(300, 'n') + "\nACGT\n+\nIIII\n");
  expect_map_rejects(rec, dir, "n.fq", "at most 254");
}
CASE(H06_EmptyName, "hostile value", "a record with an empty name ('@' then a space)", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "n.fq", fq + "@ x\nACGT\n+\nIIII\n");
  expect_map_rejects(rec, dir, "n.fq", "empty name");
}
CASE(H07_NulBytes, "hostile value", "NUL bytes inside a sequence line", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "z.fq", fq + "@x\nAC" + std::string(2, '\0') + "GT\n+\nIIIIII\n");
  expect_map_rejects(rec, dir, "z.fq", "0x00");
}
CASE(H08_CrlfLineEnds, "hostile value", "FASTQ with CRLF line ends", "accept: same SAM") {
  const std::string fq = setup(dir);
  std::string crlf;
  for (char c : fq) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  spit(dir / "crlf.fq", crlf);
  expect_same_mapping(rec, dir, q(dir / "crlf.fq"));
}
CASE(H09_LowercaseBases, "hostile value", "FASTQ with lowercase bases", "accept: same SAM") {
  const std::string fq = setup(dir);
  std::istringstream in(fq);
  std::string out, line;
  for (int i = 0; std::getline(in, line); ++i) {
    if (i % 4 == 1)
      for (auto& c : line) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += line + "\n";
  }
  spit(dir / "lower.fq", out);
  expect_same_mapping(rec, dir, q(dir / "lower.fq"));
}
CASE(H10_LowercaseReference, "hostile value", "reference FASTA in lowercase with CRLF line ends",
     "accept: same index") {
  setup(dir);
  std::string fa = slurp(dir / "ref.fa"), low;
  bool header = false;
  for (char c : fa) {
    if (c == '>') header = true;
    if (c == '\n') {
      low += "\r\n";
      header = false;
    } else {
      low += header || c == 'N' ? c : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  fs::create_directories(dir / "low");
  spit(dir / "low" / "ref.fa", low);
  const auto& r = rec.tool("index " + q(dir / "low" / "ref.fa"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* e : {".bwt", ".sa", ".pac", ".amb", ".ann"})
    EXPECT_EQ(slurp(dir / "low" / ("ref.fa" + std::string(e))), slurp(dir / ("ref.fa" + std::string(e)))) << e;
}
CASE(H11_NonUtf8FileName, "hostile value", "reads under a non-UTF-8 file name (bytes 0xff 0xfe)",
     "accept: same SAM") {
  setup(dir);
  const fs::path odd = dir / std::string("r\xff\xfe.fq");
  fs::copy_file(dir / "reads.fq", odd);
  expect_same_mapping(rec, dir, q(odd));
}
CASE(H12_NewlineInFileName, "hostile value", "a cut FASTQ whose name contains a newline", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "a\nb.fq", fq + "@r200\n");
  const auto before = files_in(dir);
  const auto& r = rec.tool(map_args(dir, q(dir / "a\nb.fq")));
  expect_rejected(r, {"a\\nb.fq", "record 201"}, dir, before);
}
CASE(H13_NegativeThreads, "hostile value", "--threads -1", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool(map_args(dir, q(dir / "reads.fq")) + " -t -1"), {"--threads"}, dir, before);
}

// ---- environment --------------------------------------------------------------------------------

CASE(E01_UnwritableOutputDirectory, "environment", "output in a directory nobody may write (/proc)", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool("map --backend cpu " + q(dir / "ref.fa") + " " + q(dir / "reads.fq") + " -o /proc/o.sam"),
                  {"/proc/o.sam", "cannot write"}, dir, before);
}
CASE(E02_MissingOutputDirectory, "environment", "output in a directory that does not exist", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  expect_rejected(rec.tool(map_args(dir, q(dir / "reads.fq"), "no/such/o.sam")), {"o.sam", "does not exist"}, dir,
                  before);
}
CASE(E03_OutputIsAnInput, "environment", "output path equal to the reads file (reads named x.sam)", "reject") {
  setup(dir);
  fs::copy_file(dir / "reads.fq", dir / "x.sam");
  const std::string keep = slurp(dir / "x.sam");
  const auto before = files_in(dir);
  expect_rejected(rec.tool("map --backend cpu " + q(dir / "ref.fa") + " " + q(dir / "x.sam") + " -o " + q(dir / "x.sam")),
                  {"x.sam", "is also an input"}, dir, before);
  EXPECT_EQ(slurp(dir / "x.sam"), keep) << "the input was changed";
}
CASE(E04_OutputIsADirectory, "environment", "output path is an existing directory named d.sam", "reject") {
  setup(dir);
  fs::create_directories(dir / "d.sam");
  const auto before = files_in(dir);
  expect_rejected(rec.tool(map_args(dir, q(dir / "reads.fq"), "d.sam")), {"d.sam", "is a directory"}, dir, before);
}
CASE(E05_ReadsIsADirectory, "environment", "reads path is a directory", "reject") {
  setup(dir);
  fs::create_directories(dir / "rd");
  expect_map_rejects(rec, dir, "rd", "rd");
}
CASE(E06_StdoutFull, "environment", "SAM to standard output on a full device (/dev/full)", "reject") {
  setup(dir);
  const auto before = files_in(dir);
  const auto& r = rec.run("'" + (evk::testing::bin_dir() / kTool).string() + "' map --backend cpu " + q(dir / "ref.fa") +
                          " " + q(dir / "reads.fq") + " -o - >/dev/full");
  expect_rejected(r, {"standard output", "write failed"}, dir, before);
}
CASE(E07_FileSizeLimit, "environment", "output hits the file size limit (ulimit -f 16: a full disk)", "reject") {
  std::string fq = setup(dir), many;
  for (int i = 0; i < 20; ++i) many += fq;
  spit(dir / "many.fq", many);
  const auto before = files_in(dir);
  const auto& r = rec.run("trap '' XFSZ; ulimit -f 16; '" + (evk::testing::bin_dir() / kTool).string() +
                          "' " + map_args(dir, q(dir / "many.fq")));
  expect_rejected(r, {"o.sam", "write failed"}, dir, before);
}
CASE(E08_FullFileSystem, "environment", "output on a full 64 KiB tmpfs (needs mount permission)", "reject") {
  std::string fq = setup(dir), many;
  for (int i = 0; i < 20; ++i) many += fq;
  spit(dir / "many.fq", many);
  fs::create_directories(dir / "small");
  if (evk::testing::run("mount -t tmpfs -o size=64k tmpfs " + q(dir / "small")).exit_code != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here";
  const auto before = files_in(dir / "small");
  const auto& r = rec.tool("map --backend cpu " + q(dir / "ref.fa") + " " + q(dir / "many.fq") + " -o " +
                           q(dir / "small" / "o.sam"));
  expect_rejected(r, {"o.sam", "write failed"}, dir / "small", before);
  evk::testing::run("umount " + q(dir / "small"));
}
CASE(E09_SigintMidWrite, "environment", "SIGINT while writing SAM from an endless stdin stream",
     "exit 130, nothing left") {
  setup(dir);
  const auto before = files_in(dir);
  // an endless FASTQ on stdin: the run is surely writing when the signal comes
  const std::string cmd = evk::testing::catalogue::interrupt_when(
      "'" + (evk::testing::bin_dir() / kTool).string() + "' map --backend cpu " + q(dir / "ref.fa") + " - -o " +
          q(dir / "o.sam"),
      "ls -a " + q(dir) + " | grep -q '^\\.o\\.sam\\.tmp' && sleep 0.3",
      "yes \"$(printf '@r\\nACGTACGTTTGACCATGACG\\n+\\nIIIIIIIIIIIIIIIIIIII')\"");
  const auto& r = rec.run(cmd);
  EXPECT_NE(r.err.find("exit 130"), std::string::npos) << r.err;
  for (const auto& f : files_in(dir)) EXPECT_TRUE(before.count(f)) << "left behind: " << f;
}
CASE(E10_StdinCut, "environment", "reads on standard input cut after a sequence line", "reject") {
  const std::string fq = setup(dir);
  spit(dir / "cut.fq", cut_last_record(fq, 14 + 101));
  const auto before = files_in(dir);
  const auto& r = rec.run("'" + (evk::testing::bin_dir() / kTool).string() + "' map --backend cpu " + q(dir / "ref.fa") +
                          " - -o " + q(dir / "o.sam") + " < " + q(dir / "cut.fq"));
  expect_rejected(r, {"-:", "no '+' line"}, dir, before);
}

// A damaged GI run directory under `barracuda_exact gi run --resume` and `barracuda_exact gi report` (tests/support/gi_rundir_catalogue.hpp).
EVK_GI_RUNDIR_CASES(BarracudaCatalogue, "barracuda_exact", evk::barracuda_exact::make_gi_problem)

TEST(BarracudaCatalogue, EveryCaseIsInTheDocs) { evk::testing::catalogue::expect_documented(kTool); }
