// The SGM pipeline on a real GPU: every stage alone (sgm_checks.hpp, the same checks the CUDA
// emulator runs in stereo_sgm_tests), every lane width, 1920x1080 at 64..256 disparities and the real
// pairs, all bit-identical to the CPU (sgm_cpu). Outputs poisoned before each launch.
#include <cstdio>
#include <filesystem>

#include "evk_testing.hpp"
#include "test_util.hpp"
#include "sgm_checks.hpp"

using namespace evk::stereo;
namespace fs = std::filesystem;

namespace {
std::unique_ptr<SgmDevice> gpu() { return cuda_sgm_device(0); }
}  // namespace

TEST(StereoSgmGpu, CensusMatchesCpu) {
  EVK_REQUIRE_GPU();
  sgm_checks::census(*gpu());
}
TEST(StereoSgmGpu, WindowCostMatchesCpu) {
  EVK_REQUIRE_GPU();
  sgm_checks::window_cost(*gpu());
}
TEST(StereoSgmGpu, AggregateEachDirectionMatchesNaive) {
  EVK_REQUIRE_GPU();
  sgm_checks::aggregate(*gpu());
}
TEST(StereoSgmGpu, WtaMatchesCpu) {
  EVK_REQUIRE_GPU();
  sgm_checks::wta(*gpu());
}
TEST(StereoSgmGpu, MedianAndLrCheckMatchCpu) {
  EVK_REQUIRE_GPU();
  sgm_checks::median_lr(*gpu());
}
TEST(StereoSgmGpu, WholePipelineMatchesSgmCpu) {
  EVK_REQUIRE_GPU();
  sgm_checks::pipeline(*gpu());
}

TEST(StereoSsdExpertGpu, MatchesDisparityCpu) {
  EVK_REQUIRE_GPU();
  sgm_checks::ssd_expert(*gpu());
}

TEST(StereoSsdExpertGpu, FullHdBitIdentical) {
  EVK_REQUIRE_GPU();
  for (int maxd : {63, 127}) {
    SyntheticPair sp = make_synthetic_pair(1920, 1080, maxd, 21);
    const Params p{0, maxd, 11, 500000};
    auto dev = gpu();
    SsdExpert k(*dev, 1920, 1080);
    k.poison();
    EXPECT_EQ(stereo_test::first_difference(k.run(sp.left, sp.right, p), disparity_cpu(sp.left, sp.right, p)), "")
        << "0.." << maxd;
  }
}

// process() on the GPU's two streams: the wta in row bands (the device's waves, none, 3 and 7),
// post-processing and downloads on the side stream, host buffers pageable (staged) and pinned.
// 1100 rows: two waves of wta blocks or more on an H100/H200.
TEST(StereoSgmGpu, ProcessInBandsMatchesSgmCpu) {
  EVK_REQUIRE_GPU();
  for (bool pinned : {false, true})
    sgm_checks::process_bands([] { return cuda_sgm_device(0); }, 301, 1100, 63, 8, {0, 1, 3, 7}, pinned);
}

TEST(StereoSgmGpu, StreamEngineMatchesSgmCpu) {
  EVK_REQUIRE_GPU();
  sgm_checks::stream_engine([] { return cuda_sgm_device(0); });
}

namespace {
void large_case(int w, int h, int mind, int maxd, int paths, SgmTuning tune, const PostParams& post, std::uint64_t seed) {
  SyntheticPair sp = make_synthetic_pair(w, h, std::max(1, maxd / 2), seed);
  SgmParams p;
  p.min_disparity = mind;
  p.max_disparity = maxd;
  p.paths = paths;
  p.post = post;
  StereoResult ref = sgm_cpu(sp.left, sp.right, p);
  auto dev = gpu();
  SgmPipeline pl(*dev, p, w, h, 8, tune);
  pl.poison();
  StereoResult got = pl.run(sp.left, sp.right);
  EXPECT_EQ(sgm_checks::first_diff(got.left, ref.left), "")
      << w << "x" << h << " d " << mind << ".." << maxd << " paths " << paths << " K " << pl.layout().K
      << " kernel " << pl.choice().agg << (pl.choice().staged ? " staged" : "") << (pl.choice().prefetch ? " prefetch" : "");
  if (post.right) {
    EXPECT_EQ(sgm_checks::first_diff(got.right, ref.right), "") << "right map";
  }
}
PostParams full_post() {
  PostParams p;
  p.uniqueness = 5;
  p.subpixel = Subpixel::parabola;
  p.lr_check = 1;
  p.median = 3;
  p.right = true;
  return p;
}
}  // namespace

TEST(StereoSgmGpu, EveryLaneWidthBitIdentical) {
  EVK_REQUIRE_GPU();
  std::uint64_t seed = 1;
  for (int kernel : {0, 1, 2, 3})  // the seed direct, the seed staged, kernel 2, the seed prefetched
    for (int k : {8, 16, 32})
      for (auto [mind, maxd] : {std::pair{0, 63}, std::pair{-10, 90}, std::pair{5, 5}, std::pair{0, 300}}) {
        SgmTuning t;
        t.k = k;
        t.staged = kernel == 1;
        t.prefetch = kernel == 3;
        t.agg = kernel == 2 ? 2 : 1;
        large_case(203, 157, mind, maxd, 8, t, full_post(), seed++);
      }
}

// Kernel 3 (aggregate_vec.cu) with each lane width it has, ranges up to 512 disparities.
TEST(StereoSgmGpu, Kernel3EveryLaneWidthBitIdentical) {
  EVK_REQUIRE_GPU();
  std::uint64_t seed = 70;
  for (int k3 : {4, 8, 16, 108, 116})  // 1xx: K3 xx with the horizontal directions split
    for (auto [mind, maxd] : {std::pair{0, 63}, std::pair{-10, 90}, std::pair{5, 5}, std::pair{0, 300}, std::pair{-7, 504}}) {
      SgmTuning t;
      t.agg = 3;
      t.k3 = k3 % 100;
      t.split3 = k3 > 100 ? 1 : 0;
      large_case(203, 157, mind, maxd, 8, t, full_post(), seed++);
      large_case(131, 97, mind, maxd, 4, t, PostParams{}, seed++);
    }
}

// Every benchmarked setting (64/128/256 disparities x 4/8 paths), both kernels and the policy's
// choice, on an odd size whose diagonals wrap inside blocks: bit-identical to sgm_cpu.
TEST(StereoSgmGpu, EverySettingBothKernelsBitIdentical) {
  EVK_REQUIRE_GPU();
  std::uint64_t seed = 40;
  for (int d : {64, 128, 256})
    for (int paths : {4, 8})
      for (int agg : {0, 1, 2, 3, 4}) {  // 3: the seed with prefetched direct loads; 4: kernel 3
        SgmTuning t;
        t.agg = agg == 3 ? 1 : (agg == 4 ? 3 : agg);
        t.prefetch = agg == 3;
        large_case(333, 211, 0, d - 1, paths, t, full_post(), seed++);
        large_case(97, 301, 0, d - 1, paths, t, PostParams{}, seed++);  // taller than wide, dense
      }
}

TEST(StereoSgmGpu, FullHdBitIdentical) {
  EVK_REQUIRE_GPU();
  large_case(1920, 1080, 0, 127, 8, {}, full_post(), 11);    // libSGM's main setting (+ our post)
  large_case(1920, 1080, 0, 255, 4, {}, PostParams{}, 12);   // dense, 4 paths
  large_case(1920, 1080, -32, 31, 8, {}, PostParams{}, 13);  // 64 disparities around 0
  large_case(1920, 1080, 0, 127, 8, {0, false, false, 1}, PostParams{}, 14);  // the seed kernel, direct census loads
  large_case(1920, 1080, 0, 255, 8, {0, false, false, 2}, PostParams{}, 15);  // kernel 2, 256 disparities
  large_case(1920, 1080, 0, 127, 8, {0, false, false, 1, 0, true}, PostParams{}, 16);  // the seed, prefetched loads
  large_case(1920, 1080, 0, 127, 8, {0, false, false, 3}, full_post(), 17);            // kernel 3
  large_case(1920, 1080, 0, 255, 4, {0, false, false, 3}, PostParams{}, 18);           // kernel 3, 256 disparities
}

namespace {
Image8 read_pgm8(const fs::path& p) {  // minimal binary PGM reader (stereo_io is not linked here)
  std::FILE* f = std::fopen(p.c_str(), "rb");
  int w = 0, h = 0, mx = 0;
  Image8 im;
  if (f && std::fscanf(f, "P5 %d %d %d", &w, &h, &mx) == 3 && mx == 255) {
    std::fgetc(f);
    im = Image8{w, h, std::vector<std::uint8_t>(static_cast<std::size_t>(w) * h)};
    if (std::fread(im.pixels.data(), 1, im.pixels.size(), f) != im.pixels.size()) im = Image8{};
  }
  if (f) std::fclose(f);
  return im;
}
void real_pair(const fs::path& l, const fs::path& r, int maxd) {
  if (!fs::exists(l) || !fs::exists(r)) GTEST_SKIP() << l << " absent (made by scripts/bundle.d/stereo.sh)";
  Image8 L = read_pgm8(l), R = read_pgm8(r);
  ASSERT_GT(L.width, 0) << l;
  for (int paths : {4, 8}) {
    SgmParams p;
    p.max_disparity = maxd;
    p.paths = paths;
    p.post = full_post();
    StereoResult ref = sgm_cpu(L, R, p);
    auto dev = gpu();
    SgmPipeline pl(*dev, p, L.width, L.height, 8);
    pl.poison();
    StereoResult got = pl.run(L, R);
    EXPECT_EQ(sgm_checks::first_diff(got.left, ref.left), "") << l << " paths " << paths;
    EXPECT_EQ(sgm_checks::first_diff(got.right, ref.right), "") << l << " paths " << paths << " (right)";
  }
}
}  // namespace

TEST(StereoSgmGpu, TsukubaVenusAloeBitIdentical) {
  EVK_REQUIRE_GPU();
  fs::path s = evk::testing::shared_data_dir() / "stereo";
  real_pair(s / "Tsukuba" / "imL.pgm", s / "Tsukuba" / "imR.pgm", 63);
  real_pair(s / "Venus" / "imL.pgm", s / "Venus" / "imR.pgm", 63);
  fs::path d = evk::testing::project_data_dir() / "stereo";
  real_pair(d / "aloeL.pgm", d / "aloeR.pgm", 255);
}

// Stereo's second evolvable kernel through the GI engine's path: genome -> apply -> NVRTC -> the
// problem's case on the GPU. The original and config-only variants have no penalty; deleting the
// line-minimum update is caught.
#include <sstream>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/gi/genome.hpp"
#include "gi/sgm_gi_problem.hpp"

TEST(StereoSgmGpuGi, OriginalHasNoPenaltyAndABreakingEditIsCaught) {
  EVK_REQUIRE_GPU();
  auto p = make_sgm_gi_problem();
  const int cc = evk::gpu_environment().devices[0].cc();
  auto penalty = [&](const std::string& genome) {
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
    auto e = p->make_evaluation(3, false);
    cudaStream_t s = nullptr;
    EVK_CUDA(cudaStreamCreate(&s));
    e->poison(s);
    e->launch(lib.kernel("sgm_aggregate"), v.config, s);
    EVK_CUDA_LAST();
    const evk::gi::Check c = e->check(s);
    EVK_CUDA(cudaStreamDestroy(s));
    return c.penalty;
  };
  EXPECT_EQ(penalty(""), 0.0);
  EXPECT_EQ(penalty("SGM_K=8 SGM_MODE=0"), 0.0);
  EXPECT_EQ(penalty("SGM_K=16 SGM_MODE=0 SGM_PREFETCH=1"), 0.0);
  EXPECT_EQ(penalty("SGM_K=32"), 0.0);
  int n = 0;
  std::istringstream in(p->kernel_source());
  std::string l;
  for (int i = 1; std::getline(in, l); ++i)
    if (l.find("m = mi;") != std::string::npos) n = i;
  ASSERT_GT(n, 0);
  EXPECT_GT(penalty("<_K_" + std::to_string(n) + ">"), 0.0);
  // dropping the first prefetch (the load before the loop): step 0 reads the value-initialised codes,
  // so wrong costs, penalised (not undefined values that might pass)
  int f = 0;
  std::istringstream in2(p->kernel_source());
  for (int i = 1; std::getline(in2, l); ++i)
    if (f == 0 && l.find("census_load<SGM_K>(") != std::string::npos && l.find(", x, y, dmin") != std::string::npos) f = i;
  ASSERT_GT(f, 0);
  EXPECT_GT(penalty("SGM_K=16 SGM_MODE=0 SGM_PREFETCH=1 <_K_" + std::to_string(f) + ">"), 0.0);
  // the first search's best (H200, cases of 0..63, no padded lane): the line that sets `padded`
  // deleted; the cases of 0..59 pad every layout, so it is caught
  int q = 0;
  std::istringstream in3(p->kernel_source());
  for (int i = 1; std::getline(in3, l); ++i)
    if (l.find("padded = Dp != D || G != Gs;") != std::string::npos) q = i;
  ASSERT_GT(q, 0);
  EXPECT_GT(penalty("SGM_K=8 SGM_MODE=0 SGM_PREFETCH=1 <_K_" + std::to_string(q) + ">"), 0.0);
}
