// The dispatch registry's fallback chain and overlay precedence, with fake devices (no GPU needed).
#include <fstream>

#include "evk/dispatch.hpp"
#include "evk/embedded.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"

using evk::DeviceKey;
using evk::Registry;
using evk::Variant;
using evk::VariantSource;

namespace {
Variant evolved(const std::string& id, int cc, const std::string& dev = "") {
  Variant v;
  v.kernel = "k";
  v.id = id;
  v.cc = cc;
  v.device_name = dev;
  v.genome = "BLOCK_W=128";
  return v;
}
void write_genome(const std::filesystem::path& p, const std::string& kernel, const std::string& cc,
                  const std::string& dev, const std::string& body = "<_K_1>") {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream f(p);
  f << "# evokernels genome v1\n# kernel: " << kernel << "\n";
  if (!cc.empty()) f << "# cc: " << cc << "\n";
  if (!dev.empty()) f << "# device: " << dev << "\n";
  f << body << "\n";
}
Registry full() {
  Registry r;
  r.add_kernel("k");
  r.add(evolved("sm80", 80));
  r.add(evolved("sm86", 86));
  r.add(evolved("sm90", 90));
  r.add(evolved("sm90-h200", 90, "NVIDIA H200"));
  return r;
}
}  // namespace

TEST(Registry, ExactDeviceWins) {
  auto s = full().select("k", DeviceKey{90, "NVIDIA H200"});
  EXPECT_EQ(s.variant.id, "sm90-h200");
  EXPECT_NE(s.rule.find("exact"), std::string::npos);
}

TEST(Registry, SameComputeCapabilityForOtherDevice) {
  auto s = full().select("k", DeviceKey{90, "NVIDIA H100 80GB HBM3"});
  EXPECT_EQ(s.variant.id, "sm90");
  EXPECT_NE(s.rule.find("same compute capability"), std::string::npos);
}

TEST(Registry, SameCcDeviceSpecificIsUsedWhenNoGenericOne) {
  Registry r;
  r.add_kernel("k");
  r.add(evolved("sm90-h200", 90, "NVIDIA H200"));
  EXPECT_EQ(r.select("k", DeviceKey{90, "NVIDIA H100"}).variant.id, "sm90-h200");
}

// Another architecture runs the original unless a variant was validated there (issue 38): a lower
// cc alone is not enough, and the rule says so.
TEST(Registry, OtherArchitecturesRunTheOriginalUnlessAVariantWasValidatedThere) {
  auto r = full();
  for (const DeviceKey& d : {DeviceKey{75, "Tesla T4"}, DeviceKey{89, "NVIDIA L4"}, DeviceKey{87, "Orin"},
                             DeviceKey{100, "NVIDIA B200"}, DeviceKey{120, "RTX 5090"}}) {
    const auto s = r.select("k", d);
    EXPECT_TRUE(s.variant.is_original()) << d.cc << " got " << s.variant.id;
    EXPECT_NE(s.rule.find("no variant evolved or validated on compute capability"), std::string::npos) << s.rule;
  }
  Variant v = evolved("sm86-checked", 86);
  v.validated_cc = {89, 120};
  r.add(v);
  const auto l4 = r.select("k", DeviceKey{89, "NVIDIA L4"});
  EXPECT_EQ(l4.variant.id, "sm86-checked");
  EXPECT_NE(l4.rule.find("validated on compute capability 8.9 (evolved on 8.6)"), std::string::npos) << l4.rule;
  EXPECT_EQ(r.select("k", DeviceKey{120, "RTX 5090"}).variant.id, "sm86-checked");
  EXPECT_TRUE(r.select("k", DeviceKey{87, "Orin"}).variant.is_original());
  // the header, as gi would write it
  const Variant p = evk::parse_genome_text("# kernel: k\n# cc: 9.0\n# validated-cc: 10.0, sm_120\nX=1\n", "t");
  EXPECT_EQ(p.validated_cc, (std::vector<int>{100, 120}));
}

TEST(Registry, NeverPicksANewerArchitecture) {
  Registry r;
  r.add_kernel("k");
  r.add(evolved("sm90", 90));
  auto s = r.select("k", DeviceKey{80, "A100"});
  EXPECT_TRUE(s.variant.is_original());
}

TEST(Registry, OriginalWhenNothingFits) {
  auto s = full().select("k", DeviceKey{75, "T4"});
  EXPECT_TRUE(s.variant.is_original());
  EXPECT_EQ(s.variant.id, "original");
}

TEST(Registry, ForcedOriginalAndEvolved) {
  auto r = full();
  EXPECT_TRUE(r.select("k", DeviceKey{90, "NVIDIA H200"}, "original").variant.is_original());
  EXPECT_EQ(r.select("k", DeviceKey{90, "NVIDIA H200"}, "evolved").variant.id, "sm90-h200");
  EXPECT_THROW(r.select("k", DeviceKey{75, "T4"}, "evolved"), evk::InputError);
}

TEST(Registry, UnknownKernelIsAnInputError) { EXPECT_THROW(full().select("nope", DeviceKey{90, "x"}), evk::InputError); }

TEST(Registry, OverlayTakesPrecedenceAtEachStep) {
  evk::testing::TempDir dir;
  write_genome(dir / "k" / "mine.genome", "k", "9.0", "");
  write_genome(dir / "k" / "older.genome", "k", "8.0", "");
  write_genome(dir / "other" / "x.genome", "other_kernel", "9.0", "");  // not registered: ignored
  auto r = full();
  auto problems = r.load_overlay(dir.path());
  EXPECT_TRUE(problems.empty());
  // The exact built-in match still wins the first step (the overlay has no device-specific one)...
  EXPECT_EQ(r.select("k", DeviceKey{90, "NVIDIA H200"}).variant.id, "sm90-h200");
  // ...but at the same-cc step the overlay beats the built-in sm90.
  auto s = r.select("k", DeviceKey{90, "NVIDIA H100"});
  EXPECT_EQ(s.variant.id, "mine");
  EXPECT_EQ(s.variant.source, VariantSource::overlay);
  // and on another architecture neither runs unless validated there
  Registry r2;
  r2.add_kernel("k");
  r2.add(evolved("sm80", 80));
  r2.load_overlay(dir.path());
  EXPECT_TRUE(r2.select("k", DeviceKey{86, "A10"}).variant.is_original());
}

TEST(Registry, OverlayProblemsAreReportedNotFatal) {
  evk::testing::TempDir dir;
  write_genome(dir / "nocc.genome", "k", "", "");
  write_genome(dir / "bad.genome", "k", "nine", "");
  { std::ofstream(dir / "nokernel.genome") << "<_K_3>\n"; }
  auto r = full();
  auto problems = r.load_overlay(dir.path());
  EXPECT_EQ(problems.size(), 3u);
  EXPECT_EQ(r.select("k", DeviceKey{90, "NVIDIA H100"}).variant.id, "sm90");
}

TEST(Registry, GenomeFileChoice) {
  evk::testing::TempDir dir;
  write_genome(dir / "g.genome", "k", "9.0", "NVIDIA H200", "<_K_1>\nBLOCK_W=64");
  auto s = full().select("k", DeviceKey{75, "T4"}, (dir / "g.genome").string());
  EXPECT_EQ(s.variant.source, VariantSource::file);
  EXPECT_EQ(s.variant.genome, "<_K_1>\nBLOCK_W=64");
  EXPECT_EQ(s.variant.cc, 90);
  EXPECT_EQ(s.variant.device_name, "NVIDIA H200");
  write_genome(dir / "o.genome", "other", "9.0", "");
  EXPECT_THROW(full().select("k", DeviceKey{90, "x"}, (dir / "o.genome").string()), evk::InputError);
  EXPECT_THROW(full().select("k", DeviceKey{90, "x"}, (dir / "missing.genome").string()), evk::InputError);
}

TEST(Registry, DefaultOverlayDirFollowsXdg) {
  setenv("EVK_OVERLAY_DIR", "", 1);
  setenv("XDG_DATA_HOME", "/tmp/xdgtest", 1);
  EXPECT_EQ(evk::default_overlay_dir(), std::filesystem::path("/tmp/xdgtest/evokernels/evolved"));
  setenv("EVK_OVERLAY_DIR", "/tmp/ov", 1);
  EXPECT_EQ(evk::default_overlay_dir(), std::filesystem::path("/tmp/ov"));
  unsetenv("EVK_OVERLAY_DIR");
  unsetenv("XDG_DATA_HOME");
}

// ---- applicability: size classes, constraints, built-in (embedded) variants --------------------
namespace {
Variant classed(const std::string& id, int cc, const std::string& dev, std::vector<std::string> classes,
                std::vector<evk::Constraint> cs = {}) {
  Variant v = evolved(id, cc, dev);
  v.classes = std::move(classes);
  v.constraints = std::move(cs);
  return v;
}
evk::Request req(const std::string& cls, std::map<std::string, double> props = {}) { return {cls, std::move(props)}; }
// The fake devices of issue 10: two Hopper parts, an Ampere, a future and an old architecture.
const DeviceKey kH200{90, "NVIDIA H200"}, kH100{90, "NVIDIA H100 80GB HBM3"}, kA100{80, "NVIDIA A100-SXM4-80GB"},
    kFuture{100, "NVIDIA B200"}, kT4{75, "Tesla T4"};
}  // namespace

TEST(RegistryApplicability, ParsesClassesAndConstraints) {
  Variant v = evk::parse_genome_text(
      "# evokernels genome v1\n# kernel: k\n# cc: 9.0\n# classes: 1080p, kitti\n# requires: max_disparity <= 253\n"
      "# requires: window==11\n# validated: 1080p cases=10 speedup=1.5 (1.4..1.6)\nBLOCK_W=64\n",
      "t.genome");
  EXPECT_EQ(v.classes, (std::vector<std::string>{"1080p", "kitti"}));
  ASSERT_EQ(v.constraints.size(), 2u);
  EXPECT_EQ(v.constraints[0].name, "max_disparity");
  EXPECT_EQ(v.constraints[0].op, "<=");
  EXPECT_EQ(v.constraints[0].value, 253);
  EXPECT_EQ(v.constraints[1].name, "window");
  EXPECT_EQ(v.constraints[1].op, "==");
  EXPECT_EQ(v.header_value("validated"), "1080p cases=10 speedup=1.5 (1.4..1.6)");
  EXPECT_EQ(v.genome, "BLOCK_W=64");
  EXPECT_TRUE(evk::parse_genome_text("# kernel: k\n# classes: all\nX=1\n", "t").classes.empty());
}

TEST(RegistryApplicability, BadConstraintLinesAreInputErrorsNamingTheFile) {
  for (const char* bad : {"max_disparity < 253", "max_disparity <= ", "<= 3", "a b <= 3", "x <= 3abc", "x"}) {
    try {
      evk::parse_genome_text(std::string("# kernel: k\n# requires: ") + bad + "\nX=1\n", "f.genome");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const evk::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("f.genome"), std::string::npos) << e.what();
    }
  }
}

TEST(RegistryApplicability, ConstraintOperators) {
  evk::Constraint le{"d", "<=", 10}, ge{"d", ">=", 10}, eq{"d", "==", 10}, ne{"d", "!=", 10};
  EXPECT_TRUE(le.holds(10));
  EXPECT_FALSE(le.holds(11));
  EXPECT_TRUE(ge.holds(10));
  EXPECT_FALSE(ge.holds(9));
  EXPECT_TRUE(eq.holds(10));
  EXPECT_FALSE(eq.holds(9));
  EXPECT_TRUE(ne.holds(9));
  EXPECT_FALSE(ne.holds(10));
}

TEST(RegistryApplicability, SizeClassIsPreferredAndAMisfitFallsDownTheChain) {
  Registry r;
  r.add_kernel("k");
  r.add(classed("h200-all", 90, "NVIDIA H200", {}));
  r.add(classed("h200-1080p", 90, "NVIDIA H200", {"1080p"}));
  r.add(classed("sm90-kitti", 90, "", {"kitti"}));
  r.add(classed("sm80-all", 80, "", {}));
  // exact device: the class-specific variant beats the all-classes one
  EXPECT_EQ(r.select("k", kH200, "auto", req("1080p")).variant.id, "h200-1080p");
  EXPECT_EQ(r.select("k", kH200, "auto", req("middlebury")).variant.id, "h200-all");
  // H100: no exact match; same cc: only sm90-kitti (kitti) and the H200 ones
  EXPECT_EQ(r.select("k", kH100, "auto", req("kitti")).variant.id, "sm90-kitti");
  auto s = r.select("k", kH100, "auto", req("1080p"));
  EXPECT_EQ(s.variant.id, "h200-1080p");  // same cc, evolved on another device, validated for 1080p
  EXPECT_NE(s.rule.find("size class 1080p"), std::string::npos) << s.rule;
  // A100 (8.0): the sm80 variant; the future cc 10.0 part: the original (nothing validated there); T4: original
  EXPECT_EQ(r.select("k", kA100, "auto", req("1080p")).variant.id, "sm80-all");
  EXPECT_TRUE(r.select("k", kFuture, "auto", req("kitti")).variant.is_original());
  EXPECT_TRUE(r.select("k", kT4, "auto", req("kitti")).variant.is_original());
}

TEST(RegistryApplicability, ConstraintMisfitFallsBackToTheOriginalAndSaysWhy) {
  Registry r;
  r.add_kernel("k");
  r.add(classed("uchar", 90, "NVIDIA H200", {}, {{"max_disparity", "<=", 253}}));
  EXPECT_EQ(r.select("k", kH200, "auto", req("1080p", {{"max_disparity", 63}})).variant.id, "uchar");
  auto s = r.select("k", kH200, "auto", req("1080p", {{"max_disparity", 255}}));
  EXPECT_TRUE(s.variant.is_original());
  EXPECT_NE(s.rule.find("requires max_disparity <= 253"), std::string::npos) << s.rule;
  // a property the request does not give is not checked
  EXPECT_EQ(r.select("k", kH200, "auto", req("", {})).variant.id, "uchar");
  // --kernel evolved refuses rather than running a variant that cannot run the job
  EXPECT_THROW(r.select("k", kH200, "evolved", req("1080p", {{"max_disparity", 255}})), evk::InputError);
}

TEST(RegistryApplicability, AMisfitAtOneStepUsesTheNextStep) {
  Registry r;
  r.add_kernel("k");
  r.add(classed("h200-small", 90, "NVIDIA H200", {"320x240"}));
  Variant older = classed("sm86-all", 86, "", {});
  older.validated_cc = {90};  // checked on Hopper too
  r.add(older);
  r.add(classed("sm86-unchecked", 86, "", {}));
  EXPECT_EQ(r.select("k", kH200, "auto", req("320x240")).variant.id, "h200-small");
  EXPECT_EQ(r.select("k", kH200, "auto", req("1080p")).variant.id, "sm86-all");
}

TEST(RegistryApplicability, ImpliedConstraintsFromTheTool) {
  Registry r;
  r.add_kernel("k");
  r.add(classed("narrow", 90, "", {}));
  r.set_implied_constraints("k", [](const Variant& v) {
    return v.genome.find("BLOCK_W=128") != std::string::npos ? std::vector<evk::Constraint>{{"width", ">=", 128}}
                                                              : std::vector<evk::Constraint>{};
  });
  EXPECT_EQ(r.constraints_of(r.variants().back()).size(), 1u);
  EXPECT_TRUE(r.select("k", kH100, "auto", req("", {{"width", 64}})).variant.is_original());
  EXPECT_EQ(r.select("k", kH100, "auto", req("", {{"width", 640}})).variant.id, "narrow");
}

TEST(RegistryApplicability, AGenomeFileMustFitTheRequestButNotItsClass) {
  evk::testing::TempDir dir;
  {
    std::ofstream f(dir / "g.genome");
    f << "# kernel: k\n# cc: 9.0\n# classes: 320x240\n# requires: max_disparity <= 253\nBLOCK_W=64\n";
  }
  const std::string g = (dir / "g.genome").string();
  EXPECT_EQ(full().select("k", kH200, g, req("1080p", {{"max_disparity", 63}})).variant.id, "g");
  try {
    full().select("k", kH200, g, req("1080p", {{"max_disparity", 255}}));
    ADD_FAILURE() << "ran a genome file outside its constraints";
  } catch (const evk::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(g), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("max_disparity <= 253"), std::string::npos);
  }
}

TEST(RegistryApplicability, BuiltinVariantsComeFromTheEmbeddedTable) {
  static const unsigned char fat[] = {1, 2, 3, 0};
  static const evk::EmbeddedVariant e{"k_embedded_test", "sm90-test",
                                      "# evokernels genome v1\n# kernel: k_embedded_test\n# cc: 9.0\n# classes: 1080p\nX=1\n",
                                      "SOURCE", "-DX=1\n--maxrregcount=64\n", fat, 3};
  evk::register_embedded_variant(&e);
  Registry r;
  r.add_kernel("k_embedded_test");
  r.add_builtin();
  auto s = r.select("k_embedded_test", kH100, "auto", req("1080p"));
  EXPECT_EQ(s.variant.id, "sm90-test");
  EXPECT_EQ(s.variant.source, VariantSource::builtin);
  EXPECT_EQ(s.variant.embedded, &e);
  EXPECT_TRUE(r.select("k_embedded_test", kH100, "auto", req("kitti")).variant.is_original());
  // the run-time lookup matches source and options exactly, in order
  EXPECT_EQ(evk::find_embedded_variant("SOURCE", {"-DX=1", "--maxrregcount=64"}), &e);
  EXPECT_EQ(evk::find_embedded_variant("SOURCE", {"--maxrregcount=64", "-DX=1"}), nullptr);
  EXPECT_EQ(evk::find_embedded_variant("SOURCE", {"-DX=1"}), nullptr);
  EXPECT_EQ(evk::find_embedded_variant("SOURCE2", {"-DX=1", "--maxrregcount=64"}), nullptr);
  // measuring the NVRTC path: the lookup can be switched off
  evk::set_embedded_variants_enabled(false);
  EXPECT_EQ(evk::find_embedded_variant("SOURCE", {"-DX=1", "--maxrregcount=64"}), nullptr);
  evk::set_embedded_variants_enabled(true);
  EXPECT_EQ(evk::find_embedded_variant("SOURCE", {"-DX=1", "--maxrregcount=64"}), &e);
}

// Installed genomes (share/evokernels/evolved) load as built-in variants; one whose kernel and id
// are already registered (built into the binary) is skipped, as are other tools' kernels.
TEST(Registry, InstalledGenomesAreBuiltinUnlessAlreadyEmbedded) {
  evk::testing::TempDir dir;
  write_genome(dir / "k" / "sm90.genome", "k", "9.0", "", "<_K_7>");          // id taken by full()'s sm90
  write_genome(dir / "k" / "sm100-new.genome", "k", "10.0", "", "<_K_8>");
  write_genome(dir / "other" / "sm90.genome", "other", "9.0", "", "<_K_9>");  // a kernel not registered
  write_genome(dir / "k" / "nocc.genome", "k", "", "", "<_K_1>");
  auto r = full();
  const auto before = r.variants().size();
  const auto problems = r.load_builtin_dir(dir.path());
  EXPECT_EQ(problems.size(), 1u);  // nocc.genome: no '# cc:'
  ASSERT_EQ(r.variants().size(), before + 1);
  const Variant& v = r.variants().back();
  EXPECT_EQ(v.id, "sm100-new");
  EXPECT_EQ(v.source, VariantSource::builtin);
  EXPECT_EQ(v.genome, "<_K_8>");
  EXPECT_EQ(r.select("k", DeviceKey{100, "B200"}).variant.id, "sm100-new");
  EXPECT_EQ(r.select("k", DeviceKey{90, "x"}).variant.genome, "BLOCK_W=128");  // the embedded sm90 kept
  EXPECT_TRUE(r.load_builtin_dir({}).empty());
}
