// Stereo's three GI seeds (Stam's SSD kernel, the expert SSD kernel, SGM aggregation) value-initialise
// their per-thread arrays (and Stam's kernel the per-thread slots of its SHARED storage), so a
// candidate that reads one before filling it reads zeros, not undefined values that may pass the
// check by luck (NVRTC's #549 refusal covers no array). CPU: the seeds' text keeps the initialisers;
// crafted candidates that delete a fill are accepted by NVRTC and compile to the code of the same
// candidate with the array zeroed explicitly (on a seed without the initialiser they do not). GPU:
// StereoGpuGi.UnfilledRowsArePenalised, StereoExpertGpuGi.UnfilledBestIsPenalised,
// StereoSgmGpuGi.UnfilledPaddingIsPenalised (stereo_gpu_tests).
#include <gtest/gtest.h>

#include <regex>

#include "gi/gi_problem.hpp"
#include "gi/sgm_gi_problem.hpp"
#include "seed_arrays.hpp"

using namespace evk::stereo;
using evk::testing::expect_value_initialised;

namespace {
// "<_K_N>": deletes the statement whose trimmed line is `text` (the first such line).
std::string zero(const std::string& name) { return "memset(&" + name + ", 0, sizeof(" + name + "));"; }
}  // namespace

TEST(StereoSeedArrays, StamsKernelInitialisesItsRowsAndSharedSlots) {
  const std::string src = make_gi_problem()->kernel_source();
  expect_value_initialised(src, "stereo.cu", {{"out_t", "pixel_l"}, {"int", "minssd_l"}});
  // SHARED storage: the group's first BLOCK_W threads zero their slots of every row, before the region
  const std::string fixed = src.substr(0, src.find("//@gi begin"));
  EXPECT_TRUE(std::regex_search(fixed, std::regex(R"(STORE_disparityMinSSD == SHARED && threadIdx\.x < BLOCK_W\) for \(int r = 0; r < ROWSperTHREAD; r\+\+\) minssd_s\[MUL\(r, BLOCK_W\) \+ threadIdx\.x\] = 0;)")))
      << "the SHARED minssd slots are no longer zeroed";
  EXPECT_TRUE(std::regex_search(fixed, std::regex(R"(STORE_disparityPixel == SHARED && threadIdx\.x < BLOCK_W\) for \(int r = 0; r < ROWSperTHREAD; r\+\+\) pixel_s\[MUL\(r, BLOCK_W\) \+ threadIdx\.x\] = \(out_t\)0;)")))
      << "the SHARED pixel slots are no longer zeroed";
}

TEST(StereoSeedArrays, ExpertKernelInitialisesItsArrays) {
  expect_value_initialised(make_expert_gi_problem()->kernel_source(), "ssd_expert.cu",
                           {{"unsigned", "P"}, {"int", "best"}, {"int", "bestd"}, {"int", "qv"}, {"int4", "t4"}});
}

TEST(StereoSeedArrays, SgmInitialisesItsArrays) {
  // the kernel only: the helpers before it fill their own arrays in unrolled loops and are not edited
  const std::string src = make_sgm_gi_problem()->kernel_source();
  expect_value_initialised(src.substr(src.find("extern \"C\" __global__")), "sgm_aggregate.cu",
                           {{"unsigned", "padc"}, {"unsigned", "L"}, {"unsigned", "n"}, {"unsigned", "cost"},
                            {"unsigned", "c"}, {"unsigned", "win"}, {"unsigned", "pr"}});
}

#if defined(EVK_HAVE_CUDA)
using evk::testing::expect_reads_zeros;

// The rows' best SSD never set (LOCAL and SHARED storage), the rows' disparity never set to -1.
TEST(StereoSeedArrays, StamsKernelUnfilledRowsReadZeros) {
  auto p = make_gi_problem();
  const std::string local = "STORE_disparityPixel=LOCAL STORE_disparityMinSSD=LOCAL ";
  expect_reads_zeros(*p, local + evk::testing::seed_delete(*p, "MINSSD(row) = min_ssd;"), "int minssd_l[LOCAL_MINSSDS]", zero("minssd_l"));
  expect_reads_zeros(*p, local + "ROWSperTHREAD=4 " + evk::testing::seed_delete(*p, "PIXEL(row) = (out_t)(-1);"), "out_t pixel_l[LOCAL_PIXELS]",
                     zero("pixel_l"));
  expect_reads_zeros(*p, "STORE_disparityPixel=SHARED STORE_disparityMinSSD=SHARED " + evk::testing::seed_delete(*p, "MINSSD(row) = min_ssd;"),
                     "int minssd_l[LOCAL_MINSSDS]",
                     "if (threadIdx.x < BLOCK_W) for (int r = 0; r < ROWSperTHREAD; r++) minssd_s[MUL(r, BLOCK_W) + threadIdx.x] = 0;");
}

TEST(StereoSeedArrays, ExpertKernelUnfilledArraysReadZeros) {
  auto p = make_expert_gi_problem();
  const std::string decl = "int best[EX_XR]";
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "best[k] = min_ssd;"), decl, zero("best"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "bestd[k] = -1;"), decl, zero("bestd"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "qv[4 * i] = t4.x;"), decl, zero("qv"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "P[0] = 0;"), "unsigned P[4 * EX_ROWS4 + 1]", zero("P"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "t4 = ((const int4*)vrow)[i];"), "int4 t4", zero("t4"));
}

TEST(StereoSeedArrays, SgmUnfilledArraysReadZeros) {
  auto p = make_sgm_gi_problem();
  const std::string decl = "unsigned padc[SGM_K / 2]";
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "padc[i] = (k >= D ? BIG : 0u) | (k + 1 >= D ? (BIG << 16) : 0u);"), decl, zero("padc"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "L[i] = padc[i];"), decl, zero("L"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "n[i] = t + cost[i] - mm;              // per half: C + t - m (no carries)"), decl, zero("n"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "c[j] = __popc(cl ^ src[staged_pos(i0 - j)]);"), decl, zero("c"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "cost[i] = c[2 * i] | (c[2 * i + 1] << 16);"), decl, zero("cost"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "win[j] = __ldg(row + x - dmin - cost_lane * SGM_K - j);"), decl, zero("win"));
}
#endif
