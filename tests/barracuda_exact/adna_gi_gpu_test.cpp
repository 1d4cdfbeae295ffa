// The inexact GI problem's `adna` class on the GPU: the original kernel is exact on its training and
// hold-out cases (penalty 0 against the CPU search of the same reads), a broken kernel is penalised.
#include <gtest/gtest.h>
#include <cuda_runtime.h>

#include <cstdio>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk_testing.hpp"
#include "gi/aln_gi_problem.hpp"

namespace bc = evk::barracuda_exact;

TEST(BarracudaAdnaGiGpu, OriginalIsExactOnTrainingAndHoldOutAndABrokenKernelIsNot) {
  EVK_REQUIRE_GPU();
  auto p = bc::make_inexact_gi_problem();
  int major = 0, minor = 0;
  EVK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  EVK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  const evk::gi::Config def = p->default_config();
  auto compile = [&](const std::string& source) {
    evk::NvrtcRequest req;
    req.source = source;
    req.options = p->compile_options(def);
    req.cc = major * 10 + minor;
    const evk::NvrtcResult r = evk::CompileCache().compile(req);
    EXPECT_TRUE(r.ok) << r.log;
    return evk::CudaLibrary(r.cubin.data());
  };
  evk::CudaLibrary original = compile(p->kernel_source());
  std::string broken = p->kernel_source();
  const std::string from = "e.n_mm + is_mm, e.n_gapo";
  ASSERT_NE(broken.find(from), std::string::npos);
  broken.replace(broken.find(from), from.size(), "e.n_mm + 2 * is_mm, e.n_gapo");
  evk::CudaLibrary wrong = compile(broken);
  for (const bool holdout : {false, true}) {
    auto ev = p->make_evaluation(1, holdout, "adna");
    std::printf("  %s\n", ev->describe().c_str());
    ev->poison(nullptr);
    ev->launch(original.kernel(p->kernel_entry().c_str()), def, nullptr);
    const evk::gi::Check ok = ev->check(nullptr);
    std::printf("  original: %s\n", ok.summary.c_str());
    EXPECT_EQ(ok.penalty, 0) << ok.summary;
    ev->poison(nullptr);
    ev->launch(wrong.kernel(p->kernel_entry().c_str()), def, nullptr);
    const evk::gi::Check bad = ev->check(nullptr);
    EXPECT_GT(bad.penalty, 1000) << bad.summary;
  }
}
