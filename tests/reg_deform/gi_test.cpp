// The GI problem's host side: parameters, compile options, the paper's penalties, genome variants
// (applied to the kernel, bad ones refused), the grammar's counts against the kernel text, `gi apply`
// of an empty genome, and that every configuration compiles with NVRTC (PTX only; no GPU needed).
#include <fstream>
#include <nlohmann/json.hpp>

#include "evk/cuda_library.hpp"
#include "evk/dispatch.hpp"
#include "evk/gi/grammar.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "gi/gi_problem.hpp"
#include "gi/kernel_variant.hpp"

namespace rd = evk::reg_deform;

TEST(RegGi, ProblemDescribesThePaperKernel) {
  auto p = rd::make_gi_problem();
  EXPECT_EQ(p->name(), "reg_deform");
  EXPECT_EQ(p->kernel_entry(), "reg_deform_tile5");
  const std::string src = p->kernel_source();
  EXPECT_NE(src.find("//@gi begin"), std::string::npos);
  EXPECT_NE(src.find("//@gi end"), std::string::npos);
  EXPECT_NE(src.find("if ((threadIdx.x & 31) < 16) {"), std::string::npos);
  EXPECT_NE(src.find("extern \"C\" __global__ void reg_deform_tile5"), std::string::npos);
  const auto params = p->config_params();
  ASSERT_EQ(params.size(), 7u);
  EXPECT_EQ(params.back().name, "BLOCK_SIZE");
  EXPECT_EQ(params.back().values.front(), "32");
  EXPECT_EQ(params.back().values.back(), "1024");
  auto cfg = p->default_config();
  EXPECT_EQ(cfg["BLOCK_SIZE"], "192");
  EXPECT_EQ(p->compile_options(cfg), (std::vector<std::string>{"-DBLOCK_SIZE=192"}));  // the human-written defaults
  cfg["constantBasis"] = "true";
  cfg["c_controlPointVoxelSpacing"] = "true";
  const auto opts = p->compile_options(cfg);
  EXPECT_EQ(opts, (std::vector<std::string>{"-Dc_controlPointVoxelSpacing=5", "-DconstantBasis=1", "-DBLOCK_SIZE=192"}));
  cfg["BLOCK_SIZE"] = "100";
  EXPECT_THROW(p->compile_options(cfg), evk::InputError);
  EXPECT_EQ(p->default_population(), 300);
  EXPECT_EQ(p->default_generations(), 50);
  EXPECT_EQ(p->launch_bounds_threads(), "BLOCK_SIZE");
}

TEST(RegGi, PaperPenalties) {
  EXPECT_EQ(rd::penalize(1e-5, 0, 0, 0, 1000).penalty, 0.0);
  const double K = rd::kPenaltyScale;
  EXPECT_NEAR(rd::penalize(0.002, 0, 0, 10, 1000).penalty, K * 0.102, 1);
  EXPECT_NEAR(rd::penalize(0.05, 100, 0, 10, 1000).penalty, K * 0.15 + K * 0.1, 1);
  // capped worst-error term, plus the wrong fraction
  EXPECT_NEAR(rd::penalize(5.0, 0, 250, 250, 1000).penalty, K + K * 0.25, 1);
  EXPECT_NEAR(rd::penalize(5.0, 0, 250, 250, 1000).bad_fraction, 0.25, 1e-12);
}

namespace {
std::string rule_with_text(const evk::gi::Grammar& g, evk::gi::RuleType t, const std::string& text) {
  for (const auto& r : g.rules)
    if (r.type == t && r.text == text) return r.name;
  ADD_FAILURE() << "no rule with text " << text;
  return "";
}
}  // namespace

TEST(RegGi, GenomeVariantsApplyToTheTileKernel) {
  evk::Variant v;
  v.kernel = "reg_deform";
  v.id = "original";
  const rd::KernelChoice o = rd::kernel_for_variant(v);
  EXPECT_TRUE(o.config.macros_default());
  EXPECT_EQ(o.config.block_size, 192);
  EXPECT_TRUE(o.source.empty());  // the embedded original (nvcc fatbin)
  EXPECT_FALSE(o.evolved());

  // config only: the configuration changes, the source is the guarded original
  v.id = "sm90-test";
  v.genome = "constantBasis=true BLOCK_SIZE=256";
  rd::KernelChoice k = rd::kernel_for_variant(v);
  EXPECT_TRUE(k.config.constant_basis);
  EXPECT_FALSE(k.config.basis_a);
  EXPECT_EQ(k.config.block_size, 256);
  EXPECT_TRUE(k.evolved());
  EXPECT_NE(k.source.find("extern \"C\" __global__ void reg_deform_tile5"), std::string::npos);
  EXPECT_NE(k.source.find("extern \"C\" __global__ void reg_deform_generic"), std::string::npos);
  EXPECT_EQ(k.config.compile_options(),
            (std::vector<std::string>{"-DconstantBasis=1", "-DBLOCK_SIZE=256"}));

  // a code edit: the paper's guard replacement (the x-sum condition becomes the tile condition)
  auto p = rd::make_gi_problem();
  const evk::gi::Grammar g = evk::gi::make_grammar(*p);
  const std::string from = rule_with_text(g, evk::gi::RuleType::if_cond, "((threadIdx.x & 31) < 16)");
  const std::string to = rule_with_text(g, evk::gi::RuleType::if_cond, "(tid < activeTileNumber)");
  v.genome = "<" + from + "><" + to + ">";
  k = rd::kernel_for_variant(v);
  EXPECT_TRUE(k.config.macros_default());
  EXPECT_EQ(k.source.find("(threadIdx.x & 31) < 16"), std::string::npos) << k.source;
  std::size_t n = 0;
  for (std::size_t at = 0; (at = k.source.find("tid < activeTileNumber", at)) != std::string::npos; ++at) ++n;
  EXPECT_EQ(n, 2u);
  if (!evk::nvrtc_version().empty()) {  // the evolved source compiles with its options (PTX only)
    evk::NvrtcRequest req;
    req.source = k.source;
    req.options = k.config.compile_options();
    req.want_cubin = false;
    req.want_ptx = true;
    const auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << r.log;
  }

  // malformed genomes and genomes for another kernel: InputError naming the file
  v.path = "/tmp/x.genome";
  for (const char* bad : {"<_K_99999>", "<_K_3", "BLOCK_SIZE=100", "NOSUCH=1", "hello"}) {
    v.genome = bad;
    try {
      rd::kernel_for_variant(v);
      ADD_FAILURE() << bad << " accepted";
    } catch (const evk::InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("/tmp/x.genome: ", 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  v.genome = "BLOCK_SIZE=256";
  v.kernel = "stereo";
  EXPECT_THROW(rd::kernel_for_variant(v), evk::InputError);
}

// Counts the grammar's rules from the kernel text with a scan of our own: inside //@gi begin..end,
// lines not marked fixed, one-line for headers (each declares nothing), if conditions, and plain
// statements (ending in ';', not declarations, not preprocessor).
TEST(RegGi, GrammarCountsMatchTheKernelText) {
  std::ifstream in(std::string(REG_SOURCE_DIR) + "/kernels/original/reg_deform/reg_deform.cu");
  ASSERT_TRUE(in);
  std::string line;
  bool inside = false;
  int fors = 0, ifs = 0, statements = 0, fixed = 0;
  const std::vector<std::string> decl = {"const ", "int ", "int3 ", "unsigned ", "float ", "float4 "};
  while (std::getline(in, line)) {
    const std::string t = line.substr(std::min(line.find_first_not_of(' '), line.size()));
    if (t == "//@gi begin") inside = true;
    if (t == "//@gi end") inside = false;
    if (!inside || t.rfind("//@gi", 0) == 0) continue;
    if (t.find("//@gi fixed") != std::string::npos) {
      ++fixed;
      continue;
    }
    if (t.rfind("for (", 0) == 0) ++fors;
    else if (t.rfind("if (", 0) == 0) ++ifs;
    else if (!t.empty() && t.back() == ';' && t[0] != '#') {
      bool is_decl = false;
      for (const auto& d : decl) is_decl |= t.rfind(d, 0) == 0;
      statements += !is_decl;
    }
  }
  // By hand from the kernel: 3 loops (a; c; b), 5 conditions, 35 statements, 6 fixed lines.
  EXPECT_EQ(fors, 3);
  EXPECT_EQ(ifs, 5);
  EXPECT_EQ(statements, 35);
  EXPECT_EQ(fixed, 6);

  const auto r = evk::testing::run_tool("reg_deform", "gi grammar --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j.at("counts");
  EXPECT_EQ(c.at("for1").get<int>(), fors);
  EXPECT_EQ(c.at("for2").get<int>(), fors);
  EXPECT_EQ(c.at("for3").get<int>(), fors);
  EXPECT_EQ(c.at("pragma").get<int>(), fors);
  EXPECT_EQ(c.at("IF").get<int>(), ifs);
  EXPECT_EQ(c.at("line").get<int>(), statements);
  EXPECT_EQ(c.at("restrict").get<int>(), 1);
  EXPECT_EQ(c.at("launchbounds").get<int>(), 1);
  // The BNF text: the header counts, and __launch_bounds__ uses the block-size parameter.
  const auto b = evk::testing::run_tool("reg_deform", "gi grammar");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("__launch_bounds__(BLOCK_SIZE"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("<IF_K_"), std::string::npos);
  EXPECT_NE(b.out.find("<for2_K_"), std::string::npos);
}

// `reg_deform gi apply` of an empty genome writes the kernel file byte for byte.
TEST(RegGi, ApplyEmptyGenomeReproducesTheOriginal) {
  evk::testing::TempDir tmp;
  {
    std::ofstream g(tmp / "empty.genome");
    g << "# evokernels genome v1\n# kernel: reg_deform\n";
  }
  const auto r = evk::testing::run_tool("reg_deform", "gi apply " + (tmp / "empty.genome").string() + " -o " +
                                                          (tmp / "out.cu").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto slurp = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), {});
  };
  const std::string want = slurp(std::string(REG_SOURCE_DIR) + "/kernels/original/reg_deform/reg_deform.cu");
  ASSERT_FALSE(want.empty());
  EXPECT_TRUE(slurp((tmp / "out.cu").string()) == want);
  // a config-only genome: the same kernel with loop guards, and its options as JSON
  {
    std::ofstream g(tmp / "cfg.genome");
    g << "# evokernels genome v1\n# kernel: reg_deform\nRemX=true BLOCK_SIZE=64\n";
  }
  const auto a = evk::testing::run_tool("reg_deform", "gi apply " + (tmp / "cfg.genome").string() + " -o " +
                                                          (tmp / "cfg.cu").string() + " --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j.at("options"), (nlohmann::json{"-DRemX=1", "-DBLOCK_SIZE=64"}));
  // config only: no edit touches a loop, so the source a person reads is the kernel file itself (no
  // engine prelude, no loop guard); the config travels as options
  const std::string cfg_src = slurp((tmp / "cfg.cu").string());
  EXPECT_TRUE(cfg_src == want);
  EXPECT_EQ(cfg_src.find("evk_gi_stamp"), std::string::npos);
  EXPECT_EQ(cfg_src.find("EVK_GI_OK"), std::string::npos);
  // --as-searched: the engine's prelude in front, still no guard
  const auto b = evk::testing::run_tool("reg_deform", "gi apply " + (tmp / "cfg.genome").string() + " --as-searched -o " +
                                                          (tmp / "searched.cu").string());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string searched = slurp((tmp / "searched.cu").string());
  EXPECT_NE(searched.find("evk_gi_stamp"), std::string::npos);
  EXPECT_EQ(searched.find("EVK_GI_OK(evk_gi_guard_"), std::string::npos);
}

TEST(RegGi, EveryMacroCompilesWithNvrtc) {
  if (evk::nvrtc_version().empty()) GTEST_SKIP() << "built without CUDA";
  auto p = rd::make_gi_problem();
  // default, all on, and each switch alone (PTX only: quick syntax/type check)
  std::vector<rd::KernelConfig> cfgs = {rd::KernelConfig{}};
  for (const auto& c : rd::KernelConfig::all_combinations())
    if (c.defines().size() == 1 || c.defines().size() == 6) cfgs.push_back(c);
  ASSERT_EQ(cfgs.size(), 8u);
  for (const auto& c : cfgs) {
    evk::NvrtcRequest req;
    req.source = p->kernel_source();
    req.options = c.defines();
    req.want_cubin = false;
    req.want_ptx = true;
    const auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << c.describe() << "\n" << r.log;
  }
}

#include <cmath>
#include <set>

#include "core/field/grid_make.hpp"
#include "core/field/random_case.hpp"
#include "io/nifti_io.hpp"

// The size classes, and hold-out cases that never appear in training.
TEST(RegGiClasses, ClassesAndDisjointHoldOutCases) {
  auto p = rd::make_gi_problem();
  EXPECT_EQ(p->class_names(), (std::vector<std::string>{"paper", "head1mm", "head2mm"}));
  for (const auto& cls : p->class_names()) {
    std::set<std::pair<std::string, std::uint64_t>> train, hold;
    std::set<std::string> heads;
    for (std::uint64_t s = 0; s < 2000; ++s) {
      const rd::GiCaseSpec t = rd::gi_case_spec(s, false, cls), h = rd::gi_case_spec(s, true, cls);
      train.insert({t.head, t.case_seed});
      hold.insert({h.head, h.case_seed});
      heads.insert(h.head);
    }
    for (const auto& k : hold) EXPECT_EQ(train.count(k), 0u) << cls << ": hold-out case " << k.second << " used in training";
    EXPECT_EQ(hold.size(), 2000u);
    const std::set<std::string> want = cls == "paper"     ? std::set<std::string>{""}
                                       : cls == "head1mm" ? std::set<std::string>{"icbm152_2009a_t1_1mm.nii.gz"}
                                                          : std::set<std::string>{"mni152_t1_2mm.nii.gz", "colin27_t1_2mm.nii",
                                                                                  "avg152_t1_2mm.nii"};
    EXPECT_EQ(heads, want);
  }
  // the paper class keeps the cases of the engine before classes (random case seed 2 s / 2 s + 1)
  EXPECT_EQ(rd::gi_case_spec(7, false, "paper").case_seed, 14u);
  EXPECT_EQ(rd::gi_case_spec(7, true, "paper").case_seed, 15u);
  EXPECT_THROW(rd::gi_case_spec(0, false, "head3mm"), evk::InputError);
  // c_controlPointVoxelSpacing bakes in the spacing
  auto cfg = p->default_config();
  EXPECT_TRUE(p->constraints(cfg).empty());
  cfg["c_controlPointVoxelSpacing"] = "true";
  EXPECT_EQ(p->constraints(cfg), std::vector<std::string>{"spacing == 5"});
  // the class of a request: masked -> paper, dense -> by size
  EXPECT_EQ(p->class_of({{"dense", 0}, {"voxels", 1.7e6}}), "paper");
  EXPECT_EQ(p->class_of({{"dense", 1}, {"voxels", 197.0 * 233 * 189}}), "head1mm");
  EXPECT_EQ(p->class_of({{"dense", 1}, {"voxels", 91.0 * 109 * 91}}), "head2mm");
}

// A head case without the shared data: the brain's size, dense, a grid perturbed by <= 5 mm.
TEST(RegGiClasses, HeadCasesAreDenseWithAPerturbedGrid) {
  rd::GiProblemOptions o;
  o.shared_data = "/nonexistent";
  const rd::GiCaseData d = rd::gi_case_data(3, true, "head2mm", o);
  EXPECT_EQ(d.geo.nx, 91);
  EXPECT_EQ(d.geo.ny, 109);
  EXPECT_EQ(d.geo.nz, 91);
  EXPECT_DOUBLE_EQ(d.geo.dx, 2.0);
  EXPECT_TRUE(d.mask.empty());  // dense: every voxel
  EXPECT_NE(d.describe.find("synthetic geometry"), std::string::npos) << d.describe;
  const rd::Grid id = rd::make_grid(d.geo, 5);
  ASSERT_EQ(d.grid.data.size(), id.data.size());
  double worst = 0;
  for (std::size_t i = 0; i < id.data.size(); ++i) worst = std::max(worst, std::fabs(double(d.grid.data[i]) - id.data[i]));
  EXPECT_GT(worst, 4.0);
  EXPECT_LE(worst, 5.0 + 1e-3);
  const rd::GiCaseData one = rd::gi_case_data(0, false, "head1mm", o);
  EXPECT_EQ(one.geo.voxels(), 197u * 233u * 189u);  // ~8.7 M voxels at 1 mm
  // with the shared brains (and the tool's NIfTI reader): their real geometry
  const auto dir = evk::testing::shared_data_dir();
  if (dir.empty() || !std::filesystem::exists(dir / "brain" / "mni152_t1_2mm.nii.gz")) GTEST_SKIP() << "no shared brains";
  o.shared_data = dir;
  o.read_geometry = [](const std::string& path) { return rd::read_volume(path).geo; };
  const rd::GiCaseData real = rd::gi_case_data(0, true, "head2mm", o);  // seed 0: mni152
  const rd::Geometry want = rd::read_volume(dir / "brain" / "mni152_t1_2mm.nii.gz").geo;
  EXPECT_EQ(real.geo.nx, want.nx);
  EXPECT_EQ(real.geo.nz, want.nz);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_DOUBLE_EQ(real.geo.vox2world.m[r][c], want.vox2world.m[r][c]);
  EXPECT_NE(real.describe.find("mni152_t1_2mm.nii.gz"), std::string::npos) << real.describe;
}

// perturb_grid is exactly what `reg_deform grid --perturb MM --seed S` writes.
TEST(RegGiClasses, PerturbGridIsTheGridCommand) {
  evk::testing::TempDir t;
  rd::Volume v;
  v.geo = rd::Geometry::make(23, 17, 12, 2, 2, 2, {-20, -10, 5});
  v.data.assign(v.geo.voxels(), 1.0f);
  rd::write_volume(t / "ref.nii", v);
  const auto r = evk::testing::run_tool("reg_deform", "grid --ref " + (t / "ref.nii").string() + " -o " +
                                                         (t / "g.nii").string() + " --perturb 3 --seed 9");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const rd::Grid file = rd::read_grid(t / "g.nii", v.geo);
  rd::Grid g = rd::make_grid(v.geo, 5);
  rd::perturb_grid(g, 3, 9);
  ASSERT_EQ(file.data.size(), g.data.size());
  EXPECT_TRUE(file.data == g.data);
  rd::Grid other = rd::make_grid(v.geo, 5);
  rd::perturb_grid(other, 3, 10);
  EXPECT_FALSE(other.data == g.data);
}

// ---- the check's comparison (field_diff.hpp): figures worked out by hand ---------------------------
#include <limits>

#include "core/field/field_diff.hpp"

TEST(RegGiCheck, FieldDiffCountsAndWorstByHand) {
  using evk::reg_deform::field_diff_cpu;
  // five elements, float4 each (w unused), against three reference floats each
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float got[5 * 4] = {1, 2, 3, 9,        // exact
                            1, 2.0005f, 3, 9,  // 0.0005 off: within 0.001
                            1, 2, 3.5f, 9,     // 0.5 off: over 0.001 and over 0.1
                            nan, 2, 3, 9,      // unset
                            1, inf, 3, 9};     // unset
  const float ref[5 * 3] = {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3};
  auto d = field_diff_cpu(got, {4, 1}, ref, {3, 1}, nullptr, 5, 0.001, 0.1);
  EXPECT_EQ(d.unset, 2u);
  EXPECT_EQ(d.over, 1u);
  EXPECT_EQ(d.wrong, 1u);
  EXPECT_EQ(d.worst, 0.5);  // 3.5f - 3 is exact in float and double
  // skip the 0.5-off element and one unset element: only the 0.0005 error is left (float rounding)
  const std::uint8_t inside[5] = {1, 1, 0, 0, 1};
  d = field_diff_cpu(got, {4, 1}, ref, {3, 1}, inside, 5, 0.001, 0.1);
  EXPECT_EQ(d.unset, 1u);
  EXPECT_EQ(d.over, 0u);
  EXPECT_EQ(d.wrong, 0u);
  EXPECT_EQ(d.worst, static_cast<double>(2.0005f) - 2.0);
  EXPECT_NEAR(d.worst, 0.0005, 1e-7);
  // planar layout: x plane, y plane, z plane of two elements; element 1's z is 0.2 off
  const float planar_got[6] = {1, 1, 2, 2, 3, 3.2f}, planar_ref[6] = {1, 1, 2, 2, 3, 3};
  d = field_diff_cpu(planar_got, {1, 2}, planar_ref, {1, 2}, nullptr, 2, 0.001, 0.1);
  EXPECT_EQ(d.unset, 0u);
  EXPECT_EQ(d.over, 1u);
  EXPECT_EQ(d.wrong, 1u);
  EXPECT_EQ(d.worst, static_cast<double>(3.2f) - 3.0);
  // nothing to compare
  d = field_diff_cpu(got, {4, 1}, ref, {3, 1}, nullptr, 0, 0.001, 0.1);
  EXPECT_TRUE(d == evk::reg_deform::FieldDiff{});
}
