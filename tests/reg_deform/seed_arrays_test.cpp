// reg_deform's GI seeds and reads before writes: the paper's tile kernel value-initialises its
// per-thread x weights (xBasis), so a candidate that skips their fill (the basis call deleted, or one
// of the constantBasis loads) reads zeros, not undefined values that may pass the check by luck
// (NVRTC's #549 refusal covers no array). The expert kernel has no per-thread array (its scalars all
// start with a value; its shared stages are written before the barriers that guard them). GPU side:
// RegGpu.UnfilledXBasisIsPenalised (reg_deform_gpu_tests).
#include <gtest/gtest.h>

#include "gi/gi_problem.hpp"
#include "seed_arrays.hpp"

namespace rd = evk::reg_deform;


TEST(RegSeedArrays, TileKernelInitialisesXBasis) {
  evk::testing::expect_value_initialised(rd::make_gi_problem()->kernel_source(), "reg_deform.cu", {{"float", "xBasis"}});
}

// The expert seed declares no per-thread array or struct without a value: every local of its region
// is a scalar or float4 set where it is declared.
TEST(RegSeedArrays, ExpertKernelDeclaresEveryLocalWithAValue) {
  const std::string src = rd::make_expert_gi_problem()->kernel_source();
  const std::string region = src.substr(src.find("//@gi begin"), src.find("//@gi end") - src.find("//@gi begin"));
  std::istringstream in(region);
  std::string l;
  int decls = 0;
  while (std::getline(in, l)) {
    const std::string t = evk::testing::seed_trim(l);
    for (const char* type : {"int ", "float ", "float4 ", "size_t ", "unsigned "})
      if (t.rfind(type, 0) == 0) {
        ++decls;
        EXPECT_NE(t.find('='), std::string::npos) << "declared without a value: " << t;
        EXPECT_EQ(t.find('['), std::string::npos) << "a per-thread array: give it `= {}`: " << t;
      }
  }
  EXPECT_GT(decls, 20);
}

#if defined(EVK_HAVE_CUDA)
TEST(RegSeedArrays, UnfilledXBasisReadsZeros) {
  auto p = rd::make_gi_problem();
  const std::string zero = "memset(&xBasis, 0, sizeof(xBasis));";
  // default configuration: the B-spline weights never computed
  evk::testing::expect_reads_zeros(*p, evk::testing::seed_delete(*p, "getBSplineBasisValues(relative, xBasis);"), "float xBasis[4]", zero);
  // constantBasis: the first weight never loaded
  evk::testing::expect_reads_zeros(
      *p, "c_controlPointVoxelSpacing=true constantBasis=true BasisA=true " + evk::testing::seed_delete(*p, "xBasis[0] = getBasis(basisTexture, 0, XREM);"),
      "float xBasis[4]", zero);
}
#endif
