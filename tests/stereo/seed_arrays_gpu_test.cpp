// GPU side of the seeds' value-initialised per-thread memory (docs/GI.md, "Reads before writes";
// CPU side: StereoSeedArrays.*): a candidate that never fills an array reads the seed's zeros and is
// penalised by the problem's own evaluation, instead of reading undefined values that may pass.
#include <gtest/gtest.h>

#include "evk_testing.hpp"
#include "gi/gi_problem.hpp"
#include "gi/sgm_gi_problem.hpp"
#include "seed_arrays.hpp"

using namespace evk::stereo;
using evk::testing::seed_candidate_check;


// Stam's kernel with its rows in per-thread memory (LOCAL: pixel_l/minssd_l; SHARED: the thread's
// slots, zeroed by the group's first threads): correct as configured, and with the rows' best SSD
// never set to min_ssd it reads 0, no SSD is below that, every pixel stays -1: penalised.
TEST(StereoGpuGi, UnfilledRowsArePenalised) {
  EVK_REQUIRE_GPU();
  auto p = make_gi_problem();
  const std::string d = evk::testing::seed_delete(*p, "MINSSD(row) = min_ssd;");
  for (const std::string store : {"LOCAL", "SHARED"}) {
    const std::string cfg = "STORE_disparityPixel=" + store + " STORE_disparityMinSSD=" + store + " ";
    const evk::gi::Check ok = seed_candidate_check(*p, cfg, 3);
    EXPECT_EQ(ok.penalty, 0) << store << ": " << ok.summary;
    const evk::gi::Check c = seed_candidate_check(*p, cfg + d, 3);
    EXPECT_GT(c.penalty, 0) << store << ": " << c.summary;
    EXPECT_GT(c.bad_fraction, 0.5) << store << ": " << c.summary;
  }
}

// The expert kernel with best[] never set to min_ssd: zeros, no SSD below them, every pixel -1.
TEST(StereoExpertGpuGi, UnfilledBestIsPenalised) {
  EVK_REQUIRE_GPU();
  auto p = make_expert_gi_problem();
  const evk::gi::Check c = seed_candidate_check(*p, evk::testing::seed_delete(*p, "best[k] = min_ssd;"), 0);
  EXPECT_GT(c.penalty, 0) << c.summary;
  EXPECT_GT(c.bad_fraction, 0.5) << c.summary;
}

// SGM with the step's new path costs (n) or the staged costs (cost) never computed: zeros, wrong volumes.
TEST(StereoSgmGpuGi, UnfilledArraysArePenalised) {
  EVK_REQUIRE_GPU();
  auto p = make_sgm_gi_problem();
  for (const std::string stmt : {"n[i] = t + cost[i] - mm;              // per half: C + t - m (no carries)",
                                 "cost[i] = c[2 * i] | (c[2 * i + 1] << 16);"}) {
    const evk::gi::Check c = seed_candidate_check(*p, evk::testing::seed_delete(*p, stmt), 3);
    EXPECT_GT(c.penalty, 0) << stmt << ": " << c.summary;
  }
}
