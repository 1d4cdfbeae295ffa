// The inexact GI problem's `adna` class on the CPU: its reads follow the aDNA model (lengths,
// deamination at the 5' end, determinism, hold-out apart from training), its options are bwa aln's
// -l 1024 -n 0.01 -o 2, and those options find the reads on a two-strand index of the human-like
// genome (a random one-strand BWT did not: bwa's lower bound on the differences assumes both strands).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/aln_search.hpp"
#include "evk/dispatch.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "gi/kernel_variant.hpp"
#include "gi/adna_gi.hpp"
#include "gi/aln_gi_problem.hpp"

namespace bc = evk::barracuda_exact;

namespace {
const std::vector<bc::RefSeq>& small_genome() {
  static const std::vector<bc::RefSeq> g = bc::adna_gi_genome(3000000, 7);
  return g;
}
}  // namespace

TEST(BarracudaAdnaGi, ReadsFollowTheModel) {
  const bc::ReadCodes a = bc::adna_gi_reads(small_genome(), 1, false, 70000);  // crosses a 65,536-read chunk
  ASSERT_EQ(a.size(), 70000u);
  std::vector<std::uint32_t> len(a.len.begin(), a.len.end());
  EXPECT_GE(*std::min_element(len.begin(), len.end()), 25u);
  EXPECT_LE(*std::max_element(len.begin(), len.end()), 120u);
  std::nth_element(len.begin(), len.begin() + len.size() / 2, len.end());
  EXPECT_NEAR(static_cast<double>(len[len.size() / 2]), 45.0, 3.0);
  // C->T at the 5' end: T at the first base well above T in the middle of the read
  double t_first = 0, t_mid = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    t_first += a.codes[a.offset[i]] == 3;
    t_mid += a.codes[a.offset[i] + a.len[i] / 2] == 3;
  }
  EXPECT_GT(t_first / a.size(), t_mid / a.size() + 0.04) << t_first << " " << t_mid;
  const bc::ReadCodes again = bc::adna_gi_reads(small_genome(), 1, false, 70000);
  EXPECT_EQ(again.codes, a.codes);
  const bc::ReadCodes held = bc::adna_gi_reads(small_genome(), 1, true, 1000), other = bc::adna_gi_reads(small_genome(), 2, false, 1000);
  EXPECT_NE(std::vector<std::uint8_t>(held.codes.begin(), held.codes.begin() + 200), std::vector<std::uint8_t>(a.codes.begin(), a.codes.begin() + 200));
  EXPECT_NE(std::vector<std::uint8_t>(other.codes.begin(), other.codes.begin() + 200), std::vector<std::uint8_t>(a.codes.begin(), a.codes.begin() + 200));
}

TEST(BarracudaAdnaGi, OptionsAreTheADnaSettingsAndFindTheReads) {
  const bc::AlnOptions o = bc::adna_gi_options();
  EXPECT_EQ(o.seed_len, 1024);
  EXPECT_FLOAT_EQ(o.fnr, 0.01f);
  EXPECT_EQ(o.max_diff, -1);
  EXPECT_EQ(o.max_gapo, 2);
  const bc::BwtIndex idx = bc::build_index(small_genome());
  const bc::ReadCodes r = bc::adna_gi_reads(small_genome(), 3, false, 3000);
  const bc::AlnBatch hits = bc::aln_search_batch(idx, r, o, 0);
  std::size_t found = 0, long_found = 0, long_reads = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    found += hits.count(i) > 0;
    if (r.len[i] >= 80) ++long_reads, long_found += hits.count(i) > 0;
  }
  // ~10% are contaminants (random sequence) and a few reads carry more damage than -n 0.01 allows
  EXPECT_GT(found, r.size() * 75 / 100) << found;
  ASSERT_GT(long_reads, 20u);
  EXPECT_GT(long_found, long_reads * 60 / 100) << long_found << " of " << long_reads;
}

TEST(BarracudaAdnaGi, TheInexactProblemHasTheClass) {
  const auto p = bc::make_inexact_gi_problem();
  EXPECT_EQ(p->class_names(), (std::vector<std::string>{"ecoli", "adna"}));
  p->check_class("adna");
}

// `map` picks the inexact kernel's variants (gi-inexact's genomes) from the registry: the class of a
// job follows its seed (-l longer than any read the kernel takes: adna), a genome's configuration
// is read and checked, and a genome FILE for the inexact mode is checked on the CPU backend too.
TEST(BarracudaAdnaGi, InexactVariantsResolveAndTheClassFollowsTheSeed) {
  EXPECT_EQ(bc::inexact_size_class(1024), "adna");
  EXPECT_EQ(bc::inexact_size_class(32), "ecoli");
  EXPECT_EQ(bc::make_inexact_gi_problem()->class_of({{"seed_len", 1024}}), "adna");
  EXPECT_EQ(bc::make_inexact_gi_problem()->class_of({{"seed_len", 32}}), "ecoli");
  EXPECT_EQ(bc::make_inexact_request(1024, 5000000).size_class, "adna");
  const auto kernels = bc::make_registry().kernels();
  EXPECT_NE(std::find(kernels.begin(), kernels.end(), "barracuda_inexact"), kernels.end());
  const evk::Variant v = evk::parse_genome_text("# kernel: barracuda_inexact\n# cc: 9.0\nBLOCK_W=256 STACK_CAP=2047\n", "t.genome");
  const bc::InexactVariant iv = bc::resolve_inexact_variant(v);
  EXPECT_EQ(iv.config.at("BLOCK_W"), "256");
  EXPECT_EQ(iv.config.at("STACK_CAP"), "2047");
  EXPECT_EQ(iv.config.at("THREADS_PER_SM"), "512");
  EXPECT_EQ(iv.edits, 0);
  EXPECT_NE(iv.describe().find("BLOCK_W=256"), std::string::npos) << iv.describe();
  evk::testing::TempDir dir;
  std::ofstream(dir / "bad.genome") << "# kernel: barracuda_inexact\nSTACK_CAP=7\n";
  const evk::Variant bad = evk::read_genome_file(dir / "bad.genome");
  try {
    bc::resolve_inexact_variant(bad);
    ADD_FAILURE() << "an illegal STACK_CAP was accepted";
  } catch (const evk::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.genome"), std::string::npos) << e.what();
  }
}

TEST(BarracudaAdnaGi, MapChecksAnInexactGenomeFileOnTheCpu) {
  evk::testing::TempDir dir;
  const auto& g = small_genome();
  {
    std::ofstream fa(dir / "ref.fa");
    for (std::size_t c = 0; c < 3; ++c) fa << ">" << g[c].name << "\n" << g[c].seq << "\n";
    std::ofstream fq(dir / "r.fq");
    const std::size_t at = g[0].seq.find_first_of("ACGT", 30000);  // past the telomere's N
    fq << "@r1\n" << g[0].seq.substr(at, 40) << "\n+\n" << std::string(40, 'I') << "\n";
    std::ofstream(dir / "ok.genome") << "# kernel: barracuda_inexact\n# cc: 9.0\nBLOCK_W=256 STACK_CAP=2047\n";
    std::ofstream(dir / "bad.genome") << "# kernel: barracuda_inexact\n# cc: 9.0\nSTACK_CAP=7\n";
  }
  ASSERT_EQ(evk::testing::run_tool("barracuda_exact", "index " + (dir / "ref.fa").string()).exit_code, 0);
  const std::string base = "map --backend cpu --seed-len 1024 " + (dir / "ref.fa").string() + " " + (dir / "r.fq").string() + " -o ";
  auto r = evk::testing::run_tool("barracuda_exact", base + (dir / "a.sam").string() + " --kernel " + (dir / "ok.genome").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = evk::testing::run_tool("barracuda_exact", base + (dir / "b.sam").string() + " --kernel " + (dir / "bad.genome").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bad.genome"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "b.sam"));
}
