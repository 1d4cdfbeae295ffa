// The expert SSD kernels on a real GPU: v2 (kernels/original/stereo/ssd_expert.cu) and v1
// (apps/stereo/core/src/ssd_expert_v1.cu) against disparity_cpu, every pixel, outputs poisoned before
// each launch (the same cases the CUDA emulator runs in stereo_sgm_tests, plus 1920x1080 at 64, 128,
// 256 and odd disparity counts); and the expert seed through the GI engine's path (genome -> apply
// -> NVRTC -> the problem's case): the original and config-only variants score 0, a breaking edit
// does not.
#include <sstream>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/gi/genome.hpp"
#include "evk_testing.hpp"
#include "gi/gi_problem.hpp"
#include "ssd_expert_checks.hpp"
#include "test_util.hpp"

using namespace evk::stereo;

TEST(StereoSsdExpertGpu, V2MatchesDisparityCpu) {
  EVK_REQUIRE_GPU();
  auto dev = cuda_sgm_device(0);
  ssd_expert_checks::all_cases(*dev, SsdExpertVersion::v2);
  ssd_expert_checks::random_cases(*dev, SsdExpertVersion::v2, 60, 91);
}

TEST(StereoSsdExpertGpu, V1MatchesDisparityCpu) {
  EVK_REQUIRE_GPU();
  auto dev = cuda_sgm_device(0);
  ssd_expert_checks::all_cases(*dev, SsdExpertVersion::v1);
}

TEST(StereoSsdExpertGpu, FullHdBothVersionsBitIdentical) {
  EVK_REQUIRE_GPU();
  auto dev = cuda_sgm_device(0);
  struct R {
    int mind, maxd;
  } ranges[] = {{0, 63}, {0, 127}, {0, 255}, {0, 100}, {5, 204}};
  std::uint64_t seed = 31;
  for (const R& r : ranges) {
    SyntheticPair sp = make_synthetic_pair(1920, 1080, r.maxd, seed++);
    const Params p{r.mind, r.maxd, 11, 500000};
    const DisparityMap ref = disparity_cpu(sp.left, sp.right, p);
    for (SsdExpertVersion v : {SsdExpertVersion::v2, SsdExpertVersion::v1}) {
      SsdExpert k(*dev, 1920, 1080, v);
      k.poison();
      EXPECT_EQ(stereo_test::first_difference(k.run(sp.left, sp.right, p), ref), "")
          << k.kernel_name(5) << " " << r.mind << ".." << r.maxd;
    }
  }
}

TEST(StereoExpertGpuGi, OriginalHasNoPenaltyAndABreakingEditIsCaught) {
  EVK_REQUIRE_GPU();
  auto p = make_expert_gi_problem();
  const int cc = evk::gpu_environment().devices[0].cc();
  auto penalty = [&](const std::string& genome, std::uint64_t seed, const std::string& cls) {
    const evk::gi::Variant v = evk::gi::apply_genome(*p, genome);
    evk::NvrtcRequest req;
    req.source = v.source;
    req.options = p->compile_options(v.config);
    for (const auto& o : v.options) req.options.push_back(o);
    req.cc = cc;
    const evk::NvrtcResult r = evk::CompileCache().compile(req);
    if (!r.ok) {
      ADD_FAILURE() << genome << ": " << r.log.substr(0, 2000);
      return -1.0;
    }
    evk::CudaLibrary lib(r.cubin.data());
    auto e = p->make_evaluation(seed, false, cls);
    cudaStream_t s = nullptr;
    EVK_CUDA(cudaStreamCreate(&s));
    e->poison(s);
    e->launch(lib.kernel("ssd_expert"), v.config, s);
    EVK_CUDA_LAST();
    const evk::gi::Check c = e->check(s);
    EVK_CUDA(cudaStreamDestroy(s));
    return c.penalty;
  };
  EXPECT_EQ(penalty("", 0, "paper"), 0.0);
  for (std::uint64_t seed : {0, 1, 2})  // middlebury: disparities 0..63, 0..127, 0..255
    EXPECT_EQ(penalty("", seed, "middlebury"), 0.0) << seed;
  EXPECT_EQ(penalty("EX_TY=8 EX_DC=1 EX_DS=64", 1, "middlebury"), 0.0);
  EXPECT_EQ(penalty("EX_TY=64 EX_DC=8 EX_DS=256", 2, "middlebury"), 0.0);  // > 48 KiB shared memory
  EXPECT_EQ(penalty("EX_TY=40 EX_DC=4", 1, "1080p"), 0.0);
  int n = 0;
  std::istringstream in(p->kernel_source());
  std::string l;
  for (int i = 1; std::getline(in, l); ++i)
    if (l.find("best[k] = sum;") != std::string::npos) n = i;
  ASSERT_GT(n, 0);
  EXPECT_GT(penalty("<_K_" + std::to_string(n) + ">", 0, "paper"), 0.0);
}
