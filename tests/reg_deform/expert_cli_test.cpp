// The expert dense-field kernel's host wiring (no GPU): its GI problem (parameters, compile options,
// grammar counts against the kernel text, `gi-expert apply` of an empty genome = the seed file byte
// for byte, NVRTC compiles every TILE_Y), and the dispatch (`--kernel expert`, genome files of the
// expert kernel, bad ones refused).
#include <fstream>
#include <nlohmann/json.hpp>

#include "evk/cuda_library.hpp"
#include "evk/dispatch.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "gi/gi_problem.hpp"
#include "gi/kernel_variant.hpp"

namespace rd = evk::reg_deform;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}
const std::string kExpertFile = std::string(REG_SOURCE_DIR) + "/kernels/original/reg_deform/field_expert.cu";
}  // namespace

TEST(RegGiExpert, ProblemDescribesTheExpertKernel) {
  auto p = rd::make_expert_gi_problem();
  EXPECT_EQ(p->name(), "reg_deform_expert");
  EXPECT_EQ(p->kernel_entry(), "reg_field_expert");
  EXPECT_TRUE(p->kernel_source() == slurp(kExpertFile));
  const auto params = p->config_params();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].name, "TILE_Y");
  EXPECT_EQ(params[0].values, (std::vector<std::string>{"8", "16", "32"}));
  auto cfg = p->default_config();
  EXPECT_EQ(p->compile_options(cfg), (std::vector<std::string>{"-DTILE_Y=32"}));
  cfg["TILE_Y"] = "64";
  EXPECT_THROW(p->compile_options(cfg), evk::InputError);
  // the paper problem's classes, and its class rule
  const auto paper = rd::make_gi_problem();
  ASSERT_EQ(p->size_classes().size(), paper->size_classes().size());
  EXPECT_EQ(p->class_of({{"dense", 1}, {"voxels", 8.7e6}}), "head1mm");
  EXPECT_EQ(p->class_of({{"dense", 0}, {"voxels", 1.7e6}}), "paper");
  EXPECT_EQ(p->launch_bounds_threads(), "256");
}

TEST(RegGiExpert, GrammarCountsMatchTheKernelText) {
  std::ifstream in(kExpertFile);
  ASSERT_TRUE(in);
  std::string line;
  bool inside = false;
  int fors = 0, ifs = 0, statements = 0, fixed = 0;
  const std::vector<std::string> decl = {"int ", "size_t ", "float ", "float4 "};
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
  // By hand from the kernel: 3 loops (stage 1, stage 2, rows), 5 conditions (x < nx, y < ny, mask,
  // inside, displacement), 2 fixed __syncthreads lines.
  EXPECT_EQ(fors, 3);
  EXPECT_EQ(ifs, 5);
  EXPECT_EQ(fixed, 2);
  EXPECT_GT(statements, 40);
  const auto r = evk::testing::run_tool("reg_deform", "gi-expert grammar --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j.at("counts");
  EXPECT_EQ(c.at("for2").get<int>(), fors);
  EXPECT_EQ(c.at("pragma").get<int>(), fors);
  EXPECT_EQ(c.at("IF").get<int>(), ifs);
  EXPECT_EQ(c.at("line").get<int>(), statements);
  EXPECT_EQ(c.at("launchbounds").get<int>(), 1);
  const auto b = evk::testing::run_tool("reg_deform", "gi-expert grammar");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("__launch_bounds__(256"), std::string::npos) << b.out;
}

// `reg_deform gi-expert apply` of an empty genome writes the expert kernel file byte for byte; a
// config-only genome keeps the source and carries -DTILE_Y.
TEST(RegGiExpert, ApplyEmptyGenomeReproducesTheExpertSeed) {
  evk::testing::TempDir tmp;
  {
    std::ofstream g(tmp / "empty.genome");
    g << "# evokernels genome v1\n# kernel: reg_deform_expert\n";
  }
  const auto r = evk::testing::run_tool("reg_deform", "gi-expert apply " + (tmp / "empty.genome").string() + " -o " +
                                                          (tmp / "out.cu").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string want = slurp(kExpertFile);
  ASSERT_FALSE(want.empty());
  EXPECT_TRUE(slurp((tmp / "out.cu").string()) == want);
  {
    std::ofstream g(tmp / "cfg.genome");
    g << "# evokernels genome v1\n# kernel: reg_deform_expert\nTILE_Y=16\n";
  }
  const auto a = evk::testing::run_tool("reg_deform", "gi-expert apply " + (tmp / "cfg.genome").string() + " -o " +
                                                          (tmp / "cfg.cu").string() + " --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(nlohmann::json::parse(a.out).at("options"), (nlohmann::json{"-DTILE_Y=16"}));
  EXPECT_TRUE(slurp((tmp / "cfg.cu").string()) == want);
}

TEST(RegGiExpert, EveryTileYCompilesWithNvrtc) {
  if (evk::nvrtc_version().empty()) GTEST_SKIP() << "built without CUDA";
  auto p = rd::make_expert_gi_problem();
  for (const char* t : {"8", "16", "32"}) {
    evk::NvrtcRequest req;
    req.source = p->kernel_source();
    req.options = p->compile_options({{"TILE_Y", t}});
    req.want_cubin = false;
    req.want_ptx = true;
    const auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << "TILE_Y " << t << "\n" << r.log;
  }
}

TEST(RegKernelPick, ExpertChoiceAndExpertGenomeFiles) {
  evk::testing::TempDir tmp;
  const evk::Registry reg = rd::make_registry();
  const evk::DeviceKey h100{90, "NVIDIA H100 80GB HBM3"};
  const evk::Request req = rd::make_request(197, 233, 189, 5, 5, 5);
  const rd::KernelPick e = rd::pick_kernel(reg, h100, "expert", req);
  EXPECT_TRUE(e.kernel.expert);
  EXPECT_FALSE(e.kernel.evolved());
  EXPECT_TRUE(e.kernel.source.empty());
  EXPECT_EQ(e.kernel.expert_config.tile_y, 32);
  EXPECT_EQ(e.variant, "expert (--kernel expert)");
  EXPECT_EQ(e.kernel.describe(), "expert tile 32x32");
  const rd::KernelPick o = rd::pick_kernel(reg, h100, "original", req);
  EXPECT_FALSE(o.kernel.expert);
  EXPECT_EQ(o.variant.rfind("original", 0), 0u);
  const rd::KernelPick a = rd::pick_kernel(reg, h100, "auto", req);  // never the expert kernel
  EXPECT_FALSE(a.kernel.expert);
  // a genome of the expert kernel: applied to field_expert.cu with its configuration
  {
    std::ofstream g(tmp / "e.genome");
    g << "# evokernels genome v1\n# kernel: reg_deform_expert\n# cc: 9.0\nTILE_Y=16\n";
  }
  const rd::KernelPick f = rd::pick_kernel(reg, h100, (tmp / "e.genome").string(), req);
  EXPECT_TRUE(f.kernel.expert);
  EXPECT_TRUE(f.kernel.evolved());
  EXPECT_EQ(f.kernel.expert_config.tile_y, 16);
  EXPECT_NE(f.kernel.source.find("reg_field_expert"), std::string::npos);
  EXPECT_EQ(f.variant.rfind("expert ", 0), 0u) << f.variant;
  // an illegal value, and a paper-kernel gene in an expert genome: InputError naming the file
  {
    std::ofstream g(tmp / "bad.genome");
    g << "# evokernels genome v1\n# kernel: reg_deform_expert\nTILE_Y=12\n";
  }
  {
    std::ofstream g(tmp / "mixed.genome");
    g << "# evokernels genome v1\n# kernel: reg_deform_expert\nconstantBasis=true\n";
  }
  for (const char* bad : {"bad.genome", "mixed.genome"}) {
    try {
      rd::pick_kernel(reg, h100, (tmp / bad).string(), req);
      ADD_FAILURE() << bad << " accepted";
    } catch (const evk::InputError& ex) {
      EXPECT_NE(std::string(ex.what()).find(bad), std::string::npos) << ex.what();
    }
  }
  // the tool refuses it with one line and exit 2 (on the CPU backend too)
  evk::testing::TempDir t2;
  const auto f2 = evk::testing::run_tool(
      "reg_deform", "random-case --seed 1 --size 24 -o " + t2.path().string());
  ASSERT_EQ(f2.exit_code, 0) << f2.err;
  const auto b = evk::testing::run_tool(
      "reg_deform", "field --ref " + (t2 / "image.nii.gz").string() + " --cpp " + (t2 / "cpp.nii.gz").string() + " -o " +
                        (t2 / "f.nii.gz").string() + " --backend cpu --kernel " + (tmp / "bad.genome").string());
  EXPECT_EQ(b.exit_code, 2) << b.err;
  EXPECT_NE(b.err.find("bad.genome"), std::string::npos) << b.err;
  EXPECT_FALSE(std::filesystem::exists(t2 / "f.nii.gz"));
}
