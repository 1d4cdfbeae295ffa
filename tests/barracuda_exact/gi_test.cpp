// The GI integration without a GPU: `map --kernel FILE` with bad genomes (exit 2, one line, no
// output), `gi apply` of an empty genome (the original text), evolved variants resolved into the
// source + config the GPU backend compiles (and NVRTC accepts), `gi grammar` counts vs the kernel.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "core/kernel_config.hpp"
#include "core/kernel_variant.hpp"
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
