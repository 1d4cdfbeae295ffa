// GPU side of the barracuda seeds' value-initialised per-thread memory (docs/GI.md, "Reads before
// writes"; CPU side: BarracudaSeedArrays.*; the BWT cache: BarracudaGpu.ReadingTheUnloadedCacheIsPenalised):
// a candidate that never fills an array reads zeros and is penalised by the problem's own
// evaluation, instead of reading undefined values that may pass.
#include <gtest/gtest.h>

#include "gi/aln_gi_problem.hpp"
#include "gi/gi_problem.hpp"
#include "evk_testing.hpp"
#include "seed_arrays.hpp"

namespace bc = evk::barracuda_exact;


// direct_sequence off buffers the read in qbuf; with its load deleted every base reads 0 (A): wrong (k, l).
TEST(BarracudaGpu, UnloadedQueryBufferIsPenalised) {
  EVK_REQUIRE_GPU();
  auto p = bc::make_gi_problem();
  EXPECT_EQ(evk::testing::seed_candidate_check(*p, "direct_sequence=false", 3).penalty, 0);
  const evk::gi::Check c =
      evk::testing::seed_candidate_check(*p, "direct_sequence=false " + evk::testing::seed_delete(*p, "qbuf[w] = seq_load(seqs, seqs_tex, base + w * 32);"), 3);
  EXPECT_GT(c.penalty, 0) << c.summary;
}

// The inexact kernel with the read never unpacked (seq all 0) or the occurrence counts of k never
// computed (cnt_k: zeros, then the previous entry's): wrong intervals, penalised.
TEST(BarracudaInexactGpu, UnfilledReadAndCountsArePenalised) {
  EVK_REQUIRE_GPU();
  auto p = bc::make_inexact_gi_problem();
  for (const std::string stmt : {"seq[j] = static_cast<u8>(c > 3 ? 4 : 3 - c);", "occ4(bwt, bc, k - 1, cnt_k);"}) {
    const evk::gi::Check c = evk::testing::seed_candidate_check(*p, evk::testing::seed_delete(*p, stmt), 0);
    EXPECT_GT(c.penalty, 0) << stmt << ": " << c.summary;
  }
}
