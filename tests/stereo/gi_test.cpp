// The stereo tool's gi integration without a GPU: genome files given to --kernel are checked before
// any device work (bad ones exit 2 with one line naming the file), `gi apply` of an empty genome
// reproduces the kernel file byte for byte, and `gi grammar` counts what a reader counts in the
// kernel source (loops, if conditions, plain statements).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "evk/dispatch.hpp"
#include "evk/error.hpp"
#include "evk/stereo/gpu.hpp"
#include "evk/stereo/io.hpp"
#include "evk/stereo/synthetic.hpp"
#include "evk_testing.hpp"

using namespace evk::stereo;
using evk::testing::run_tool;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}
int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
void write_genome(const fs::path& p, const std::string& kernel, const std::string& body) {
  std::ofstream(p) << "# evokernels genome v1\n# kernel: " << kernel << "\n# cc: 9.0\n" << body << "\n";
}

// What a reader counts between //@gi begin and //@gi end of the kernel file.
struct SourceCounts {
  int loops = 0, ifs = 0, statements = 0;
};
SourceCounts count_source(const std::string& src) {
  SourceCounts c;
  std::istringstream in(src);
  std::string line;
  bool inside = false;
  const std::regex for_re(R"(^\s*for\s*\()"), if_re(R"(^\s*(else\s+)?if\s*\()"),
      decl_re(R"(^\s*(const\s|int\s*\*|int\s|unsigned\s|bool\s|float\s))");
  while (std::getline(in, line)) {
    if (line.find("//@gi begin") != std::string::npos) inside = true;
    if (line.find("//@gi end") != std::string::npos) inside = false;
    if (!inside) continue;
    if (std::regex_search(line, for_re)) ++c.loops;
    else if (std::regex_search(line, if_re)) ++c.ifs;
    else if (!line.empty() && line.back() == ';' && !std::regex_search(line, decl_re)) ++c.statements;
  }
  return c;
}
}  // namespace

TEST(StereoGiCli, BadGenomeFilesExit2WithOneLine) {
  evk::testing::TempDir t;
  SyntheticPair sp = make_synthetic_pair(40, 30, 10, 3);
  write_pgm8(t / "L.pgm", sp.left);
  write_pgm8(t / "R.pgm", sp.right);
  write_genome(t / "other.genome", "reg_deform", "BLOCK_W=128");
  write_genome(t / "unknown_rule.genome", "stereo", "<_K_9999>");
  write_genome(t / "garbage.genome", "stereo", "this is not a genome");
  write_genome(t / "bad_value.genome", "stereo", "BLOCK_W=100");
  write_genome(t / "illegal_combo.genome", "stereo", "DPER=3 BLOCK_W=512");  // 1536 threads
  write_genome(t / "wrong_type.genome", "stereo", "<IF_K_166><_K_170>");     // a statement as a condition
  std::ofstream(t / "noheader.genome") << "BLOCK_W=128\n";
  struct Bad {
    std::string file, needle;
  } cases[] = {
      {"other.genome", "reg_deform"},     {"unknown_rule.genome", "_K_9999"}, {"garbage.genome", "genome"},
      {"bad_value.genome", "BLOCK_W"},    {"illegal_combo.genome", "DPER"},   {"wrong_type.genome", "genome"},
      {"noheader.genome", "kernel"},      {"missing.genome", "missing.genome"},
  };
  for (const auto& c : cases) {
    const std::string args = "disparity '" + (t / "L.pgm").string() + "' '" + (t / "R.pgm").string() + "' -o '" +
                             (t / "out.pfm").string() + "' --max-disparity 10 --backend cpu --kernel '" +
                             (t / c.file).string() + "'";
    auto r = run_tool("stereo", args);
    EXPECT_EQ(r.exit_code, 2) << c.file << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.file << "\n" << r.err;
    EXPECT_NE(r.err.find(c.file), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.file << ": " << r.err;
    EXPECT_FALSE(fs::exists(t / "out.pfm")) << c.file;
  }
  // A well-formed genome passes the check and is refused only for want of the GPU backend.
  write_genome(t / "good.genome", "stereo", "ROWSperTHREAD=20 <_K_202>+<_K_179>");
  auto r = run_tool("stereo", "disparity '" + (t / "L.pgm").string() + "' '" + (t / "R.pgm").string() + "' -o '" +
                                  (t / "out.pfm").string() + "' --backend cpu --kernel '" + (t / "good.genome").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("GPU backend"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("bad genome"), std::string::npos) << r.err;
}

TEST(StereoGiCli, MakeKernelVariantAppliesTheGenome) {
  evk::Variant v;
  v.id = "test";
  EXPECT_TRUE(make_kernel_variant(v).is_original());
  EXPECT_TRUE(make_kernel_variant(v).source.empty());
  v.genome = "ROWSperTHREAD=20 DPER=2 <_K_202>+<_K_179>";
  KernelVariant k = make_kernel_variant(v);
  EXPECT_FALSE(k.is_original());
  EXPECT_EQ(k.config.at("ROWSperTHREAD"), "20");
  EXPECT_EQ(k.config.at("DPER"), "2");
  EXPECT_EQ(k.config.at("BLOCK_W"), "64");
  // The inserted copy of line 179 ("ssd = 0;") sits right before line 202's own "ssd = 0;".
  EXPECT_NE(k.source.find("ssd = 0;\n      ssd = 0;"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("EVK_GI_OK"), std::string::npos);  // evolved sources carry loop guards
  // Launch bounds use the block's real thread count.
  v.genome = "<launchbounds_K_130><launchbounds_K0>";
  EXPECT_NE(make_kernel_variant(v).source.find("__launch_bounds__((BLOCK_W * DPER))"), std::string::npos);
  v.genome = "<_K_3>";
  EXPECT_THROW(make_kernel_variant(v), evk::InputError);
}

TEST(StereoGiCli, ApplyEmptyGenomeReproducesTheKernelFile) {
  evk::testing::TempDir t;
  std::ofstream(t / "empty.genome") << "# evokernels genome v1\n# kernel: stereo\n";
  auto r = run_tool("stereo", "gi apply '" + (t / "empty.genome").string() + "' -o '" + (t / "k.cu").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string original = slurp(EVK_STEREO_KERNEL);
  ASSERT_GT(original.size(), 1000u);
  EXPECT_EQ(slurp(t / "k.cu"), original);
  // A one-edit genome changes the text (the test can fail).
  std::ofstream(t / "one.genome") << "# kernel: stereo\n<_K_235>\n";
  auto r2 = run_tool("stereo", "gi apply '" + (t / "one.genome").string() + "' -o '" + (t / "k2.cu").string() + "'");
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_NE(slurp(t / "k2.cu"), original);
  EXPECT_NE(slurp(t / "k2.cu").find("<_K_235> deleted"), std::string::npos);
}

TEST(StereoGiCli, GrammarCountsMatchTheSource) {
  const SourceCounts sc = count_source(slurp(EVK_STEREO_KERNEL));
  // What the kernel has today (a reader's count; the grammar must agree).
  EXPECT_EQ(sc.loops, 9);
  EXPECT_EQ(sc.ifs, 9);
  EXPECT_EQ(sc.statements, 25);
  auto r = run_tool("stereo", "gi grammar --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("counts")) << r.out.substr(0, 500);
  const auto& c = j["counts"];
  EXPECT_EQ(c["line"].get<int>(), sc.statements);
  EXPECT_EQ(c["IF"].get<int>(), sc.ifs);
  // No loop declares its variable, so each has all three header parts and one pragma rule.
  for (const char* k : {"for1", "for2", "for3", "pragma"}) EXPECT_EQ(c[k].get<int>(), sc.loops) << k;
  EXPECT_EQ(c["config"].get<int>(), 14);
  EXPECT_EQ(c["restrict"].get<int>(), 1);
  EXPECT_EQ(c["launchbounds"].get<int>(), 1);
  // The BNF text: one header count per type and the launch bounds on BLOCK_W * DPER threads.
  auto b = run_tool("stereo", "gi grammar");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("BLOCK_W * DPER"), std::string::npos) << b.out.substr(0, 2000);
  EXPECT_NE(b.out.find("<IF_K_166>"), std::string::npos);
  EXPECT_NE(b.out.find("<for2_K_174>"), std::string::npos);
  EXPECT_NE(b.out.find("<_K_231>"), std::string::npos);
}

#if defined(EVK_HAVE_CUDA)
#include "evk/cuda_library.hpp"
// The genomes the GPU tests run compile through NVRTC (no GPU needed), a broken edit does not.
TEST(StereoGiCli, GenomeVariantsCompileWithNvrtc) {
  auto compile = [](const std::string& genome) {
    evk::Variant v;
    v.id = "t";
    v.genome = genome;
    KernelVariant k = make_kernel_variant(v);
    evk::NvrtcRequest req;
    req.source = k.source;
    req.name = "stereo.cu";
    req.options = KernelSettings::from(k.config).compile_options();
    req.cc = 90;
    return evk::nvrtc_compile(req);
  };
  for (const char* g : {"cache=L1 STORE_disparityPixel=SHARED STORE_disparityMinSSD=SHARED DPER=2 XHALO=true "
                        "GPtexturereadmode=NoTextures ROWSperTHREAD=5",
                        "BLOCK_W=128 ROWSperTHREAD=20 <_K_202>+<_K_179> <_K_216> <pragma_K_205><pragma_K0> "
                        "<launchbounds_K_130><launchbounds_K0>",
                        "<_K_231>"}) {
    auto r = compile(g);
    EXPECT_TRUE(r.ok) << g << "\n" << r.log;
  }
  // The genomes of the recorded H200 run still fit the kernel (line numbers, scopes) and compile.
  for (const char* f : {"best", "min", "pretuned", "evolved"}) {
    evk::Variant v = evk::read_genome_file(std::string(EVK_STEREO_GI_RUN) + "/" + f + ".genome");
    ASSERT_EQ(v.kernel, "stereo");
    evk::NvrtcRequest req;
    KernelVariant k = make_kernel_variant(v);
    req.source = k.source;
    req.options = KernelSettings::from(k.config).compile_options();
    req.cc = 90;
    auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << f << "\n" << r.log;
  }
  // Negative control (the check is not vacuous): with its loop-guard macro renamed away the
  // patched source does not compile.
  evk::Variant v;
  v.genome = "<_K_202>+<_K_179>";
  std::string src = make_kernel_variant(v).source;
  for (auto pos = src.find("#define EVK_GI_OK"); pos != std::string::npos; pos = src.find("#define EVK_GI_OK"))
    src.replace(pos, 17, "#define EVK_GI_XX");  // every definition (with and without the deadline)
  evk::NvrtcRequest req;
  req.source = src;
  req.cc = 90;
  EXPECT_FALSE(evk::nvrtc_compile(req).ok);
}
#endif
