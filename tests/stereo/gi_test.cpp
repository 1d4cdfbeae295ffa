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
#include "core/ssd_gpu.hpp"
#include "io/io.hpp"
#include "core/synthetic.hpp"
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
  // the source a person reads: no engine prelude (that is --as-searched)
  EXPECT_EQ(slurp(t / "k2.cu").find("evk_gi_stamp"), std::string::npos);
  auto r3 = run_tool("stereo", "gi apply '" + (t / "one.genome").string() + "' --as-searched -o '" + (t / "k3.cu").string() + "'");
  ASSERT_EQ(r3.exit_code, 0) << r3.err;
  EXPECT_NE(slurp(t / "k3.cu").find("evk_gi_stamp"), std::string::npos);
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
  // An edit that leaves the disparity loop's variable unset (found by the H200 300 x 50 search of
  // 2026-11-23: `d0 = min_d` replaced by another loop's `row = 0`) is refused at compile time: it
  // passed the GPU check by luck (the register held min_d) and must never be selected or shipped.
  for (const char* g : {"OUT_TYPE=int STORE_disparityPixel=SHARED STORE_disparityMinSSD=SHARED DPER=4 MUL24=false "
                        "GPtexturereadmode=NoTextures ROWSperTHREAD=20 <pragma_K_168><pragma_K8> <for1_K_174><for1_K_240>",
                        "<for1_K_174><for1_K_193>"}) {
    auto r = compile(g);
    EXPECT_FALSE(r.ok) << g;
    EXPECT_NE(r.log.find("\"d0\" is used before its value is set"), std::string::npos) << g << "\n" << r.log;
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

#include <set>
#include <tuple>

#include "gi/gi_problem.hpp"

// The size classes the issue names, and hold-out cases that never appear in training.
TEST(StereoGiClasses, ClassesAndDisjointHoldOutCases) {
  auto p = make_gi_problem();
  EXPECT_EQ(p->class_names(), (std::vector<std::string>{"paper", "middlebury", "kitti", "1080p"}));
  const std::map<std::string, std::pair<int, int>> size = {
      {"paper", {320, 240}}, {"middlebury", {450, 375}}, {"kitti", {1242, 375}}, {"1080p", {1920, 1080}}};
  using Key = std::tuple<int, int, int, std::uint64_t>;
  for (const auto& cls : p->class_names()) {
    std::set<Key> train, hold;
    std::set<int> ranges;
    for (std::uint64_t s = 0; s < 3000; ++s) {
      const GiCase t = gi_case(s, false, cls), h = gi_case(s, true, cls);
      EXPECT_EQ(std::make_pair(t.width, t.height), size.at(cls));
      train.insert({t.width, t.height, t.max_disparity, t.pair_seed});
      hold.insert({h.width, h.height, h.max_disparity, h.pair_seed});
      ranges.insert(h.max_disparity + 1);
    }
    // the search's training seeds are (seed << 20) + generation: far beyond 3000, still even pair seeds
    train.insert({gi_case((1ull << 20) + 3, false, cls).width, 0, 0, gi_case((1ull << 20) + 3, false, cls).pair_seed});
    for (const auto& k : hold) EXPECT_EQ(train.count(k), 0u) << cls << " hold-out case used in training";
    for (const auto& k : train) EXPECT_EQ(std::get<3>(k) % 2, 0u);
    EXPECT_EQ(hold.size(), 3000u);
    if (cls == "paper") {
      EXPECT_EQ(ranges, (std::set<int>{51}));
      EXPECT_EQ(p->probe_cases(cls), 1);
    } else {
      EXPECT_EQ(ranges, (std::set<int>{64, 128, 256}));
      EXPECT_EQ(p->probe_cases(cls), 3);  // minimize and tune see every range
    }
  }
  EXPECT_THROW(gi_case(0, false, "4k"), evk::InputError);
  // the class of a request: the nearest by pixel count
  auto cls = [&](int w, int h) { return p->class_of({{"width", w}, {"height", h}, {"max_disparity", 63}}); };
  EXPECT_EQ(cls(320, 240), "paper");
  EXPECT_EQ(cls(384, 288), "paper");       // Tsukuba
  EXPECT_EQ(cls(434, 383), "middlebury");  // Venus
  EXPECT_EQ(cls(450, 375), "middlebury");
  EXPECT_EQ(cls(640, 480), "kitti");
  EXPECT_EQ(cls(1242, 375), "kitti");
  EXPECT_EQ(cls(1282, 1110), "1080p");     // Aloe
  EXPECT_EQ(cls(3840, 2160), "1080p");
  for (const auto& c : p->class_names()) {
    const GiCase k = gi_case(0, true, c);
    EXPECT_EQ(cls(k.width, k.height), c);
  }
}

TEST(StereoGiClasses, ConstraintsOfAConfiguration) {
  auto p = make_gi_problem();
  evk::gi::Config c = default_config();
  EXPECT_TRUE(p->constraints(c).empty());
  c["OUT_TYPE"] = "uchar";  // 255 means -1 and 254 is the poison
  EXPECT_EQ(p->constraints(c), std::vector<std::string>{"max_disparity <= 253"});
  c["OUT_TYPE"] = "short";
  EXPECT_TRUE(p->constraints(c).empty());
  c["XHALO"] = "true";  // dedicated halo threads: BLOCK_W > window - 1
  c["BLOCK_W"] = "32";
  EXPECT_EQ(p->constraints(c), std::vector<std::string>{"window <= 31"});
  c["BLOCK_W"] = "8";  // cannot even run the paper's 11x11 window: an illegal configuration
  EXPECT_THROW(p->constraints(c), evk::InputError);
  // the window limit is exact: the widest window runs, the next one does not
  c["BLOCK_W"] = "32";
  EXPECT_NO_THROW(KernelSettings::from(c, 31 / 2));
  EXPECT_THROW(KernelSettings::from(c, 33 / 2), evk::InputError);
  c["OUT_TYPE"] = "uchar";
  const auto r = p->constraints(c);
  EXPECT_EQ(r, (std::vector<std::string>{"max_disparity <= 253", "window <= 31"}));
  // every line parses, with a property the problem names
  const auto names = p->property_names();
  for (const auto& line : r) {
    const auto k = evk::gi::parse_constraint(line);
    EXPECT_NE(std::find(names.begin(), names.end(), k.name), names.end()) << line;
  }
}

// gi install / list / remove manage the overlay directory; bad genome files are refused before copying.
TEST(StereoGiCli, InstallListRemoveTheOverlay) {
  if (evk::nvrtc_version().empty()) GTEST_SKIP() << "no NVRTC: install cannot check that a genome compiles";
  evk::testing::TempDir t;
  const std::string ov = "--overlay '" + (t / "overlay").string() + "'";
  // the overlay's variants in `gi list --json` (the built-in, shipped ones are listed too)
  auto overlay_variants = [](const std::string& out) {
    nlohmann::json a = nlohmann::json::array();
    const nlohmann::json all = nlohmann::json::parse(out);
    for (const auto& v : all["variants"])
      if (v["source"] != "built-in") a.push_back(v);
    return a;
  };
  auto r = run_tool("stereo", "gi list --json " + ov);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(overlay_variants(r.out).empty()) << r.out;
  const std::string header = "# evokernels genome v1\n# kernel: stereo\n# id: h200-paper\n# device: NVIDIA H200\n# cc: 9.0\n"
                             "# classes: paper, kitti\n# requires: max_disparity <= 253\n"
                             "# validated: paper cases=10 speedup=29.650 (29.520..29.810) pretuned=1.388 (1.378..1.390) max_error=0\n";
  std::ofstream(t / "good.genome") << header << "OUT_TYPE=uchar DPER=2 ROWSperTHREAD=1 <pragma_K_187><pragma_K6>\n";
  r = run_tool("stereo", "gi install '" + (t / "good.genome").string() + "' " + ov);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path dest = t / "overlay" / "stereo" / "h200-paper.genome";
  ASSERT_TRUE(fs::exists(dest)) << r.out;
  EXPECT_EQ(slurp(dest), slurp(t / "good.genome"));
  r = run_tool("stereo", "gi install '" + (t / "good.genome").string() + "' " + ov);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already installed"), std::string::npos) << r.err;
  EXPECT_EQ(run_tool("stereo", "gi install '" + (t / "good.genome").string() + "' --force " + ov).exit_code, 0);
  // list: the header keys
  r = run_tool("stereo", "gi list --json " + ov);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = overlay_variants(r.out);
  ASSERT_EQ(j.size(), 1u) << r.out;
  const auto& v = j[0];
  EXPECT_EQ(v["id"], "h200-paper");
  EXPECT_EQ(v["source"], "overlay");
  EXPECT_EQ(v["cc"], "9.0");
  EXPECT_EQ(v["keys"]["classes"], "paper, kitti");
  EXPECT_EQ(v["keys"]["requires"], nlohmann::json::array({"max_disparity <= 253"}));
  EXPECT_EQ(v["keys"]["validated"].size(), 1u);
  r = run_tool("stereo", "gi list " + ov);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("h200-paper"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("requires max_disparity <= 253"), std::string::npos) << r.out;
  // bad files: one line naming the file, nothing copied
  struct Bad {
    std::string name, text, needle;
  } bad[] = {
      {"other", "# kernel: reg_deform\n# cc: 9.0\nBLOCK_SIZE=64\n", "reg_deform"},
      {"nocc", "# kernel: stereo\nBLOCK_W=128\n", "cc"},
      {"cls", "# kernel: stereo\n# cc: 9.0\n# classes: paper, 4k\nBLOCK_W=128\n", "4k"},
      {"req", "# kernel: stereo\n# cc: 9.0\n# requires: depth <= 3\nBLOCK_W=128\n", "depth"},
      {"reqop", "# kernel: stereo\n# cc: 9.0\n# requires: window < 3\nBLOCK_W=128\n", "requires"},
      {"val", "# kernel: stereo\n# cc: 9.0\n# validated: vga cases=1 speedup=1\nBLOCK_W=128\n", "vga"},
      {"rule", "# kernel: stereo\n# cc: 9.0\n<_K_9999>\n", "_K_9999"},
      {"illegal", "# kernel: stereo\n# cc: 9.0\nDPER=3 BLOCK_W=512\n", "DPER"},
  };
  for (const auto& b : bad) {
    std::ofstream(t / (b.name + ".genome")) << b.text;
    r = run_tool("stereo", "gi install '" + (t / (b.name + ".genome")).string() + "' " + ov);
    EXPECT_EQ(r.exit_code, 2) << b.name << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(b.name + ".genome"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(b.needle), std::string::npos) << b.name << ": " << r.err;
    EXPECT_FALSE(fs::exists(t / "overlay" / "stereo" / (b.name + ".genome")));
  }
  // remove
  r = run_tool("stereo", "gi remove h200-paper " + ov);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dest));
  r = run_tool("stereo", "gi remove h200-paper " + ov);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("h200-paper"), std::string::npos) << r.err;
}

// Options checked before any GPU work: exit 2 with one line.
TEST(StereoGiCli, BadClassesAndDevicesExit2) {
  evk::testing::TempDir t;
  std::ofstream(t / "g.genome") << "# kernel: stereo\nBLOCK_W=128\n";
  struct Case {
    std::string args, needle;
  } cases[] = {
      {"gi run --class 4k --out '" + (t / "r1").string() + "'", "4k"},
      {"gi run --devices 0,0 --out '" + (t / "r2").string() + "'", "twice"},
      {"gi run --devices x --out '" + (t / "r3").string() + "'", "--devices"},
      {"gi run --devices 0 --device 1 --out '" + (t / "r4").string() + "'", "--devices"},
      {"gi validate '" + (t / "g.genome").string() + "' --class 4k", "4k"},
      {"gi tune --class vga", "vga"},
      {"gi evolve --class vga --out '" + (t / "e").string() + "'", "vga"},
  };
  for (const auto& c : cases) {
    auto r = run_tool("stereo", c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.args << ": " << r.err;
  }
  for (const char* d : {"r1", "r2", "r3", "r4"}) EXPECT_FALSE(fs::exists(t / d)) << d;
}
