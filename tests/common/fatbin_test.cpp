// The fatbin reader (evk/fatbin.hpp) on fatbins nvcc makes here and on broken bytes, and what a GPU
// of each architecture would run of them.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "evk/fatbin.hpp"
#include "evk_testing.hpp"

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(Fatbin, ListsWhatNvccPutIn) {
#ifndef EVK_TEST_NVCC
  GTEST_SKIP() << "built without CUDA: no nvcc";
#else
  evk::testing::TempDir dir;
  std::ofstream(dir / "k.cu") << "__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n";
  const auto r = evk::testing::run(std::string(EVK_TEST_NVCC) + " -fatbin -gencode arch=compute_75,code=sm_75" +
                                   " -gencode arch=compute_86,code=sm_86 -gencode arch=compute_90,code=[sm_90,compute_90] -o " +
                                   (dir / "k.fatbin").string() + " " + (dir / "k.cu").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string bytes = slurp(dir / "k.fatbin");
  const auto e = evk::fatbin_entries(bytes.data(), bytes.size());
  EXPECT_EQ(evk::fatbin_summary(e), "sm_75 sm_86 sm_90 compute_90");
  EXPECT_EQ(e.size(), 4u);
  EXPECT_EQ(evk::fatbin_code_for(e, 75), "sm_75");
  EXPECT_EQ(evk::fatbin_code_for(e, 80), "");  // 7.5's machine code does not run on 8.0, nor 9.0's PTX
  EXPECT_EQ(evk::fatbin_code_for(e, 89), "sm_86");  // 8.6's runs on 8.9 (one major version)
  EXPECT_EQ(evk::fatbin_code_for(e, 90), "sm_90");
  EXPECT_EQ(evk::fatbin_code_for(e, 120), "compute_90 (PTX, compiled by the driver)");
  EXPECT_EQ(evk::fatbin_code_for(e, 70), "");
#endif
}

TEST(Fatbin, BrokenBytesAreRefused) {
  const std::string text = "not a fatbin at all, just some words";
  EXPECT_THROW(evk::fatbin_entries(text.data(), text.size()), std::invalid_argument);
  // a container header that promises more than there is
  std::string cut(16, '\0');
  const unsigned char head[] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 0x00, 0x10, 0, 0, 0, 0, 0, 0};
  cut.assign(reinterpret_cast<const char*>(head), sizeof head);
  EXPECT_THROW(evk::fatbin_entries(cut.data(), cut.size()), std::invalid_argument);
}
