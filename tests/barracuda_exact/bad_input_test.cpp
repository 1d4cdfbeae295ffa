// Bad input: exit 2, exactly one line on stderr naming the file/argument, no output left behind.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "evk_testing.hpp"
#include "test_util.hpp"

using evk::testing::TempDir;

namespace {

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void expect_input_error(const std::string& args, const std::string& mention, const TempDir& dir,
                        const std::vector<std::string>& must_not_exist) {
  auto r = evk::testing::run_tool("barracuda_exact", args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(mention), std::string::npos) << "expected '" << mention << "' in: " << r.err;
  for (const auto& f : must_not_exist) EXPECT_FALSE(std::filesystem::exists(dir / f)) << f << " left behind";
  EXPECT_EQ(bct::temp_files_in(dir.path()), 0);
}

// A small indexed reference in dir: ref.fa (+ index) and reads.fq with 200 good reads.
void setup(const TempDir& dir) {
  std::mt19937_64 rng(1);
  std::vector<evk::barracuda_exact::RefSeq> ref = {{"c1", "", bct::random_dna(rng, 5000)}};
  bct::write_fasta(dir / "ref.fa", ref);
  auto r = evk::testing::run_tool("barracuda_exact", "index " + (dir / "ref.fa").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string fq;
  for (int i = 0; i < 200; ++i)
    fq += "@r" + std::to_string(i) + "\n" + ref[0].seq.substr(static_cast<std::size_t>(i) * 20, 100) + "\n+\n" +
          std::string(100, 'I') + "\n";
  bct::write_file(dir / "reads.fq", fq);
}

std::string p(const TempDir& d, const std::string& f) { return (d / f).string(); }

}  // namespace

TEST(BarracudaBadInput, IndexRejectsBadReferences) {
  TempDir dir;
  bct::write_file(dir / "empty.fa", "");
  expect_input_error("index " + p(dir, "empty.fa"), "empty.fa", dir, {"empty.fa.bwt", "empty.fa.sa", "empty.fa.pac"});
  bct::write_file(dir / "text.fa", "this is not a FASTA file\njust words\n");
  expect_input_error("index " + p(dir, "text.fa"), "not a FASTA", dir, {"text.fa.bwt"});
  bct::write_file(dir / "bad.fa", ">c1\nACGTACGTJACGT\n");
  expect_input_error("index " + p(dir, "bad.fa"), "IUPAC", dir, {"bad.fa.bwt", "bad.fa.ann"});
  bct::write_file(dir / "digit.fa", ">c1\nACGT\n>c2\nAC1GT\n");
  expect_input_error("index " + p(dir, "digit.fa"), "c2 position 3", dir, {"digit.fa.bwt"});
  // ending at a contig's header (a cut file); an empty contig before another is bwa's and kept
  // (index_test.cpp: EmptyContigsMapAsBwa)
  bct::write_file(dir / "nocontig.fa", ">c1\nACGT\n>c2\n");
  expect_input_error("index " + p(dir, "nocontig.fa"), "c2 has no bases", dir, {"nocontig.fa.bwt"});
  expect_input_error("index " + p(dir, "missing.fa"), "missing.fa", dir, {"missing.fa.bwt"});
  // truncated gzip
  std::mt19937_64 rng(2);
  bct::write_file(dir / "big.fa", ">c\n" + bct::random_dna(rng, 200000) + "\n");
  ASSERT_EQ(evk::testing::run("gzip " + p(dir, "big.fa") + " && head -c 30000 " + p(dir, "big.fa.gz") + " > " +
                              p(dir, "trunc.fa.gz") + " && rm " + p(dir, "big.fa.gz"))
                .exit_code,
            0);
  expect_input_error("index " + p(dir, "trunc.fa.gz"), "trunc.fa.gz", dir, {"trunc.fa.gz.bwt"});
}

TEST(BarracudaBadInput, MapRejectsDamagedIndexFiles) {
  TempDir dir;
  setup(dir);
  const std::string args = "map " + p(dir, "ref.fa") + " " + p(dir, "reads.fq") + " --backend cpu -o " + p(dir, "o.sam");
  // truncated .bwt
  std::filesystem::copy_file(dir / "ref.fa.bwt", dir / "keep.bwt");
  std::filesystem::resize_file(dir / "ref.fa.bwt", std::filesystem::file_size(dir / "ref.fa.bwt") - 8);
  expect_input_error(args, "ref.fa.bwt", dir, {"o.sam"});
  std::filesystem::copy_file(dir / "keep.bwt", dir / "ref.fa.bwt", std::filesystem::copy_options::overwrite_existing);
  // truncated .sa and .pac
  std::filesystem::copy_file(dir / "ref.fa.sa", dir / "keep.sa");
  std::filesystem::resize_file(dir / "ref.fa.sa", 100);
  expect_input_error(args, "ref.fa.sa", dir, {"o.sam"});
  std::filesystem::copy_file(dir / "keep.sa", dir / "ref.fa.sa", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(dir / "ref.fa.pac", dir / "keep.pac");
  std::filesystem::resize_file(dir / "ref.fa.pac", 10);
  expect_input_error(args, "ref.fa.pac", dir, {"o.sam"});
  std::filesystem::copy_file(dir / "keep.pac", dir / "ref.fa.pac", std::filesystem::copy_options::overwrite_existing);
  // a missing file
  std::filesystem::rename(dir / "ref.fa.amb", dir / "keep.amb");
  expect_input_error(args, "ref.fa.amb", dir, {"o.sam"});
  std::filesystem::rename(dir / "keep.amb", dir / "ref.fa.amb");
  // index files of another reference of the same length mixed in
  std::mt19937_64 rng(99);
  std::vector<evk::barracuda_exact::RefSeq> other = {{"c1", "", bct::random_dna(rng, 5000)}};
  std::filesystem::create_directories(dir / "other");
  bct::write_fasta(dir / "other" / "ref.fa", other);
  ASSERT_EQ(evk::testing::run_tool("barracuda_exact", "index " + p(dir, "other/ref.fa")).exit_code, 0);
  for (const char* e : {".sa", ".pac", ".bwt"}) {
    std::filesystem::copy_file(dir / ("ref.fa" + std::string(e)), dir / "keep.x", std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(dir / "other" / ("ref.fa" + std::string(e)), dir / ("ref.fa" + std::string(e)),
                               std::filesystem::copy_options::overwrite_existing);
    expect_input_error(args, "different references", dir, {"o.sam"});
    std::filesystem::copy_file(dir / "keep.x", dir / ("ref.fa" + std::string(e)), std::filesystem::copy_options::overwrite_existing);
  }
  // and after all that the intact index works
  auto r = evk::testing::run_tool("barracuda_exact", args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(BarracudaBadInput, MapRejectsBadReadsAndOutputs) {
  TempDir dir;
  setup(dir);
  const std::string ref = p(dir, "ref.fa");
  auto map = [&](const std::string& reads, const std::string& out) {
    return "map --exact --backend cpu " + ref + " " + reads + " -o " + out + " --unmatched " + p(dir, "un.fq.gz");
  };
  // quality length differs from sequence length
  bct::write_file(dir / "qual.fq", bct::read_file(dir / "reads.fq") + "@bad\nACGTACGT\n+\nIIII\n");
  expect_input_error(map(p(dir, "qual.fq"), p(dir, "o.sam")), "quality length", dir, {"o.sam", "un.fq.gz"});
  // a read longer than supported
  bct::write_file(dir / "long.fq", "@long\n" + std::string(1025, 'A') + "\n+\n" + std::string(1025, 'I') + "\n");
  expect_input_error(map(p(dir, "long.fq"), p(dir, "o.bam")), "at most 1024", dir, {"o.bam", "un.fq.gz"});
  // truncated gzip reads (large enough that the damage is met after some batches were written)
  std::string many;
  const std::string one = bct::read_file(dir / "reads.fq");
  for (int i = 0; i < 400; ++i) many += one;
  bct::write_file(dir / "many.fq", many);
  ASSERT_EQ(evk::testing::run("gzip -c " + p(dir, "many.fq") + " | head -c 40000 > " + p(dir, "trunc.fq.gz")).exit_code, 0);
  expect_input_error(map(p(dir, "trunc.fq.gz"), p(dir, "o.sam")), "trunc.fq.gz", dir, {"o.sam", "un.fq.gz"});
  // unwritable output, bad extension, missing reads
  expect_input_error(map(p(dir, "reads.fq"), p(dir, "no/such/dir/o.sam")), "o.sam", dir, {"un.fq.gz"});
  expect_input_error(map(p(dir, "reads.fq"), p(dir, "o.txt")), ".sam or .bam", dir, {"o.txt", "un.fq.gz"});
  expect_input_error(map(p(dir, "nothere.fq"), p(dir, "o.sam")), "nothere.fq", dir, {"o.sam", "un.fq.gz"});
  // a missing index
  expect_input_error("map --backend cpu " + p(dir, "reads.fq") + " " + p(dir, "reads.fq") + " -o " + p(dir, "o.sam"),
                     "reads.fq.bwt", dir, {"o.sam"});
}

TEST(BarracudaBadInput, PairedFilesThatDoNotPairUpAndBadOptions) {
  TempDir dir;
  setup(dir);
  const std::string ref = p(dir, "ref.fa");
  const std::string one = bct::read_file(dir / "reads.fq");
  // a second file with the same names (a /2 suffix is trimmed as bwa trims it)
  std::string two;
  {
    std::istringstream in(one);
    std::string l;
    for (int i = 0; std::getline(in, l); ++i) two += (i % 4 == 0 ? l + "/2" : l) + "\n";
  }
  bct::write_file(dir / "r2.fq", two);
  auto pe = [&](const std::string& r2) { return "map --backend cpu " + ref + " " + p(dir, "reads.fq") + " " + r2 + " -o " + p(dir, "o.bam"); };
  // fewer reads in the second file (and in the first): its first 100 records, whole (a record cut
  // short is refused as truncated before the pairs are compared)
  std::size_t cut = 0;
  for (int l = 0; l < 400; ++l) cut = two.find('\n', cut) + 1;
  bct::write_file(dir / "short.fq", two.substr(0, cut));
  expect_input_error(pe(p(dir, "short.fq")), "short.fq", dir, {"o.bam"});
  expect_input_error("map --backend cpu " + ref + " " + p(dir, "short.fq") + " " + p(dir, "reads.fq") + " -o " + p(dir, "o.bam"),
                     "same number of reads", dir, {"o.bam"});
  // a pair whose names differ
  std::string renamed = two;
  renamed.replace(renamed.find("@r57/2"), 6, "@x57/2");
  bct::write_file(dir / "renamed.fq", renamed);
  expect_input_error(pe(p(dir, "renamed.fq")), "x57", dir, {"o.bam"});
  // one end FASTQ, the other FASTA
  std::string fasta;
  {
    std::istringstream in(two);
    std::string l;
    for (int i = 0; std::getline(in, l); ++i)
      if (i % 4 == 0) fasta += ">" + l.substr(1) + "\n";
      else if (i % 4 == 1) fasta += l + "\n";
  }
  bct::write_file(dir / "r2.fa", fasta);
  expect_input_error(pe(p(dir, "r2.fa")), "FASTA", dir, {"o.bam"});
  // an empty read in a pair (bwa would drop it from one file and mispair the rest)
  std::string empty = two;
  const std::size_t at = empty.find("@r3/2\n") + 7;
  empty.replace(at, empty.find('\n', at) - at, "");
  const std::size_t q = empty.find("+\n", at) + 2;
  empty.replace(q, empty.find('\n', q) - q, "");
  bct::write_file(dir / "empty.fq", empty);
  expect_input_error(pe(p(dir, "empty.fq")), "empty", dir, {"o.bam"});
  // the same file twice, --exact with two files, --unmatched without --exact
  expect_input_error(pe(p(dir, "reads.fq")), "READS2 is READS", dir, {"o.bam"});
  expect_input_error("map --exact " + ref + " " + p(dir, "reads.fq") + " " + p(dir, "r2.fq") + " -o " + p(dir, "o.sam"),
                     "single-end", dir, {"o.sam"});
  expect_input_error("map " + ref + " " + p(dir, "reads.fq") + " -o " + p(dir, "o.sam") + " --unmatched " + p(dir, "u.fq.gz"),
                     "--unmatched", dir, {"o.sam", "u.fq.gz"});
  // read groups as bwa checks them, --max-diff values, an exact-kernel genome in inexact mode
  const std::string se = "map --backend cpu " + ref + " " + p(dir, "reads.fq") + " -o " + p(dir, "o.sam");
  expect_input_error(se + " -R 'ID:x'", "@RG", dir, {"o.sam"});
  expect_input_error(se + " -R '@RG\\tSM:x'", "no ID", dir, {"o.sam"});
  expect_input_error(se + " -R \"$(printf '@RG\\tID:x')\"", "literal tab", dir, {"o.sam"});
  expect_input_error(se + " --max-diff 1.5", "--max-diff", dir, {"o.sam"});
  expect_input_error(se + " --max-diff x", "--max-diff", dir, {"o.sam"});
  expect_input_error(se + " --gpu-memory 12Q", "--gpu-memory", dir, {"o.sam"});
  bct::write_file(dir / "g.genome", "# kernel: barracuda_exact\nBLOCK_W=128\n");
  // the exact kernel's genome in the inexact mode: named, refused before any output
  expect_input_error(se + " --kernel " + p(dir, "g.genome"), "not 'barracuda_inexact'", dir, {"o.sam"});
  // and the good pairs map
  auto r = evk::testing::run_tool("barracuda_exact", pe(p(dir, "r2.fq")) + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"pairs\": 200"), std::string::npos) << r.out;
}
