// The GI integration without a GPU: `map --kernel FILE` with bad genomes (exit 2, one line, no
// output), `gi apply` of an empty genome (the original text), evolved variants resolved into the
// source + config the GPU backend compiles (and NVRTC accepts), `gi grammar` counts vs the kernel.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "core/kernel_config.hpp"
#include "gi/kernel_variant.hpp"
#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk_kernels/barracuda_exact_kernel.hpp"
#include "evk_testing.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
using evk::testing::TempDir;

namespace {

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

void write_genome(const TempDir& dir, const std::string& name, const std::string& kernel, const std::string& body) {
  bct::write_file(dir / name, "# evokernels genome v1\n# kernel: " + kernel + "\n# cc: 9.0\n" + body + "\n");
}

evk::Variant file_variant(const std::string& genome) {
  evk::Variant v;
  v.kernel = "barracuda_exact";
  v.id = "test";
  v.source = evk::VariantSource::file;
  v.path = "test.genome";
  v.genome = genome;
  return v;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(BarracudaGi, KernelFileWithABadGenomeExitsTwoWithOneLine) {
  TempDir dir;
  std::mt19937_64 rng(3);
  const std::vector<evk::barracuda_exact::RefSeq> ref = {{"c1", "", bct::random_dna(rng, 3000)}};
  bct::write_fasta(dir / "ref.fa", ref);
  ASSERT_EQ(evk::testing::run_tool("barracuda_exact", "index " + (dir / "ref.fa").string()).exit_code, 0);
  bct::write_file(dir / "reads.fq", "@r\n" + ref[0].seq.substr(100, 50) + "\n+\n" + std::string(50, 'I') + "\n");
  struct Case {
    std::string file, kernel, body, mention;
  };
  const std::vector<Case> cases = {
      {"unknown_rule.genome", "barracuda_exact", "<_K_9999>", "unknown rule"},
      {"junk.genome", "barracuda_exact", "hello world", "hello"},
      {"half_gene.genome", "barracuda_exact", "<_K_205", "<_K_205"},
      {"bad_value.genome", "barracuda_exact", "BLOCK_W=100", "BLOCK_W=100"},
      {"unknown_param.genome", "barracuda_exact", "WARP_W=32", "WARP_W"},
      {"illegal_combination.genome", "barracuda_exact", "occ_par=true", "occ_par needs cache_threads"},
      {"type_mismatch.genome", "barracuda_exact", "<_K_205><IF_K_204>", "<_K_205><IF_K_204>"},
      // line 299 (k = bc.L2[c] + ok + 1;) uses the kernel's k, c, ok: out of scope in load_block (line 170)
      {"out_of_scope.genome", "barracuda_exact", "<_K_170><_K_299>", "<_K_170><_K_299>"},
      {"other_kernel.genome", "stereo", "BLOCK_W=128", "stereo"},
  };
  for (const auto& c : cases) {
    write_genome(dir, c.file, c.kernel, c.body);
    const std::string out = (dir / (c.file + ".sam")).string();
    auto r = evk::testing::run_tool("barracuda_exact", "map --exact " + (dir / "ref.fa").string() + " " +
                                                           (dir / "reads.fq").string() + " -o " + out + " --kernel " +
                                                           (dir / c.file).string());
    EXPECT_EQ(r.exit_code, 2) << c.file << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.file << "\n" << r.err;
    EXPECT_NE(r.err.find(c.file), std::string::npos) << "the file is not named: " << r.err;
    EXPECT_NE(r.err.find(c.mention), std::string::npos) << "expected '" << c.mention << "' in: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << out << " left behind";
  }
  EXPECT_EQ(bct::temp_files_in(dir.path()), 0);
  // the same reads with a valid genome file: accepted (the CPU backend ignores it, the GPU uses it)
  write_genome(dir, "good.genome", "barracuda_exact", "BLOCK_W=128 <_K_206>+<_K_205>");
  auto r = evk::testing::run_tool("barracuda_exact", "map --exact " + (dir / "ref.fa").string() + " " + (dir / "reads.fq").string() +
                                                         " -o " + (dir / "good.sam").string() + " --kernel " +
                                                         (dir / "good.genome").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "good.sam"));
}

TEST(BarracudaGi, ApplyOfAnEmptyGenomeReproducesTheOriginal) {
  TempDir dir;
  const std::string original = bct::read_file(std::filesystem::path(EVK_SOURCE_DIR) / "kernels" / "original" /
                                              "barracuda_exact" / "barracuda_exact.cu");
  ASSERT_GT(original.size(), 5000u);
  write_genome(dir, "empty.genome", "barracuda_exact", "");
  auto r = evk::testing::run_tool("barracuda_exact", "gi apply " + (dir / "empty.genome").string() + " -o " +
                                                         (dir / "out.cu").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(bct::read_file(dir / "out.cu") == original);
  // stdin, no header at all
  auto s = evk::testing::run("printf '' | " + (evk::testing::bin_dir() / "barracuda_exact").string() + " gi apply -");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_TRUE(s.out == original);
  // a non-empty genome changes the text where it says
  write_genome(dir, "edit.genome", "barracuda_exact", "<_K_206>+<_K_205>");
  r = evk::testing::run_tool("barracuda_exact", "gi apply " + (dir / "edit.genome").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(original, "tag = blk;"), 1);
  EXPECT_EQ(count(r.out, "tag = blk;"), 2);
}

TEST(BarracudaGi, VariantsResolveToTheSourceAndConfigTheGpuCompiles) {
  // the original and an empty genome: the original text (empty = use the embedded kernel), defaults
  evk::Variant orig;
  orig.kernel = "barracuda_exact";
  orig.id = "original";
  auto k = bc::resolve_kernel_variant(orig);
  EXPECT_TRUE(k.source.empty());
  EXPECT_EQ(k.config, bc::default_kernel_config());
  EXPECT_EQ(k.describe(), "original code, default config");
  EXPECT_TRUE(bc::resolve_kernel_variant(file_variant("  \n")).source.empty());
  // config only: the parameters change, the code does not (apart from the engine's loop guards)
  k = bc::resolve_kernel_variant(file_variant("BLOCK_W=256 cache_threads=4 kl_par=true occ_par=true"));
  EXPECT_EQ(k.edits, 0);
  EXPECT_EQ(k.config.at("BLOCK_W"), "256");
  EXPECT_EQ(k.config.at("cache_threads"), "4");
  EXPECT_EQ(k.config.at("kl_par"), "true");
  EXPECT_EQ(k.config.at("direct_sequence"), "true");  // untouched default
  EXPECT_EQ(k.describe(), "original code, BLOCK_W=256 cache_threads=4 kl_par=true occ_par=true");
  EXPECT_EQ(count(k.source, "tag = blk;"), 1);
  // code edits: an inserted statement, an unroll pragma, launch bounds on the real block size
  const std::string edits = "<_K_206>+<_K_205> <pragma_K_223><pragma_K4> <launchbounds_K_240><launchbounds_K1>";
  k = bc::resolve_kernel_variant(file_variant("BLOCK_W=128 " + edits));
  EXPECT_EQ(k.edits, 3);
  EXPECT_EQ(k.config.at("BLOCK_W"), "128");
  EXPECT_EQ(count(k.source, "tag = blk;"), 2);
  EXPECT_EQ(count(k.source, "#pragma unroll 4"), 1);
  EXPECT_EQ(count(k.source, "__launch_bounds__(BLOCK_W, 1)"), 1);
  EXPECT_EQ(k.describe(), "3 code edits, BLOCK_W=128");
  // errors name the file
  try {
    bc::resolve_kernel_variant(file_variant("<_K_9999>"));
    ADD_FAILURE() << "no error";
  } catch (const evk::InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("test.genome: ", 0), 0u) << e.what();
  }
#if defined(EVK_HAVE_CUDA)
  // NVRTC (no GPU needed) accepts the patched source with the config's options, to SASS for sm_90
  evk::NvrtcRequest req;
  req.source = k.source;
  req.options = bc::kernel_compile_options(k.config);
  req.cc = 90;
  const auto res = evk::nvrtc_compile(req);
  EXPECT_TRUE(res.ok) << res.log;
  EXPECT_GT(res.cubin.size(), 1000u);
#endif
}

TEST(BarracudaGi, GrammarCountsMatchTheKernel) {
  // Count the evolvable constructs in the kernel text between //@gi begin and //@gi end ourselves.
  const std::string src(barracuda_exact_kernel().text());
  std::istringstream in(src);
  std::string line;
  bool region = false;
  int fors = 0, ifs = 0, statements = 0;
  const std::regex decl(R"(^(const |u32 |u64 |int |unsigned |uint[24] |bwt_cache |return|break|continue))");
  while (std::getline(in, line)) {
    const std::string t = std::regex_replace(line, std::regex(R"(^\s+|\s+$)"), "");
    if (t == "//@gi begin") region = true;
    if (t == "//@gi end") region = false;
    if (!region || t.empty() || t[0] == '#' || t.rfind("//", 0) == 0) continue;
    if (t.rfind("for (", 0) == 0) ++fors;
    else if (std::regex_search(t, std::regex(R"(^(\} else )?if \()"))) ++ifs;
    else if (t.back() == ';' && !std::regex_search(t, decl)) ++statements;
  }
  // by hand: 9 loops (lines 168 176 182 187 215 219 223 269 278), 11 ifs (196 197 198 204 236 253
  // 280 282 285 301 303), 23 plain statements (170-173 178 179 183 188 205 206 217 220 225 227 231
  // 233 270 286 287 299 300 304 305)
  EXPECT_EQ(fors, 9);
  EXPECT_EQ(ifs, 11);
  EXPECT_EQ(statements, 23);
  auto r = evk::testing::run_tool("barracuda_exact", "gi grammar --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j.at("counts");
  EXPECT_EQ(j.at("entry"), bc::kKernelEntry);
  EXPECT_EQ(c.at("for2").get<int>(), fors);
  EXPECT_EQ(c.at("for3").get<int>(), fors);
  EXPECT_EQ(c.at("pragma").get<int>(), fors);  // one #pragma unroll choice before every loop
  EXPECT_EQ(c.at("IF").get<int>(), ifs);
  EXPECT_EQ(c.at("line").get<int>(), statements);
  EXPECT_EQ(c.at("config").get<int>(), static_cast<int>(bc::kernel_params().size()));
  EXPECT_EQ(c.at("restrict").get<int>(), 1);
  EXPECT_EQ(c.at("launchbounds").get<int>(), 1);
  EXPECT_FALSE(c.contains("volatile"));  // no __shared__ memory in this kernel
  EXPECT_FALSE(c.contains("for1"));      // every loop declares its variable in the header
  // the BNF text: header with the counts, launch bounds on BLOCK_W
  r = evk::testing::run_tool("barracuda_exact", "gi grammar");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# BNF grammar of cuda_find_exact_matches", 0), 0u) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("IF " + std::to_string(ifs) + ";"), std::string::npos);
  EXPECT_NE(r.out.find("<launchbounds_K2> ::= \"__launch_bounds__(BLOCK_W, 2)\""), std::string::npos);
  EXPECT_NE(r.out.find("<_K_205> ::= \"tag = blk;\""), std::string::npos);
}

#include <array>
#include <set>

#include "gi/gi_problem.hpp"
#include "core/match.hpp"

namespace {
// Occurrences of each base in BWT rows [0, row] ('$' excluded), counted one row at a time.
struct NaiveOcc {
  std::vector<std::array<std::uint32_t, 4>> upto;  // upto[r][c]: rows [0, r]
  explicit NaiveOcc(const bc::BwtIndex& idx) : upto(idx.seq_len + 1) {
    std::array<std::uint32_t, 4> run{0, 0, 0, 0};
    for (std::uint64_t r = 0; r <= idx.seq_len; ++r) {
      const int c = bc::bwt_row_char(idx, r);
      if (c >= 0) ++run[c];
      upto[r] = run;
    }
  }
  std::uint64_t operator()(std::uint64_t row, int c) const { return upto[row][c]; }
};
}  // namespace

TEST(BarracudaGiClasses, ClassesAndDisjointHoldOutCases) {
  auto p = bc::make_gi_problem();
  EXPECT_EQ(p->class_names(), (std::vector<std::string>{"ecoli", "large"}));
  for (const auto& cls : p->class_names()) {
    std::set<std::uint64_t> train, hold;
    for (std::uint64_t s = 0; s < 5000; ++s) {
      train.insert(bc::gi_case_spec(s, false, cls).read_seed);
      hold.insert(bc::gi_case_spec(s, true, cls).read_seed);
    }
    for (auto h : hold) EXPECT_EQ(train.count(h), 0u) << cls << ": hold-out read stream " << h << " used in training";
  }
  EXPECT_THROW(bc::gi_case_spec(0, false, "human"), evk::InputError);
  // the ecoli class keeps the reads of the engine before classes
  const bc::ReadCodes a = bc::gi_sample_reads(3, true, 50), b = bc::gi_sample_reads(3, false, 50);
  EXPECT_NE(a.codes, b.codes);
  auto cfg = bc::default_kernel_config();
  EXPECT_TRUE(p->constraints(cfg).empty());
  cfg["direct_sequence"] = "false";  // a local query buffer of MAX_READ_WORDS * 8 bases
  EXPECT_EQ(p->constraints(cfg), std::vector<std::string>{"read_length <= 1024"});
  // the class of a request: by reference length
  EXPECT_EQ(p->class_of({{"ref_length", 4.6e6}, {"read_length", 100}}), "ecoli");
  EXPECT_EQ(p->class_of({{"ref_length", 3.1e9}}), "large");
  EXPECT_EQ(p->class_of({}), "ecoli");
}

// The random BWT of the `large` class (here small): its occurrence table counts its string, backward
// search over it agrees with a naive search, walks of the LF mapping are hits, planted chains are
// repeats, and the read mix has every kind the paper's has.
TEST(BarracudaGiClasses, RandomBwtIsAValidBackwardSearchWorkload) {
  bc::RandomBwtOptions o;
  o.seq_len = 4000003;  // not a multiple of 128: a partial last block
  o.seed = 5;
  o.chains = 12;  // planted rows ~0.2% of the rows, as 2048 chains in the large class's 1 G rows
  o.chain_len = 256;
  const bc::RandomBwt rb = bc::make_random_bwt(o);
  const bc::BwtIndex& idx = rb.idx;
  EXPECT_EQ(idx.occ.size(), bc::occ_words(o.seq_len));
  EXPECT_EQ(idx.L2[4], o.seq_len);
  EXPECT_GE(idx.primary, 1u);
  EXPECT_LE(idx.primary, o.seq_len);
  EXPECT_EQ(bc::bwt_row_char(idx, idx.primary), -1);
  // occ_at against row-by-row counts at block edges, the '$' row and random rows
  const NaiveOcc naive(idx);
  std::vector<std::uint64_t> rows = {0, 1, 126, 127, 128, 129, idx.primary - 1, idx.primary, idx.primary + 1,
                                     o.seq_len - 1, o.seq_len - 129, 70000};
  for (std::uint64_t r = 5; r < o.seq_len; r += 9973) rows.push_back(r);
  for (std::uint64_t r : rows)
    for (int c = 0; c < 4; ++c) ASSERT_EQ(idx.occ_at(r, c), naive(r, c)) << "row " << r << " base " << c;
  for (int c = 0; c < 4; ++c) EXPECT_EQ(idx.occ_at(o.seq_len, c), idx.L2[c + 1] - idx.L2[c]);
  // planted chains: walking one whole spells a pattern with at least `copies` occurrences
  ASSERT_GE(rb.chains.size(), 9u);
  std::size_t intact = 0;
  for (const auto& ch : rb.chains) {
    std::string s;
    std::uint64_t row = ch.row;
    for (int t = 0; t < ch.length; ++t) {
      const int c = bc::bwt_row_char(idx, row);
      ASSERT_GE(c, 0);
      s += "TGCA"[c];
      row = bc::bwt_lf(idx, row, c);
    }
    bc::ReadCodes one;
    one.add(s.data(), s.size());
    intact += bc::match_cpu(idx, one, 1)[0].count() >= static_cast<std::uint64_t>(ch.copies);
  }
  EXPECT_EQ(intact, rb.chains.size());
  // reads: the CPU matcher against a naive backward search on the string; the mix
  const bc::ReadCodes reads = bc::gi_sample_walk_reads(rb, 77, 3000);
  const std::vector<bc::KL> kl = bc::match_cpu(idx, reads, 2);
  std::size_t hits = 0, repeats = 0, no_hit = 0, with_n = 0;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const bc::KL& r = kl[i];
    if (r.k == 0) ++with_n;
    else if (!r.hit()) ++no_hit;
    else {
      ++hits;
      repeats += r.count() > 1;
    }
    EXPECT_GE(reads.len[i], 36u);
    EXPECT_LE(reads.len[i], 250u);
  }
  const double n = static_cast<double>(reads.size());
  EXPECT_GT(hits / n, 0.60);          // 70% exact walks
  EXPECT_LT(hits / n, 0.80);
  EXPECT_GT(repeats / n, 0.04);        // 10% of the walks follow a planted chain
  EXPECT_GT(no_hit / n, 0.15);         // 15% substitutions + 10% random reads
  EXPECT_GT(with_n / n, 0.03);         // 5% with an N
  // naive backward search (row-by-row occ) on a few reads gives the same (k, l)
  for (std::size_t i = 0; i < 12; ++i) {
    std::uint64_t k = 0, l = idx.seq_len;
    bool amb = false;
    for (std::uint32_t j = 0; j < reads.len[i] && k <= l; ++j) {
      const int b = reads.codes[reads.offset[i] + j];
      if (b > 3) {
        amb = true;
        break;
      }
      const int c = 3 - b;
      k = idx.L2[c] + (k == 0 ? 0 : naive(k - 1, c)) + 1;
      l = idx.L2[c] + naive(l, c);
    }
    if (amb) {
      EXPECT_EQ(kl[i].k, 0u);
    } else {
      EXPECT_EQ(kl[i].k, k) << "read " << i;
      EXPECT_EQ(kl[i].l, l) << "read " << i;
    }
  }
  // deterministic: the same options give the same index and reads
  const bc::RandomBwt again = bc::make_random_bwt(o);
  EXPECT_TRUE(again.idx.occ == idx.occ);
  EXPECT_EQ(again.idx.primary, idx.primary);
  EXPECT_TRUE(bc::gi_sample_walk_reads(again, 77, 3000).codes == reads.codes);
  EXPECT_FALSE(bc::gi_sample_walk_reads(again, 78, 3000).codes == reads.codes);
}
