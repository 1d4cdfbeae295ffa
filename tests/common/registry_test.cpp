// The dispatch registry's fallback chain and overlay precedence, with fake devices (no GPU needed).
#include <fstream>

#include "evk/dispatch.hpp"
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

TEST(Registry, NearestLowerComputeCapability) {
  auto r = full();
  EXPECT_EQ(r.select("k", DeviceKey{89, "NVIDIA L4"}).variant.id, "sm86");
  EXPECT_EQ(r.select("k", DeviceKey{87, "Orin"}).variant.id, "sm86");
  EXPECT_EQ(r.select("k", DeviceKey{120, "RTX 5090"}).variant.id, "sm90");
  EXPECT_NE(r.select("k", DeviceKey{89, "x"}).rule.find("nearest lower"), std::string::npos);
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
  // and at the nearest-lower step
  Registry r2;
  r2.add_kernel("k");
  r2.add(evolved("sm80", 80));
  r2.load_overlay(dir.path());
  EXPECT_EQ(r2.select("k", DeviceKey{86, "A10"}).variant.id, "older");
  EXPECT_EQ(r2.select("k", DeviceKey{86, "A10"}).variant.source, VariantSource::overlay);
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
