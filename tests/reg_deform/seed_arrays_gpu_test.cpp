// GPU side of the tile seed's value-initialised x weights (docs/GI.md, "Reads before writes"; CPU
// side: RegSeedArrays.*): a candidate that never fills xBasis reads zeros and is penalised by the
// problem's own evaluation, instead of reading undefined values that may pass.
#include <gtest/gtest.h>

#include "evk_testing.hpp"
#include "gi/gi_problem.hpp"
#include "seed_arrays.hpp"

namespace rd = evk::reg_deform;

TEST(RegGpu, UnfilledXBasisIsPenalised) {
  EVK_REQUIRE_GPU();
  rd::GiProblemOptions po;
  po.case_size = 80;
  auto p = rd::make_gi_problem(po);
  auto line = [&](const std::string& text) {
    std::istringstream in(p->kernel_source());
    std::string l;
    for (int n = 1; std::getline(in, l); ++n)
      if (evk::testing::seed_trim(l) == text) return "<_K_" + std::to_string(n) + ">";
    ADD_FAILURE() << "no statement '" << text << "'";
    return std::string();
  };
  // constantBasis: the first x weight never loaded (0 instead of W0): every x-sum wrong
  const std::string cb = "c_controlPointVoxelSpacing=true constantBasis=true BasisA=true ";
  EXPECT_EQ(evk::testing::seed_candidate_check(*p, cb, 1).penalty, 0.0);
  const evk::gi::Check c = evk::testing::seed_candidate_check(*p, cb + line("xBasis[0] = getBasis(basisTexture, 0, XREM);"), 1);
  EXPECT_GT(c.penalty, 0.0) << c.summary;
  // default configuration: the B-spline x weights never computed (all four 0): positions 0
  const evk::gi::Check d = evk::testing::seed_candidate_check(*p, line("getBSplineBasisValues(relative, xBasis);"), 1);
  EXPECT_GT(d.penalty, 0.0) << d.summary;
}
