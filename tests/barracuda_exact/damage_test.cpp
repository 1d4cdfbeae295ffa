// The damage profile (core/damage.hpp, `barracuda_exact damage`, `map --damage`): counts of
// hand-made records worked out by hand; reads with simulated deamination written at their true place
// recover the simulated rates; simulated damaged reads with indels and trimmed tails mapped by our own
// `map` give files (misincorporation, lengths, composition) equal to mapDamage 2's (Debian's, run
// here) line for line, and map --damage gives what `damage` gives over its BAM; bad input exits 2
// with one line naming the file and writes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include "core/damage.hpp"
#include "evk_testing.hpp"
#include "io/damage_files.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
using evk::testing::TempDir;

namespace {

int col(const char* m) {
  for (std::size_t k = 0; k < bc::kDamageMutations.size(); ++k)
    if (std::string(bc::kDamageMutations[k]) == m) return 4 + static_cast<int>(k);
  return -1;
}

// The lines of a mapDamage-style table without its '#' comments.
std::vector<std::string> data_lines(const std::filesystem::path& p, bool sorted = false) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  if (sorted) std::sort(out.begin(), out.end());
  return out;
}

constexpr double kDeam = 0.35, kDecay = 0.6, kErr = 0.01;  // the simulation's rates
double deam(int i) { return kDeam * std::pow(kDecay, i); }

// Reads from `g` with deamination from both ends, errors, indels in a quarter of them each way,
// half reverse-complemented, low-quality tails on some (trimmed by --trim-q 15 into soft clips).
void simulate(const std::string& g, int n, std::uint64_t seed, const std::filesystem::path& fq) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::ofstream out(fq);
  for (int r = 0; r < n;) {
    const int len = 30 + static_cast<int>(rng() % 61);
    const std::size_t at = rng() % (g.size() - static_cast<std::size_t>(len) - 10);
    std::string f = g.substr(at, static_cast<std::size_t>(len) + 5);
    if (f.find('N') != std::string::npos) continue;
    const double kind = u(rng);
    const std::size_t i = 8 + rng() % static_cast<std::size_t>(len - 16);
    if (kind < 0.25) f.erase(i, 1 + rng() % 2);
    else if (kind < 0.5) f.insert(i, std::string(1 + rng() % 2, "ACGT"[rng() & 3]));
    f.resize(static_cast<std::size_t>(len));
    for (int j = 0; j < len; ++j) {
      char& c = f[static_cast<std::size_t>(j)];
      if (c == 'C' && u(rng) < deam(j)) c = 'T';
      if (c == 'G' && u(rng) < deam(len - 1 - j)) c = 'A';
      if (u(rng) < kErr) c = "ACGT"[rng() & 3];
    }
    if (rng() & 1) f = bct::revcomp(f);
    std::string q(static_cast<std::size_t>(len), 'I');
    if (u(rng) < 0.3)
      for (int j = len - 5; j < len; ++j) q[static_cast<std::size_t>(j)] = '$';
    out << "@r" << r++ << "\n" << f << "\n+\n" << q << "\n";
  }
}

// The same damage written straight to SAM at the true place (no mapping, no indels): what the
// profile must recover within sampling error.
void simulate_sam(const std::string& name, const std::string& g, int n, std::uint64_t seed, const std::filesystem::path& sam) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::ofstream out(sam);
  out << "@SQ\tSN:" << name << "\tLN:" << g.size() << "\n";
  for (int r = 0; r < n;) {
    const int len = 30 + static_cast<int>(rng() % 61);
    const std::size_t at = rng() % (g.size() - static_cast<std::size_t>(len));
    const std::string truth = g.substr(at, static_cast<std::size_t>(len));
    if (truth.find('N') != std::string::npos) continue;
    const bool rev = rng() & 1;
    std::string f = rev ? bct::revcomp(truth) : truth;  // the molecule, 5' first
    for (int j = 0; j < len; ++j) {
      char& c = f[static_cast<std::size_t>(j)];
      if (c == 'C' && u(rng) < deam(j)) c = 'T';
      if (c == 'G' && u(rng) < deam(len - 1 - j)) c = 'A';
      if (u(rng) < kErr) c = "ACGT"[rng() & 3];
    }
    out << "r" << r++ << "\t" << (rev ? 16 : 0) << "\t" << name << "\t" << at + 1 << "\t37\t" << len << "M\t*\t0\t0\t"
        << (rev ? bct::revcomp(f) : f) << "\t*\n";
  }
}

struct Mapped {
  TempDir dir;
  std::string fa, bam;
  Mapped() {
    std::mt19937_64 rng(31);
    std::vector<bc::RefSeq> ref = {{"chr2", "", bct::random_dna(rng, 300000)}, {"chr1", "", bct::random_dna(rng, 200000)}};
    ref[0].seq.replace(1000, 500, std::string(500, 'N'));
    bct::write_fasta(dir / "g.fa", ref);
    fa = (dir / "g.fa").string();
    bam = (dir / "m.bam").string();
    simulate(ref[0].seq, 12000, 5, dir / "r.fq");  // chr1 stays empty: its rows must be zeros in both
    EXPECT_EQ(evk::testing::run_tool("barracuda_exact", "index --backend cpu " + fa).exit_code, 0);
    const auto m = evk::testing::run_tool("barracuda_exact", "map --backend cpu --trim-q 15 " + fa + " " +
                                                                 (dir / "r.fq").string() + " -o " + bam);
    EXPECT_EQ(m.exit_code, 0) << m.err;
  }
};

}  // namespace

TEST(BarracudaDamage, HandMadeRecordsCountAsWorkedOut) {
  //            0123456789
  const std::string ref = "ACGTCAGGTN";
  bc::DamageOptions o;
  o.length = 4;
  o.min_mapq = 20;
  bc::DamageProfile p({"c"}, o);
  bc::DamageRead a;  // forward, 2S6M at 1: read GG|TCGTCA against CGTCAG: 5' C>T at 1, 3' G>A at 1; soft clip 2 at 5'
  a.pos = 1;
  a.mapq = 30;
  a.cigar = {{'S', 2}, {'M', 6}};
  a.seq = "GGTGTCAA";
  EXPECT_TRUE(p.add(a, ref));
  const int ct = col("C>T"), ga = col("G>A"), s = col("S");
  EXPECT_EQ(p.count(0, 0, 0, 0, ct), 1u);  // 5' position 1: C>T
  EXPECT_EQ(p.count(0, 0, 0, 0, 1), 1u);   // reference C there
  EXPECT_EQ(p.count(0, 1, 0, 0, ga), 1u);  // 3' position 1: G>A
  EXPECT_EQ(p.count(0, 0, 0, 0, s), 1u);
  EXPECT_EQ(p.count(0, 0, 0, 1, s), 1u);
  EXPECT_EQ(p.count(0, 0, 0, 2, s), 0u);
  bc::DamageRead b;  // reverse, 2M1D2M at 4: reference CA|G|GT, read CA-GT; its 5' end is the right end
  b.pos = 4;
  b.mapq = 30;
  b.flag = 0x10;
  b.cigar = {{'M', 2}, {'D', 1}, {'M', 2}};
  b.seq = "CAGT";
  EXPECT_TRUE(p.add(b, ref));
  // reverse-complemented: reference AC|C|TG, read AC-TG; from the 5' end: A C C>- T
  EXPECT_EQ(p.count(0, 0, 1, 2, col("C>-")), 1u);
  EXPECT_EQ(p.count(0, 0, 1, 0, 0), 1u);   // A
  EXPECT_EQ(p.count(0, 1, 1, 2, col("C>-")), 1u);  // from the 3' end: G T C>- C
  bc::DamageRead c = a;  // under the MAPQ threshold; and a duplicate
  c.mapq = 10;
  EXPECT_FALSE(p.add(c, ref));
  c.mapq = 60;
  c.flag = 0x400;
  EXPECT_FALSE(p.add(c, ref));
  bc::DamageRead d;  // over the reference's N and an insertion: skipped column, ->A
  d.pos = 7;
  d.mapq = 30;
  d.cigar = {{'M', 2}, {'I', 1}, {'M', 1}};
  d.seq = "GTAA";
  EXPECT_TRUE(p.add(d, ref));
  EXPECT_EQ(p.count(0, 0, 0, 2, col("->A")), 1u);
  EXPECT_EQ(p.count(0, 0, 0, 3, 0) + p.count(0, 0, 0, 3, 1) + p.count(0, 0, 0, 3, 2) + p.count(0, 0, 0, 3, 3), 1u);  // a's T only: d's N skipped
  EXPECT_EQ(p.reads(), 3u);
  EXPECT_EQ(p.lengths(0).at(6), 1u);
  EXPECT_EQ(p.lengths(1).at(5), 1u);
  EXPECT_EQ(p.lengths(0).at(3), 1u);
}

TEST(BarracudaDamage, RecoversSimulatedRates) {
  TempDir dir;
  std::mt19937_64 rng(32);
  const std::string g = bct::random_dna(rng, 400000);
  bct::write_fasta(dir / "g.fa", {{"c", "", g}});
  simulate_sam("c", g, 12000, 6, dir / "t.sam");
  const bc::DamageProfile p = bc::damage_from_bam((dir / "t.sam").string(), (dir / "g.fa").string(), bc::DamageOptions{25, 0});
  EXPECT_EQ(p.reads(), 12000u);
  for (int i = 0; i < 8; ++i) {  // deamination, and errors turning C into T (a quarter of kErr)
    const double want = deam(i) + (1 - deam(i)) * kErr / 4;
    for (const double got : {bc::damage_ct5(p, i), bc::damage_ga3(p, i)}) {
      const double se = std::sqrt(want * (1 - want) / 2500.0);  // at least ~2,500 C (G) per end and position
      EXPECT_NEAR(got, want, 5 * se) << "position " << i + 1;
    }
  }
  EXPECT_LT(bc::damage_ct5(p, 20), kErr);
  EXPECT_GT(bc::damage_ct5(p, 0), 0.3);
}

TEST(BarracudaDamage, EqualsMapDamageOnMappedReads) {
  Mapped m;
  const auto r = evk::testing::run_tool("barracuda_exact", "damage -q 0 -l 25 " + m.fa + " " + m.bam + " -o " + (m.dir / "ours").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("C>T at the 5' end"), std::string::npos) << r.err;
  const bc::DamageProfile p = bc::damage_from_bam(m.bam, m.fa, bc::DamageOptions{25, 0});
  std::uint64_t clipped = 0, inserted = 0, deleted = 0;  // the mapped reads (all on chr2, contig 0) have all three
  for (int e = 0; e < 2; ++e)
    for (int st = 0; st < 2; ++st)
      for (int i = 0; i < 25; ++i) {
        clipped += p.count(0, e, st, i, col("S"));
        inserted += p.count(0, e, st, i, col("->A")) + p.count(0, e, st, i, col("->T"));
        deleted += p.count(0, e, st, i, col("C>-")) + p.count(0, e, st, i, col("G>-"));
      }
  {  // the plot: the first point of the 5' C>T line is the frequency at position 1 on its y scale
    std::ifstream in(m.dir / "ours.damage.svg");
    const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    const std::size_t at = svg.find("data-sub=\"C>T\" data-end=\"5p\"");
    ASSERT_NE(at, std::string::npos);
    const std::size_t pts = svg.find("points=\"", at) + 8;
    const double y = std::stod(svg.substr(svg.find(',', pts) + 1));
    const std::size_t lab = svg.find("frequency (0 to ");
    ASSERT_NE(lab, std::string::npos);
    const double ymax = std::stod(svg.substr(lab + 16));
    EXPECT_NEAR((1 - (y - 20) / 240) * ymax, bc::damage_ct5(p, 0), 0.002);
    EXPECT_GT(bc::damage_ct5(p, 0), 0.2);
  }
  EXPECT_GT(clipped, 100u);
  EXPECT_GT(inserted, 50u);
  EXPECT_GT(deleted, 50u);
  if (!bct::have("mapDamage") || !bct::have("samtools")) GTEST_SKIP() << "mapDamage or samtools not installed";
  ASSERT_EQ(evk::testing::run("samtools faidx " + m.fa).exit_code, 0);
  const auto md = evk::testing::run("mapDamage -i " + m.bam + " -r " + m.fa + " -l 25 --no-plot --no-stats -d " +
                                    (m.dir / "md").string() + " > /dev/null 2>&1");
  ASSERT_EQ(md.exit_code, 0);
  const auto ours = data_lines(m.dir / "ours.misincorporation.txt"), theirs = data_lines(m.dir / "md" / "misincorporation.txt");
  ASSERT_EQ(ours.size(), theirs.size());
  EXPECT_EQ(ours.size(), 1u + 2 * 2 * 2 * 25);  // header + 2 contigs x 2 ends x 2 strands x 25 positions
  for (std::size_t i = 0; i < ours.size(); ++i) EXPECT_EQ(ours[i], theirs[i]) << "line " << i;
  EXPECT_EQ(data_lines(m.dir / "ours.lgdistribution.txt", true), data_lines(m.dir / "md" / "lgdistribution.txt", true));
  const auto oc = data_lines(m.dir / "ours.dnacomp.txt"), tc = data_lines(m.dir / "md" / "dnacomp.txt");
  EXPECT_EQ(oc.size(), 1u + 2 * 2 * 2 * 35);  // header + 2 contigs x 2 ends x 2 strands x (10 around + 25 read)
  EXPECT_EQ(oc, tc);
}

// map --damage reads the reference from the index: bwa's packing replaced the ambiguous bases, the
// .amb runs put them back (as mapDamage reads the FASTA, uppercased).
TEST(BarracudaDamage, ReferenceSpansFromTheIndexAreTheFasta) {
  const std::vector<bc::RefSeq> ref = {{"a", "", "ACGTNNNNacgtRYAC"}, {"b", "", "nnGATTACA"}};
  const bc::BwtIndex idx = bc::build_index(ref);
  EXPECT_EQ(bc::damage_span(idx, 0, 0, 16), "ACGTNNNNACGTRYAC");
  EXPECT_EQ(bc::damage_span(idx, 0, 5, 4), "NNNA");
  EXPECT_EQ(bc::damage_span(idx, 0, 12, 10), "RYAC");  // clipped at the contig's end
  EXPECT_EQ(bc::damage_span(idx, 1, 0, 4), "NNGA");
  EXPECT_EQ(bc::damage_span(idx, 1, 3, 6), "ATTACA");
}

// map --damage counts the records as it writes them (the reference from the index, its N runs from
// the .amb): the same tables as `damage` over the BAM it wrote, at the default MAPQ 25 and at 0.
TEST(BarracudaDamage, MapCountsWhatDamageCountsOverItsBam) {
  Mapped m;
  for (const int q : {25, 0}) {
    const std::string tag = "q" + std::to_string(q), bam = (m.dir / (tag + ".bam")).string();
    const auto r = evk::testing::run_tool("barracuda_exact", "map --backend cpu --trim-q 15 --damage " + (m.dir / (tag + "map")).string() +
                                                                 " --damage-min-mapq " + std::to_string(q) + " " + m.fa + " " +
                                                                 (m.dir / "r.fq").string() + " -o " + bam);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto d = evk::testing::run_tool("barracuda_exact", "damage -q " + std::to_string(q) + " " + m.fa + " " + bam + " -o " +
                                                                 (m.dir / (tag + "bam")).string());
    ASSERT_EQ(d.exit_code, 0) << d.err;
    for (const char* t : {".misincorporation.txt", ".lgdistribution.txt", ".dnacomp.txt"}) {
      const auto a = data_lines(m.dir / (tag + "map" + t)), b = data_lines(m.dir / (tag + "bam" + t));
      EXPECT_GT(a.size(), 10u) << t;
      EXPECT_EQ(a, b) << tag << t;
    }
  }
}

TEST(BarracudaDamage, BadInputExitsTwoAndWritesNothing) {
  Mapped m;
  const std::string out = (m.dir / "o").string();
  auto expect_refused = [&](const std::string& args, const std::string& names, const std::string& says) {
    const auto r = evk::testing::run_tool("barracuda_exact", "damage " + args + " -o " + out);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line
    EXPECT_FALSE(std::filesystem::exists(out + ".misincorporation.txt"));
    EXPECT_FALSE(std::filesystem::exists(out + ".lgdistribution.txt"));
    EXPECT_FALSE(std::filesystem::exists(out + ".damage.svg"));
    EXPECT_FALSE(std::filesystem::exists(out + ".dnacomp.txt"));
  };
  std::mt19937_64 rng(4);  // a reference whose chr1 is shorter, one without chr2
  bct::write_fasta(m.dir / "short.fa", {{"chr2", "", bct::random_dna(rng, 300000)}, {"chr1", "", bct::random_dna(rng, 1000)}});
  bct::write_fasta(m.dir / "other.fa", {{"chr1", "", bct::random_dna(rng, 200000)}});
  expect_refused((m.dir / "short.fa").string() + " " + m.bam, "m.bam", "chr1 is 200000 bp in the header but 1000 bp");
  expect_refused((m.dir / "other.fa").string() + " " + m.bam, "m.bam", "chr2 of the header is not in");
  expect_refused(m.fa + " " + (m.dir / "missing.bam").string(), "missing.bam", "cannot open");
  expect_refused("-q 255 " + m.fa + " " + m.bam, "m.bam", "none mapped with MAPQ >= 255");
  {  // a BAM cut in the middle of its records, and a text file where the BAM should be
    std::ifstream in(m.bam, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(m.dir / "cut.bam", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    std::ofstream(m.dir / "notes.bam") << "these are not alignments\n";
  }
  expect_refused(m.fa + " " + (m.dir / "cut.bam").string(), "cut.bam", "truncated");
  expect_refused(m.fa + " " + (m.dir / "notes.bam").string(), "notes.bam", "no SAM/BAM header");
  expect_refused((m.dir / "missing.fa").string() + " " + m.bam, "missing.fa", "cannot open");
  // map --damage into a folder that does not exist: refused before mapping, no SAM left behind
  const std::string sam = (m.dir / "d.sam").string();
  const auto r = evk::testing::run_tool("barracuda_exact", "map --backend cpu --damage " + (m.dir / "nowhere" / "p").string() + " " +
                                                               m.fa + " " + (m.dir / "r.fq").string() + " -o " + sam);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nowhere"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(sam));
}

// Profiles over many contigs hold tables only for the contigs reads land on; merging part profiles
// (as map --damage does) gives the counts of one profile over every read, and clear() empties one.
TEST(BarracudaDamage, ManyContigsMergeAndClear) {
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back("scaffold" + std::to_string(i));
  bc::DamageOptions o;
  o.min_mapq = 0;
  bc::DamageProfile all(names, o), a(names, o), b(names, o);
  const std::string ref = "ACGTCAGGTACGTCAGGTAC";
  bc::DamageRead r;
  r.cigar = {{'M', 10}};
  r.seq = "TCGTCAGGTA";
  for (const int c : {7, 4999, 7}) {
    r.contig = c;
    all.add(r, ref);
    (c == 4999 ? b : a).add(r, ref);
  }
  a.merge(b);
  for (const int c : {0, 7, 4999})
    for (int k = 0; k < bc::kDamageColumns; ++k) {
      EXPECT_EQ(a.count(c, 0, 0, 0, k), all.count(c, 0, 0, 0, k)) << c << " " << k;
      EXPECT_EQ(a.composition(c, 0, 0, 1, k % 4), all.composition(c, 0, 0, 1, k % 4));
    }
  EXPECT_EQ(a.count(7, 0, 0, 0, col("C>T")), 0u);  // reference A at position 1: no C>T
  EXPECT_EQ(a.count(7, 0, 0, 0, col("A>T")), 2u);
  EXPECT_EQ(a.count(4999, 0, 0, 0, col("A>T")), 1u);
  EXPECT_EQ(a.reads(), 3u);
  a.clear();
  EXPECT_EQ(a.reads(), 0u);
  EXPECT_EQ(a.count(7, 0, 0, 0, col("A>T")), 0u);
}

// Reads shorter than the profile window (-l 25): positions past a read's length stay empty, its
// positions are counted from both ends (they overlap), as mapDamage does; worked out by hand.
TEST(BarracudaDamage, ReadsShorterThanTheWindowCountTheirOwnPositions) {
  TempDir dir;
  std::string ref(400, 'A');
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = "ACGT"[(i * 7 + i / 3) % 4];
  ref[100] = 'C';
  bct::write_fasta(dir / "g.fa", {{"chr1", "", ref}});
  std::string read = ref.substr(100, 12);
  read[0] = 'T';  // C->T at the read's 5' end
  std::ofstream(dir / "s.sam") << "@SQ\tSN:chr1\tLN:400\n"
                               << "r1\t0\tchr1\t101\t37\t12M\t*\t0\t0\t" << read << "\t*\n"
                               << "r2\t0\tchr1\t101\t37\t12M\t*\t0\t0\t" << read << "\t*\n";
  const auto d = evk::testing::run_tool("barracuda_exact", "damage " + (dir / "g.fa").string() + " " + (dir / "s.sam").string() +
                                                               " -o " + (dir / "p").string());
  ASSERT_EQ(d.exit_code, 0) << d.err;
  int rows = 0;
  for (const std::string& line : data_lines(dir / "p.misincorporation.txt")) {
    std::istringstream in(line);
    std::string chr, end, strand;
    int pos = 0;
    std::vector<long> v(4 + 1 + 21);
    in >> chr >> end >> strand >> pos;
    for (long& x : v) in >> x;
    if (strand != "+") continue;
    ++rows;
    const long total = v[4];
    const long ct = v[static_cast<std::size_t>(col("C>T") + 1)];  // +1: Total sits after the four bases
    EXPECT_EQ(total, pos <= 12 ? 2 : 0) << line;  // two reads, 12 columns from each end
    const bool five_first = end == "5p" && pos == 1, three_last = end == "3p" && pos == 12;
    EXPECT_EQ(ct, five_first || three_last ? 2 : 0) << line;  // the 5' base is the 3' end's 12th
  }
  EXPECT_EQ(rows, 50);
  const auto lengths = data_lines(dir / "p.lgdistribution.txt");
  EXPECT_NE(std::find(lengths.begin(), lengths.end(), "+\t12\t2"), lengths.end());
}

// Input with no mapped record at all: one line naming the file, exit 2, no tables.
TEST(BarracudaDamage, UnmappedOnlyInputIsRefused) {
  TempDir dir;
  std::mt19937_64 rng(8);
  bct::write_fasta(dir / "g.fa", {{"chr1", "", bct::random_dna(rng, 1000)}});
  std::ofstream(dir / "u.sam") << "@SQ\tSN:chr1\tLN:1000\n"
                               << "r1\t4\t*\t0\t0\t*\t*\t0\t0\tACGTACGTAC\t*\n"
                               << "r2\t4\t*\t0\t0\t*\t*\t0\t0\tTTGCAACGTA\t*\n";
  const auto r = evk::testing::run_tool("barracuda_exact", "damage " + (dir / "g.fa").string() + " " + (dir / "u.sam").string() +
                                                               " -o " + (dir / "p").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("u.sam"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 records, none mapped"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "p.misincorporation.txt"));
}
